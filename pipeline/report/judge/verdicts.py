"""Checks, their verdicts, Holm's correction across cells, and the exit code.

Exit codes (what CI gates on): 0 when every check is GO / PASS (or says nothing to check),
1 when any is NO-GO / FAIL, 2 when none fails but something is undecided, failed or missing.
The report's own code (``gate.gate_exit_code``) is 2, not 0, when no check judged anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from pipeline.report.judge.check_kinds import (
    BIN_KINDS,
    BROKEN_PROMPTS,
    REFERENCE_KINDS,
    STAT_KINDS,
    CheckKind,
)
from pipeline.report.judge.check_numbers import NO_NUMBERS, UNSET, Adjusted, BrokenNumbers, Numbers
from pipeline.report.judge.describe import spread_note
from pipeline.report.judge.drop_numbers import (
    AcceptVsReferenceNumbers,
    AccuracyVsBaselineNumbers,
    AccuracyVsReferenceNumbers,
    DropNumbers,
)
from pipeline.report.load.cells import CellRecord
from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO, margin_test
from pipeline.stats.release import family_pvalues, family_verdicts

__all__ = ["GO", "INCONCLUSIVE", "NO_GO", "Check", "exit_code", "finalize", "overall", "worst"]
from pipeline.stats.power import VarianceComponents, repeats_to_decide

PASS, FAIL = "PASS", "FAIL"
OK, MISSING, FAILED, UNSUPPORTED, PLANNED = "OK", "MISSING", "FAILED", "UNSUPPORTED", "PLANNED"
MISCONFIGURED = "MISCONFIGURED"  # the server ran something else than the cell: not judged
NO_BASELINE, NO_REFERENCE, ERROR, INFO = "NO BASELINE", "NO REFERENCE", "ERROR", "INFO"

FAILING = (NO_GO, FAIL)
UNDECIDED = (MISCONFIGURED, FAILED, MISSING, ERROR, NO_BASELINE, PLANNED, INCONCLUSIVE)
# Worst first: how a cell's overall verdict is picked from its checks. A missing reference is
# not a verdict against a cell: a GO cell without one stays GO (with a note, ``verdict_note``).
SEVERITY = (NO_GO, FAIL, *UNDECIDED, UNSUPPORTED, GO, NO_REFERENCE, PASS, OK, INFO)


@dataclass
class Check:
    """One test case: a cell (and eval) under one check, with its numbers.

    Statistical checks carry the two p-values, the nominal level they are read at (``alpha``,
    or a sequential look's level) and what ``extra repeats`` needs; their verdict is set by
    ``finalize`` after the multiplicity correction.
    """

    cell_id: str
    cell_label: str
    eval: str | None
    kind: CheckKind
    verdict: str
    message: str = ""
    numbers: Numbers = NO_NUMBERS
    adjusted: Adjusted | None = None  # set by ``finalize``
    p_go: float | None = None
    p_nogo: float | None = None
    level: float | None = None
    components: VarianceComponents | None = None
    distance: float | None = None

    def title(self, baseline: str) -> str:
        """``eval: check`` as shown in tables and JUnit."""
        name = self.kind.title(baseline)
        return f"{self.eval}: {name}" if self.eval else name


def worst(found: Iterable[str]) -> str:
    """The most severe verdict (an empty list is OK)."""
    ranked = sorted(found, key=lambda v: SEVERITY.index(v) if v in SEVERITY else 0)
    return ranked[0] if ranked else OK


def verdict_note(found: Iterable[Check]) -> str:
    """What a cell's one-word verdict leaves out (empty when nothing)."""
    checks = list(found)
    verdict = worst(c.verdict for c in checks)
    if verdict == GO and any(c.verdict == NO_REFERENCE for c in checks):
        return "no reference value: judged against the baseline only"
    return ""


def exit_code(checks: Iterable[Check]) -> int:
    """0 all GO / PASS, 1 any NO-GO / FAIL, 2 anything undecided, failed or missing."""
    found = {c.verdict for c in checks}
    if found & set(FAILING):
        return 1
    return 2 if found & set(UNDECIDED) else 0


def overall(code: int) -> str:
    """The report's one-word verdict for an exit code."""
    return {0: GO, 1: NO_GO}.get(code, "UNDECIDED")


def finalize(checks: list[Check], alpha: float, power: float, multiplicity: str) -> None:
    """Set the verdicts of statistical checks, per kind across cells.

    GO is read per cell at its own level (the release is GO only if every cell is GO, an
    intersection-union test: no correction needed); NO-GO alarms are Holm-corrected across the
    cells of a kind (``multiplicity: holm``), except a sequential candidate whose design split
    NO-GO's alpha over its sweep's family before the first look (``nogo_family``): it is read
    with that Bonferroni split, which is the look's own decision. A check read at a sequential
    look's level ``l`` enters with its p-values scaled by ``alpha / l``. The rule is
    ``pipeline.stats.release``'s, the one the simulation checks.
    """
    for kind in (*STAT_KINDS, BROKEN_PROMPTS, *BIN_KINDS):
        family = [c for c in checks if c.kind == kind and c.p_go is not None]
        if not family:
            continue
        scale = np.array([alpha / (c.level or alpha) for c in family])
        split = np.array([nogo_family(c.numbers) for c in family])
        p_go, p_nogo = family_pvalues(
            np.array([c.p_go for c in family], dtype=float),
            np.array([c.p_nogo for c in family], dtype=float),
            scale,
            multiplicity == "holm",
            split,
        )
        found = family_verdicts(p_go, p_nogo, alpha)
        for check, a, b, v in zip(family, p_go, p_nogo, found, strict=True):
            check.adjusted = Adjusted(float(a), float(b), len(family))
            check.verdict = _name(kind, str(v))
            if v == INCONCLUSIVE:
                _undecided(check, alpha, power)


def _undecided(check: Check, alpha: float, power: float) -> None:
    n = check.numbers
    if (
        isinstance(n, (AccuracyVsReferenceNumbers, AcceptVsReferenceNumbers))
        and isinstance(n.stopped_early, str)
        and n.stopped_early
    ):
        check.verdict = INFO  # see versus_reference.stopped_early
        return
    # A NO-GO faces Holm's alpha / m at worst; a GO faces alpha: size extra repeats on GO's.
    if check.components is not None and check.distance is not None and check.adjusted:
        needed = repeats_to_decide(check.distance, check.components, alpha, power)
        extra = None if needed is None else max(1, needed - repeats_of(n))
        check.adjusted = replace(check.adjusted, extra_repeats=extra)
    if isinstance(n, AccuracyVsBaselineNumbers) and not n.undecided_because:
        sized = check.adjusted.extra_repeats if check.adjusted else UNSET
        note = copies_note(n) or spread_note(n, sized, check.eval or "EVAL")
        check.numbers = replace(n, undecided_because=note)


def nogo_family(numbers: Numbers) -> int:
    """The family a sequential candidate's NO-GO alpha was split over (1: none)."""
    if isinstance(numbers, (AccuracyVsBaselineNumbers, BrokenNumbers)):
        return 1 if numbers.nogo_family is UNSET else int(numbers.nogo_family or 1)
    return 1


def repeats_of(numbers: Numbers) -> int:
    """The repeats a check's numbers were computed from (0 when they do not say)."""
    if isinstance(numbers, (AccuracyVsBaselineNumbers, AccuracyVsReferenceNumbers)):
        return int(numbers.repeats or 0)
    return 0


def _name(kind: CheckKind, verdict: str) -> str:
    if kind == BROKEN_PROMPTS:  # an alarm only: nothing flagged is a pass, not a proof
        return FAIL if verdict == NO_GO else PASS
    if kind in REFERENCE_KINDS:
        return {GO: PASS, NO_GO: FAIL}.get(verdict, verdict)
    if kind in BIN_KINDS and verdict == INCONCLUSIVE:  # an alarm by bin; the aggregate decides GO
        return INFO
    return verdict


def make_check(
    cell: CellRecord,
    eval_name: str | None,
    kind: CheckKind,
    verdict: str,
    message: str,
    numbers: Numbers = NO_NUMBERS,
) -> Check:
    """A check of ``cell`` with its numbers."""
    return Check(cell.id, cell.label, eval_name, kind, verdict, message, numbers)


@dataclass(frozen=True)
class Estimate:
    """A drop (positive = worse), its standard error and degrees of freedom."""

    drop: float
    se: float
    df: float


def stat_check(
    cell: CellRecord,
    eval_name: str,
    kind: CheckKind,
    est: Estimate,
    margin: float,
    alpha: float,
    level: float,
    numbers: Callable[..., DropNumbers],
) -> Check:
    """A statistical check: bounds and p-values now, the verdict in ``finalize``.

    ``numbers`` makes the kind's numbers from the drop's (a ``partial`` of its type).
    """
    test = margin_test(est.drop, est.se, est.df, margin, alpha)
    ci95 = [float(test.ci95_low), float(test.ci95_high)]
    made = numbers(
        drop=est.drop, se=est.se, df=est.df, margin=margin, alpha=alpha, level=level, ci95=ci95,
        lower=float(test.lower), upper=float(test.upper),
    )  # fmt: skip
    check = make_check(cell, eval_name, kind, INCONCLUSIVE, "", made)
    check.p_go, check.p_nogo, check.level = float(test.p_go), float(test.p_nogo), level
    check.distance = abs(est.drop - margin)
    return check


def copies_note(numbers: AccuracyVsBaselineNumbers) -> str:
    """Why more repeats cannot decide a check whose repeats are copies ('' otherwise).

    Only when nothing else explains the undecided verdict: no question's answers vary across
    its repeats on either side (greedy decoding), so power comes from questions or starts.
    """
    repeats, dep = numbers.repeats, numbers.dependence
    if dep is UNSET or dep.repeats_vary is not False or repeats < 2 or numbers.undecided_because:
        return ""
    needed = dep.questions_needed
    more = f"about {needed} questions" if needed else "more questions"
    return (
        f"repeats are copies (no question's answers vary across its {repeats} repeats on either "
        f"side: greedy decoding), so more repeats cannot decide it; {more} can (what a clean "
        f"candidate needs to be GO at this margin: the 'questions for the margin' column), or "
        f"more server starts"
    )
