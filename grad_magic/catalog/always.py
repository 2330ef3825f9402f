"""Messages of the always-on watch (`%gradcheck on` / `off` / status)."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "always.on": {
        "en": "grad_magic is watching every cell (no anomaly detection: near plain speed). A cell marked "
              "%%gradcheck still runs in full mode. `%gradcheck off` stops.",
        "zh": "grad_magic 正在监视之后的每个单元格（不开启异常检测：速度接近普通运行）。标有 %%gradcheck "
              "的单元格仍以完整模式运行。`%gradcheck off` 可关闭。",
    },
    "always.on_quiet": {
        "en": "grad_magic is watching every cell, with cards for errors only (--quiet). `%gradcheck off` stops.",
        "zh": "grad_magic 正在监视之后的每个单元格，只为错误显示卡片（--quiet）。`%gradcheck off` 可关闭。",
    },
    "always.off": {
        "en": "grad_magic stopped watching cells (cells watched: {cells}; cards shown: {cards}). %%gradcheck on a cell "
              "still works.",
        "zh": "grad_magic 已停止监视单元格（共监视 {cells} 个，显示了 {cards} 张卡片）。在单元格上使用 "
              "%%gradcheck 仍然有效。",
    },
    "always.status_on": {
        "en": "grad_magic is watching every cell (cells watched so far: {cells}; cards shown: {cards}). `%gradcheck off` stops.",
        "zh": "grad_magic 正在监视每个单元格（已监视 {cells} 个，显示了 {cards} 张卡片）。`%gradcheck off` "
              "可关闭。",
    },
    "always.status_off": {
        "en": "grad_magic is not watching cells: `%gradcheck on` watches every following cell, `%%gradcheck` "
              "one cell.",
        "zh": "grad_magic 当前没有监视单元格：`%gradcheck on` 监视之后的每个单元格，`%%gradcheck` 只监视"
              "一个单元格。",
    },
    "always.thread_note": {
        "en": "Raised in thread `{thread}`, which {cell} started: the cell running now did not raise it.",
        "zh": "此错误发生在线程 `{thread}` 中，该线程由 {cell} 启动；并非当前正在运行的单元格引发。",
    },
    "always.no_cards": {
        "en": "The last run showed no card.",
        "zh": "上一次运行没有显示卡片。",
    },
    "always.usage": {
        "en": "%gradcheck {line}: as a line magic it takes `on`, `on --quiet`, `off` or `details` (nothing: "
              "whether it is on). To check one cell, put %%gradcheck (two %) on its first line.",
        "zh": "%gradcheck {line}：作为行魔法命令，它只接受 `on`、`on --quiet`、`off` 或 `details`（不带参数："
              "查看是否开启）。要检查单个单元格，请在单元格第一行写 %%gradcheck（两个 %）。",
    },
}
