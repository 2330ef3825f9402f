"""Messages of grad_magic.bounds: why a card left something out to stay small."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    # NB: a reason for core's `note.fix_withheld` ("A fixed copy was found but not offered: {reason}. ...")
    "bounds.fix_too_long": {
        "en": "a cell it changes has a line over {line} characters or is over {total} characters in all, "
              "too long to carry on a card",
        "zh": "它要修改的单元格中有超过 {line} 个字符的行，或总长超过 {total} 个字符，太长，无法放进卡片",
    },
}
