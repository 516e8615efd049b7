"""What a repeat is worth: the table of ``report.md`` / ``report.html`` of the accuracy checks.

Its numbers are the ones ``judge/dependence.py`` adds to each accuracy-vs-baseline check.
"""

from __future__ import annotations

import math

from pipeline.report.judge.check_kinds import ACCURACY_VS_BASELINE
from pipeline.report.judge.check_numbers import Unset
from pipeline.report.judge.drop_numbers import AccuracyVsBaselineNumbers, Dependence
from pipeline.report.judge.verdicts import Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.write.section import WHO, Section, who

TITLE = "What a repeat is worth (within-question dependence of the answers)"
INTRO = (
    "A question's repeats are independent only when the server samples afresh. Identical: "
    "questions whose answers agree in every repeat; ICC: the intraclass correlation of the "
    "answers (1: copies or near-certain questions); effective: the answers per side as "
    "independent answers (n k / (1 + (k - 1) ICC)). When no question's repeats vary (greedy "
    "decoding), more repeats add nothing: only more questions, or more server starts, can; "
    "the last column is the questions a clean candidate needs for GO with 80% power at these "
    "repeats. At temperature 0 the parity checks are the better lens once they land (README)."
)
HEADERS = (
    "eval|questions x repeats|identical|ICC [95%]|effective answers|repeats add|"
    "questions for the margin"
)


def _num(x: object, fmt: str) -> str:
    return format(x, fmt) if isinstance(x, float | int) and math.isfinite(x) else "n/a"


def _row(check: Check, n: AccuracyVsBaselineNumbers, dep: Dependence) -> list[str]:
    low, high = dep.icc_ci95
    icc = f"{_num(dep.icc, '.2f')} [{_num(low, '.2f')}, {_num(high, '.2f')}]"
    adds = "information" if dep.repeats_vary else "nothing (copies: greedy)"
    needed = dep.questions_needed
    share = dep.identical_share
    return [str(check.eval), f"{n.n_questions} x {n.repeats}",
            f"{100 * share:.0f}%" if math.isfinite(share) else "n/a",
            icc, f"{_num(dep.effective_answers, '.0f')} of {_num(dep.answers_per_side, '.0f')}",
            adds, "" if needed is None else str(needed)]  # fmt: skip


def dependence_section(rows: list[tuple[CellRecord, Check]]) -> Section:
    """The table of every accuracy-vs-baseline check that carries the numbers."""
    sec = Section(TITLE, (WHO + HEADERS).split("|"), intro=INTRO)
    for cell, check in rows:
        n = check.numbers
        if check.kind != ACCURACY_VS_BASELINE or not isinstance(n, AccuracyVsBaselineNumbers):
            continue
        if not isinstance(n.dependence, Unset):
            sec.rows.append([*who(cell), *_row(check, n, n.dependence)])
    return sec
