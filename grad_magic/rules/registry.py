"""The one registry of rules.

A rule is a function registered under a stable slug with `@rule("slug", ...)`; it returns a `Diagnosis`, or
None when it does not apply. An error rule says what it keys on as data, and the engine applies the guard:

    @rule("cuda-oom", raises=RuntimeError, parse=parse_oom)
    def cuda_oom(ctx: RuleContext, err: OomError) -> Optional[Diagnosis]: ...

`raises`: the exception types it explains (the engine skips the rule for any other); `parse`: torch's
message -> a frozen dataclass, or None when the message is not the rule's (then the rule is skipped). The
rule receives the parsed message; each parser runs at most once per diagnosis. A rule without `parse`
(warnings, and rules that key on the run rather than the message) is called as `fn(ctx)`.

Order (documented, and the order of `RULES`): error rules are tried in registration order when the
cell raised -- the first match wins, and the generic diagnosis answers when none matches. Warning rules
(silent bugs) are all tried after every run, failed or not. A rule that crashes becomes a one-line
internal-error note on the diagnosis shown; the user's own error is always still shown.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

from ..model import ERROR, WARNING, Diagnosis

RuleFn = Callable[..., Optional[Diagnosis]]  # (ctx) or (ctx, parsed message)
Parser = Callable[[str], Any]  # torch's message -> a frozen dataclass, or None
Raises = Union[Type[BaseException], Tuple[Type[BaseException], ...]]


@dataclass(frozen=True)
class Rule:
    slug: str
    severity: str
    fn: RuleFn
    summary: str  # the first line of the rule's docstring
    matches: Tuple[str, ...] = ()  # what it keys on, in words: torch's messages (variants), or the silent sign
    fix: str = ""  # the fix it proposes, in words; "" when it never proposes one
    raises: Raises = BaseException  # the exception types it explains
    parse: Optional[Parser] = None  # torch's message -> what the rule receives; None: the rule takes ctx only


RULES: Dict[str, Rule] = {}


def rule(slug: str, *, severity: str = ERROR, raises: Raises = BaseException, parse: Optional[Parser] = None,
         matches: Tuple[str, ...] = (), fix: str = "") -> Callable[[RuleFn], RuleFn]:
    """Register a rule under `slug`. A duplicate slug is a bug and fails at import.

    `raises` and `parse` guard an error rule (see above); `matches` and `fix` describe the rule for people
    (the README's table of kinds is made from them).
    """
    assert severity in (ERROR, WARNING), severity
    assert severity == ERROR or (parse is None and raises is BaseException), "a warning rule has no error to parse"

    def register(fn: RuleFn) -> RuleFn:
        if slug in RULES:
            raise ValueError(f"grad_magic: two rules claim the slug {slug!r}")
        summary = next(iter((fn.__doc__ or "").strip().splitlines()), "")
        RULES[slug] = Rule(slug, severity, fn, summary, tuple(matches), fix, raises, parse)
        return fn

    return register


def rules_of(severity: str) -> List[Rule]:
    return [r for r in RULES.values() if r.severity == severity]
