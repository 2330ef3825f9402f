"""Messages of the card, the generic diagnosis and %gradfix."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # -- the generic diagnosis (an error no rule knows) --
    "generic.title": {
        "en": "{error_type} in your cell",
        "zh": "单元格中出现 {error_type}",
    },
    "generic.summary": {
        "en": "grad_magic cannot explain this error yet. Here is what it saw.",
        "zh": "grad_magic 暂时无法解释这个错误。以下是它观察到的情况。",
    },
    "generic.what": {
        "en": "{error_type}: {error_message}",
        "zh": "{error_type}：{error_message}",
    },
    "generic.why": {
        "en": "The tensors named on the failing line are listed below with their device, dtype, shape "
              "and requires_grad: mismatches between them are the usual cause.",
        "zh": "下方列出了出错行中各张量的设备、数据类型、形状和 requires_grad：它们之间的不一致通常就是原因。",
    },
    "generic.why_no_tensors": {
        "en": "No tensor is named on the failing line.",
        "zh": "出错行中没有出现张量变量。",
    },
    "samples.configured": {
        "en": "`{dataset}` makes each sample with the {attribute} it was given on line {lineno}: `{code}`.",
        "zh": "`{dataset}` 用第 {lineno} 行传给它的 {attribute} 生成每个样本：`{code}`。",
    },
    "where.line": {
        "en": "line {lineno} of the cell",
        "zh": "单元格第 {lineno} 行",
    },
    "where.elsewhere": {
        "en": "{place}, line {lineno}",
        "zh": "{place} 第 {lineno} 行",
    },
    "where.elsewhere_in": {
        "en": "{place}, line {lineno}, in {function}",
        "zh": "{place} 第 {lineno} 行（{function} 中）",
    },
    "where.via": {
        "en": "{where} (called from line {lineno} of this cell)",
        "zh": "{where}（由本单元格第 {lineno} 行调用）",
    },
    "where.unknown": {
        "en": "outside the cell's own lines (inside a library call)",
        "zh": "不在单元格自身的代码行中（在库函数内部）",
    },
    # -- joining words: `a`, `b` and `c` (catalog.listing) --
    "list.last": {"en": "{head} and {last}", "zh": "{head} 和 {last}"},
    "list.comma": {"en": ", ", "zh": "、"},
    "note.internal_error": {
        "en": "internal error in grad_magic rule {slug!r}: {error}",
        "zh": "grad_magic 规则 {slug!r} 内部出错：{error}",
    },
    "note.compiled_region": {
        "en": "Part of this run was code torch.compile compiled: grad_magic does not track inside it, so a line "
              "that ran there is not named here. To see it, run the model or function once without torch.compile.",
        "zh": "本次运行中有一部分是 torch.compile 编译过的代码：grad_magic 不跟踪其内部，所以在那里执行的代码行"
              "不会在此列出。要看到它，请不经 torch.compile 再运行一次该模型或函数。",
    },
    "note.fix_withheld": {
        "en": "A fixed copy was found but not offered: {reason}. Change the lines above by hand.",
        "zh": "找到了修复版本，但没有提供：{reason}。请按上面的说明手动修改。",
    },
    "note.fix_elsewhere": {
        "en": "The card above changes the same line another way: apply its fix first, then run the cell again.",
        "zh": "上面的卡片以另一种方式修改了同一行：请先应用它的修复，再重新运行本单元格。",
    },
    # -- the precision guard's reasons (guard.py) --
    "guard.inconsistent": {
        "en": "its text is not its edits applied to the code that ran",
        "zh": "它的文本与对运行过的代码所做的修改不一致",
    },
    "guard.does_not_compile": {"en": "the fixed code would not compile", "zh": "修复后的代码无法编译"},
    "guard.unnamed_cell": {
        "en": "it changes a cell this card does not point to",
        "zh": "它修改了本卡片没有指出的单元格",
    },
    "guard.outside_evidence": {
        "en": "it edits code outside the functions where the problem was found",
        "zh": "它修改了发现问题的函数之外的代码",
    },
    # -- card labels --
    "card.what": {"en": "What happened", "zh": "发生了什么"},
    "card.why": {"en": "Why", "zh": "原因"},
    "card.where": {"en": "Where", "zh": "位置"},
    "card.tensors": {"en": "Tensors involved", "zh": "相关张量"},
    "card.fix": {"en": "Fix", "zh": "修复"},
    "card.fixed_cell": {"en": "Fixed cell", "zh": "修复后的单元格"},
    "card.fixed_copy": {"en": "Fixed copy of {place}", "zh": "{place} 的修复版本"},
    "card.this_cell": {"en": "this cell", "zh": "本单元格"},
    "card.fixed_cell_long": {"en": "Fixed cell ({lines} lines)", "zh": "修复后的单元格（{lines} 行）"},
    "card.no_fix": {
        "en": "No automatic fix: the cause could not be pinned down safely.",
        "zh": "没有自动修复：无法可靠地确定原因。",
    },
    "card.original_error": {"en": "Original error", "zh": "原始错误"},
    "card.versions": {"en": "Versions", "zh": "版本"},
    "card.details": {"en": "Details", "zh": "详情"},
    "card.details_hint": {
        "en": "Why, the tensors, the fixed cell and the original error: %gradcheck details",
        "zh": "原因、相关张量、修复后的单元格和原始错误：%gradcheck details",
    },
    "card.trace": {"en": "torch's report of the forward call", "zh": "torch 对前向调用的报告"},
    "card.gradfix_hint": {
        "en": "Run %gradfix to put the fixed cell in the next input.",
        "zh": "运行 %gradfix 可将修复后的单元格放入下一个输入。",
    },
    "card.notes": {"en": "Notes", "zh": "备注"},
    "card.insert": {"en": "Insert fixed cell below", "zh": "在下方插入修复后的单元格"},
    "card.replace": {"en": "Replace this cell", "zh": "替换此单元格"},
    "card.insert_copy": {"en": "Insert fixed copy of {place} below", "zh": "在下方插入 {place} 的修复版本"},
    "card.copy": {"en": "Copy fixed cell", "zh": "复制修复后的单元格"},
    "card.copied": {
        "en": "Copied — paste it into a new cell.",
        "zh": "已复制——请粘贴到新的单元格中。",
    },
    "card.inserted": {"en": "Inserted below (not run).", "zh": "已插入到下方（未运行）。"},
    "card.replaced": {"en": "Replaced (undo restores it).", "zh": "已替换（撤销即可恢复）。"},
    "card.copy_failed": {
        "en": "Copy failed — select the fixed cell's text and copy it by hand.",
        "zh": "复制失败——请手动选中修复后的代码并复制。",
    },
    "card.inserted_copy_then": {
        "en": "Inserted below (not run): run it, then {cells}, then re-run this cell.",
        "zh": "已插入到下方（未运行）：先运行它，再运行 {cells}，然后重新运行本单元格。",
    },
    "card.inserted_copy": {
        "en": "Inserted below (not run): run it, then re-run this cell.",
        "zh": "已插入到下方（未运行）：先运行它，再重新运行本单元格。",
    },
    # the JupyterLab / Notebook 7 buttons of a fix of an earlier cell ({place}: `In [3]`, filled in there)
    "card.apply": {"en": "Apply to {place}", "zh": "应用到 {place}"},
    "card.applied": {
        "en": "Applied to {place} (not run; undo restores it).",
        "zh": "已应用到 {place}（未运行；撤销即可恢复）。",
    },
    "card.already_applied": {"en": "{place} holds the fix already.", "zh": "{place} 已经包含此修复。"},
    "card.changed": {
        "en": "{place} has changed since it ran: nothing was replaced. Copy the fix and apply it by hand.",
        "zh": "{place} 在运行后已被修改：没有替换任何内容。请复制修复并手动应用。",
    },
    "card.gone": {
        "en": "No cell of this notebook ran as {place} any more (re-run or deleted): nothing was replaced. "
              "Copy the fix and apply it by hand.",
        "zh": "本笔记本中已没有作为 {place} 运行的单元格（已重新运行或已删除）：没有替换任何内容。请复制修复并手动应用。",
    },
    "card.rerun": {"en": "Re-run {place} and this cell", "zh": "重新运行 {place} 和本单元格"},
    "card.rerunning": {"en": "Running {place}, then this cell…", "zh": "正在运行 {place}，然后运行本单元格…"},
    "card.rerun_done": {"en": "Ran {place} and this cell.", "zh": "已运行 {place} 和本单元格。"},
    "card.rerun_failed": {
        "en": "An error stopped the run: see the outputs of {place} and this cell.",
        "zh": "运行因错误而停止：请查看 {place} 和本单元格的输出。",
    },
    "card.rerun_gone": {
        "en": "{place} no longer holds the fix: nothing was run.",
        "zh": "{place} 已不再包含此修复：没有运行任何内容。",
    },
    "card.insert_reload": {"en": "Insert the cell that reloads {place} below", "zh": "在下方插入重新加载 {place} 的单元格"},
    "card.inserted_reload": {
        "en": "Inserted below (not run): change {place} as the diff shows, then run it.",
        "zh": "已插入到下方（未运行）：请先按差异修改 {place}，再运行它。",
    },
    "card.file_hint": {
        "en": "Change {place} itself (the diff shows how); %gradfix then gives the cell that reloads it.",
        "zh": "请直接修改 {place}（差异显示了改法）；之后 %gradfix 会给出重新加载它的单元格。",
    },
    "card.unarmed": {
        "en": "This card was saved in a notebook you have not trusted: it offers no buttons. "
              "Run the cell for a live card.",
        "zh": "这张卡片保存在一个你尚未信任的笔记本中，因此不提供按钮。运行该单元格即可得到可用的卡片。",
    },
    "card.column.name": {"en": "name", "zh": "名称"},
    "card.column.shape": {"en": "shape", "zh": "形状"},
    "card.column.dtype": {"en": "dtype", "zh": "类型"},
    "card.column.device": {"en": "device", "zh": "设备"},
    "card.column.requires_grad": {"en": "requires_grad", "zh": "requires_grad"},
    "card.column.version": {"en": "version", "zh": "版本号"},
    "card.severity.error": {"en": "error", "zh": "错误"},
    "card.severity.warning": {"en": "warning", "zh": "警告"},
    # -- %gradfix --
    "gradfix.none": {
        "en": "No fixed cell to insert: the last %%gradcheck run proposed none.",
        "zh": "没有可插入的修复单元格：上一次 %%gradcheck 运行没有给出修复。",
    },
    "gradfix.out_of_range": {
        "en": "No fixed cell {index}: the last fix has {count} (`%gradfix 1` ... `%gradfix {count}`).",
        "zh": "没有第 {index} 个修复单元格：上一个修复共有 {count} 个（`%gradfix 1` ... `%gradfix {count}`）。",
    },
    "gradfix.usage": {
        "en": "`%gradfix {line}`: give the number of a fixed cell (`%gradfix 2`), or nothing for the first.",
        "zh": "`%gradfix {line}`：请给出修复单元格的编号（`%gradfix 2`），不写则为第一个。",
    },
    "gradfix.inserted": {
        "en": "The fixed cell is in the next input ({description}).",
        "zh": "修复后的单元格已放入下一个输入（{description}）。",
    },
    "gradfix.which": {
        "en": "This is the fixed copy of {place} (cell {index} of {count} to change): run it, then re-run the "
              "failing cell.",
        "zh": "这是 {place} 的修复版本（需要修改的第 {index} 个单元格，共 {count} 个）：先运行它，再重新运行出错的单元格。",
    },
    "gradfix.reload": {
        "en": "{place} is a file: change it as the card's diff shows (below), then run this cell, which reloads "
              "it.{then}",
        "zh": "{place} 是一个文件：请按卡片中的差异修改它（见下方），然后运行此单元格来重新加载它。{then}",
    },
    "gradfix.reload_then": {
        "en": " Then run {cells} again (made with what it defines), then the failing cell.",
        "zh": "接着重新运行 {cells}（其中用到了它的定义），再运行出错的单元格。",
    },
    "gradfix.reload_failing": {
        "en": " Then re-run the failing cell.",
        "zh": "然后重新运行出错的单元格。",
    },
    "gradfix.restart": {
        "en": "{place} is a file no module of this kernel was loaded from: change it as the card's diff shows "
              "(below), restart the kernel, and run the notebook again.",
        "zh": "{place} 是一个文件，但本内核中没有从它加载的模块：请按卡片中的差异修改它（见下方），重启内核，再重新运行笔记本。",
    },
    "gradfix.next": {
        "en": "Run %gradfix {index} for the fixed copy of {place}.",
        "zh": "运行 %gradfix {index} 可取得 {place} 的修复版本。",
    },
    "gradfix.printed": {
        "en": "This prompt cannot be pre-filled; the fixed cell ({description}) is below, to copy:",
        "zh": "此提示符无法预先填入；修复后的单元格（{description}）如下，可复制：",
    },
}

