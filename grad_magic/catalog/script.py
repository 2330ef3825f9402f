"""Messages of `python -m grad_magic script.py` (grad_magic/script.py) and of its ranks (grad_magic/ranks.py)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "script.description": {
        "en": "Run a Python script as `python script.py args...` would, under grad_magic's checks: a card on "
              "stderr explains a PyTorch error or silent bug, after the traceback.",
        "zh": "像 `python script.py args...` 一样运行 Python 脚本，同时接受 grad_magic 的检查：在回溯信息之后，"
              "stderr 上的卡片解释 PyTorch 错误或无声的问题。",
    },
    "script.help_fast": {
        "en": "no anomaly detection (near plain speed); in-place, device and optimizer tracking stay on",
        "zh": "不开启异常检测（接近原速）；原地操作、设备和优化器的跟踪仍然开启",
    },
    "script.help_json": {
        "en": "also write each card as JSON into DIR (made if missing)",
        "zh": "同时把每张卡片以 JSON 写入 DIR（不存在则创建）",
    },
    "script.help_lang": {"en": "language of the cards", "zh": "卡片的语言"},
    "script.help_write": {
        "en": "change the script's files as the cards' diffs show (without it, nothing is written)",
        "zh": "按卡片中的差异修改脚本的文件（不加此选项则不写入任何文件）",
    },
    "script.help_quiet": {"en": "cards for errors only, not for warnings", "zh": "只为错误显示卡片，不为警告显示"},
    "script.help_script": {
        "en": "the script, then its own arguments", "zh": "脚本，后面是它自己的参数",
    },
    "script.not_written": {
        "en": "Not written: run again with `--write` to change {files} as shown.",
        "zh": "未写入：加上 `--write` 再运行一次，即可按上面的差异修改 {files}。",
    },
    "script.written": {
        "en": "Written: {files} changed as shown (`--write`).",
        "zh": "已写入：已按上面的差异修改 {files}（`--write`）。",
    },
    "script.changed_since": {
        "en": "Not written: {files} no longer held the text that ran, or another card changed it first.",
        "zh": "未写入：{files} 已不是运行时的内容，或已被另一张卡片先修改。",
    },
    "script.rank0_writes": {
        "en": "Not written here: with `--write`, rank 0 changes the files.",
        "zh": "此处未写入：使用 `--write` 时由进程 0 修改文件。",
    },
    "script.rank": {"en": "[rank {rank} of {world}]", "zh": "[进程 {rank}，共 {world} 个]"},
    "script.ranks": {"en": "[ranks {ranks} of {world}]", "zh": "[进程 {ranks}，共 {world} 个]"},
    "script.same_card": {
        "en": "[rank {rank}] the same card as above ({kind}).",
        "zh": "[进程 {rank}] 与上面的卡片相同（{kind}）。",
    },
}
