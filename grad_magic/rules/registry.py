"""The one registry of rules.

A rule is a function `(ctx: RuleContext) -> Diagnosis | None`, registered under a stable slug with
`@rule("slug")`. It opens with a guard and returns None when it does not apply.

Order (documented, and the order of `RULES`): error rules are tried in registration order when the
cell raised -- the first match wins, and the generic diagnosis answers when none matches. Warning rules
(silent bugs) are all tried after every run, failed or not. A rule that crashes becomes a one-line
internal-error note on the diagnosis shown; the user's own error is always still shown.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from ..model import ERROR, WARNING, Diagnosis

if TYPE_CHECKING:
    from .context import RuleContext

RuleFn = Callable[["RuleContext"], Optional[Diagnosis]]


@dataclass(frozen=True)
class Rule:
    slug: str
    severity: str
    fn: RuleFn
    summary: str  # the first line of the rule's docstring
    matches: Tuple[str, ...] = ()  # what it keys on, in words: torch's messages (variants), or the silent sign
    fix: str = ""  # the fix it proposes, in words; "" when it never proposes one


RULES: Dict[str, Rule] = {}


def rule(slug: str, *, severity: str = ERROR, matches: Tuple[str, ...] = (),
         fix: str = "") -> Callable[[RuleFn], RuleFn]:
    """Register a rule under `slug`. A duplicate slug is a bug and fails at import.

    `matches` and `fix` describe the rule for people (the README's table of kinds is made from them).
    """
    assert severity in (ERROR, WARNING), severity

    def register(fn: RuleFn) -> RuleFn:
        if slug in RULES:
            raise ValueError(f"grad_magic: two rules claim the slug {slug!r}")
        summary = next(iter((fn.__doc__ or "").strip().splitlines()), "")
        RULES[slug] = Rule(slug, severity, fn, summary, tuple(matches), fix)
        return fn

    return register


def rules_of(severity: str) -> List[Rule]:
    return [r for r in RULES.values() if r.severity == severity]
