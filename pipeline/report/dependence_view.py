"""What a repeat is worth, per accuracy check: the numbers and the report's table.

``dependence_numbers`` adds to an accuracy-vs-baseline check (``summary.json``'s ``numbers``)
the within-question dependence of both sides' answers (``pipeline.stats.dependence``): the share
of questions whose repeats all agree, the intraclass correlation with its 95% interval, the
answers and what they are worth as independent answers, whether repeats add anything, and the
questions the margin needs at these repeats. ``dependence_section`` is the table of
``report.md`` / ``report.html`` ("What a repeat is worth").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pipeline.report.check_kinds import ACCURACY_VS_BASELINE
from pipeline.report.load import CellRecord
from pipeline.report.pairing import Paired
from pipeline.report.verdicts import Check
from pipeline.stats.dependence import (
    questions_for_identical_answers,
    questions_needed,
    within_question,
)
from pipeline.stats.outcomes import question_diffs

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


def dependence_numbers(paired: Paired, margin: float, alpha: float) -> dict[str, Any]:
    """The numbers an accuracy check carries about its answers' dependence."""
    dep = within_question(paired.outcomes.base, paired.outcomes.cand)
    diffs = question_diffs(paired.outcomes)
    needed = questions_needed(diffs, margin, alpha)
    if needed is None and np.isfinite(diffs).sum() >= 2 and np.nanmax(np.abs(diffs)) == 0:
        base = paired.outcomes.base
        needed = questions_for_identical_answers(float(np.nanmean(base)), margin, alpha)
    return {
        "identical_share": dep.identical_share,
        "icc": dep.icc,
        "icc_ci95": [dep.icc_low, dep.icc_high],
        "answers_per_side": dep.answers,
        "effective_answers": dep.effective,
        "repeats_vary": dep.repeats_vary,
        "questions_needed": needed,
    }


def _num(x: object, fmt: str) -> str:
    return format(x, fmt) if isinstance(x, float | int) and math.isfinite(x) else "n/a"


def _row(check: Check) -> list[str]:
    n = check.numbers
    low, high = n["icc_ci95"]
    icc = f"{_num(n['icc'], '.2f')} [{_num(low, '.2f')}, {_num(high, '.2f')}]"
    adds = "information" if n["repeats_vary"] else "nothing (copies: greedy)"
    needed = n["questions_needed"]
    return [str(check.eval), f"{n.get('n_questions', '')} x {n.get('repeats', '')}",
            f"{100 * n['identical_share']:.0f}%" if math.isfinite(n["identical_share"]) else "n/a",
            icc, f"{_num(n['effective_answers'], '.0f')} of {_num(n['answers_per_side'], '.0f')}",
            adds, "" if needed is None else str(needed)]  # fmt: skip


def dependence_section(rows: list[tuple[CellRecord, Check]]) -> Any:
    """The table of every accuracy-vs-baseline check that carries the numbers."""
    from pipeline.report.tables import WHO, Section, who

    sec = Section(TITLE, (WHO + HEADERS).split("|"), intro=INTRO)
    for cell, check in rows:
        if check.kind == ACCURACY_VS_BASELINE and "icc" in check.numbers:
            sec.rows.append([*who(cell), *_row(check)])
    return sec
