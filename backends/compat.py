"""Pre-flight: what SGLang will do with a cell, before any server starts.

The rules are data (``backends.compat_rules``). They are applied to the cell *after* the variant's
routing (``backends.variants``), so they check the flags ``plan_launch`` really passes.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.compat_rules import RULES, message_fields
from backends.resolved import CellSpec, ResolvedCell, resolve_cell
from backends.rule import ADJUST, CRASH, FATAL, NO_EFFECT, REJECT, Rule
from backends.version_ranges import in_range

OK = "ok"
# A cell's outcome is its most severe finding: argument errors stop SGLang before runtime crashes.
SEVERITY = {OK: 0, NO_EFFECT: 1, ADJUST: 2, CRASH: 3, REJECT: 4}


@dataclass(frozen=True)
class Finding:
    """One rule that applies to a cell."""

    rule: str
    outcome: str  # reject | adjust | no-effect | crash-at-start
    message: str  # SGLang's own message ("" where SGLang says nothing)
    detail: str  # our one-line explanation

    @property
    def text(self) -> str:
        """What to tell a user: SGLang's message, or where SGLang logs nothing, our detail.

        ``message`` stays SGLang's own text (``read_wheels.py`` finds it in the wheel), so a
        silent rule's warning line or refusal reads the detail instead of an empty string.
        """
        return self.message or self.detail


def applies(rule: Rule, cell: ResolvedCell) -> bool:
    """Whether a rule holds for the cell's SGLang version and its condition is met."""
    return in_range(cell.version, rule.since, rule.until) and rule.when(cell)


def _finding(rule: Rule, cell: ResolvedCell) -> Finding:
    return Finding(
        rule=rule.id,
        outcome=rule.outcome,
        message=rule.message.format(**message_fields(cell)),
        detail=rule.detail,
    )


def evaluate(cell: ResolvedCell) -> tuple[ResolvedCell, list[Finding]]:
    """Apply every rule in order; adjust rules change the cell the later rules see.

    Args:
        cell: The routed cell.

    Returns:
        The cell as SGLang will run it, and the findings in rule order.
    """
    findings = []
    for rule in RULES:
        if not applies(rule, cell):
            continue
        findings.append(_finding(rule, cell))
        if rule.adjust is not None:
            cell = rule.adjust(cell)
    return cell, findings


def outcome_of(findings: list[Finding]) -> str:
    """The cell's overall outcome: ``ok`` or the most severe finding's outcome."""
    return max((f.outcome for f in findings), key=SEVERITY.__getitem__, default=OK)


def is_runnable(findings: list[Finding]) -> bool:
    """False when a finding says the server will not start (reject or crash-at-start)."""
    return not any(f.outcome in FATAL for f in findings)


def preflight(cell: CellSpec) -> list[Finding]:
    """Which compatibility rules apply to a cell on its GPU and SGLang version.

    Args:
        cell: The cell as configured (its ``options`` default to no ``--max-running-requests``:
            the reset-to-48 rule applies with speculation).

    Returns:
        The findings in the order SGLang meets them; empty when the cell runs as asked.
    """
    return evaluate(resolve_cell(cell))[1]
