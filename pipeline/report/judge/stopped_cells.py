"""How the report reads a candidate its sequential looks stopped: as the looks decided it.

The anytime design (``statistic: eprocess``) is decided by ``pipeline.stats.anytime`` on the
cell's pairs, the function its looks stopped on; the group-sequential one (``null`` /
``observed``, older cells) through its stagewise p-values (``pipeline.stats.sequential_pvalues``).
Either way NO-GO's alpha is split between the mean test and the broken check as the cell's design
says (``nogo_split_of``).
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.report.judge.pairing import Paired
from pipeline.report.load.tolerance import EvalTolerance
from pipeline.results.result_types import EvalSummary
from pipeline.stats.anytime import anytime_evidence, broken_p
from pipeline.stats.nogo_split import nogo_shares, on_family_scale
from pipeline.stats.sequential import SequentialDesign
from pipeline.stats.sequential_pvalues import bonferroni_over_looks, increment

Look = tuple[SequentialDesign, int] | None


def sequential_look(summary: EvalSummary) -> Look:
    """The design and look a sequentially stopped candidate stopped at, else None.

    Only a candidate that ran looks (``role: candidate``) is read through its look
    (``pipeline.stats.sequential_pvalues``); a baseline or a cell that ran the fixed design is
    read at alpha.

    Raises:
        ValueError: the ``sequential`` block is malformed (the cell is then an ERROR).
    """
    seq = summary.checked_sequential()
    if seq is None or seq.role != "candidate":
        return None
    design = SequentialDesign(**seq.design)
    look = seq.look
    # An anytime design may have been extended past its planned looks.
    last = math.inf if design.statistic == "eprocess" else design.n_looks
    if isinstance(look, bool) or not isinstance(look, int) or not 1 <= look <= last:
        raise ValueError(f"sequential.look = {look!r} must be an integer in 1..{last}")
    return design, look


def look_words(look: Look) -> str:
    """The look a check was read at, in words ('' for a fixed-design cell)."""
    if look is None:
        return ""
    if look[0].statistic == "eprocess":
        plan = "; one look planned: greedy" if look[0].planned_looks == 1 else ""
        return f"anytime-valid look {look[1]} (rounds of {look[0].repeats_per_round}{plan})"
    return f"sequential look {look[1]} of {look[0].n_looks}"


def anytime_p(
    paired: Paired, margins: EvalTolerance, design: SequentialDesign
) -> tuple[float, float]:
    """GO's and NO-GO's anytime p-values (question-level e-values): what the looks stopped on."""
    ev = anytime_evidence(paired.outcomes, margins.max_drop, design.alpha, design.schedule,
                          margins.max_absent_questions)  # fmt: skip
    return float(ev.p_go), float(ev.p_nogo)


def nogo_split_of(look: Look) -> tuple[float, float]:
    """``(mean test's share, broken check's share)`` of the cell's NO-GO alpha, as it ran.

    A fixed-design cell: the current split (``pipeline.stats.nogo_split``); a sequential one:
    its stored design's (none in cells written before the split: each at the full level).
    """
    return nogo_shares() if look is None else nogo_shares(look[0].broken_share)


def broken_reading(paired: Paired, p_cell: float, alpha: float, look: Look) -> tuple[float, float]:
    """The level a question is flagged at and the check's p-value, as the cell's looks read it.

    The level is the broken check's share of the cell's NO-GO alpha (``nogo_split_of``); a look
    spends its part of that: the anytime design its schedule's share at look ``j``
    (``look_schedule``; a look that spends none: the largest share of the looks before it), the
    group-sequential one its spending increment (``sequential_pvalues``). The p-value is on the
    NO-GO family's alpha scale.
    """
    share = nogo_split_of(look)[1]
    if look is None:
        return alpha * share, float(on_family_scale(p_cell, share))
    design, j = look
    if design.statistic == "eprocess":
        p = broken_p(paired.outcomes, alpha, design.schedule)
        schedule = design.schedule
        spent = schedule.broken(j) or max(schedule.broken(i) for i in range(1, j + 1))
        return alpha / design.family * spent * share, float(on_family_scale(p, share))
    p = bonferroni_over_looks(design.side(False), j, np.asarray(p_cell))
    return increment(design.side(False), j) * share, float(on_family_scale(p, share))
