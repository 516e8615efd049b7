"""What a repeat is worth, per accuracy check: the numbers the check carries.

``dependence_numbers`` adds to an accuracy-vs-baseline check (``summary.json``'s ``numbers``)
the within-question dependence of both sides' answers (``pipeline.stats.dependence``): the share
of questions whose repeats all agree, the intraclass correlation with its 95% interval, the
answers and what they are worth as independent answers, whether repeats add anything, and the
questions the margin needs at these repeats. ``write/dependence_table.py`` is its table in
``report.md`` / ``report.html`` ("What a repeat is worth").
"""

from __future__ import annotations

import numpy as np

from pipeline.report.judge.drop_numbers import Dependence
from pipeline.report.judge.pairing import Paired
from pipeline.stats.dependence import (
    questions_for_identical_answers,
    questions_needed,
    within_question,
)
from pipeline.stats.outcomes import question_diffs


def dependence_numbers(paired: Paired, margin: float, alpha: float) -> Dependence:
    """The numbers an accuracy check carries about its answers' dependence."""
    dep = within_question(paired.outcomes.base, paired.outcomes.cand)
    diffs = question_diffs(paired.outcomes)
    needed = questions_needed(diffs, margin, alpha)
    if needed is None and np.isfinite(diffs).sum() >= 2 and np.nanmax(np.abs(diffs)) == 0:
        base = paired.outcomes.base
        needed = questions_for_identical_answers(float(np.nanmean(base)), margin, alpha)
    return Dependence(
        identical_share=dep.identical_share,
        icc=dep.icc,
        icc_ci95=[dep.icc_low, dep.icc_high],
        answers_per_side=dep.answers,
        effective_answers=dep.effective,
        repeats_vary=dep.repeats_vary,
        questions_needed=needed,
    )
