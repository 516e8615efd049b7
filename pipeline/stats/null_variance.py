"""The standard error of a drop with the answers' variance evaluated where the null holds.

The plain clustered SE is estimated at the observed drop. On questions that are nearly always
right (a 48-question retrieval eval near 0.96) most of the variance is binomial, and a
replication in which the candidate happened to lose few answers shows both a small drop and a
small SE: the Wald-type test rejects "drop >= margin" too often (6.3% for a nominal 5% at a
fixed 8 repeats). Non-inferiority tests of proportions evaluate the variance under the null
instead (Farrington-Manning, Miettinen-Nurminen); this is that idea for the clustered paired
design: the gap between the observed drop and the margin is moved, half on each side (the
candidate's accuracy down in proportion to its accuracy, the baseline's up in proportion to its
room, for GO's null; the reverse for NO-GO's), and each question's binomial variance
``p (1 - p) / k`` is re-evaluated there (``k = 1`` when the repeats are copies: greedy). The SE
only grows (never below the observed one), and hardly at all where the drop is already near the
margin or the questions are uncertain.
"""

from __future__ import annotations

import numpy as np

from pipeline.stats.outcomes import Outcomes, paired_masks, repeats_vary, row_mean

FloatArray = np.ndarray


def _toward(p: FloatArray, amount: FloatArray, weight: FloatArray, ok: FloatArray) -> FloatArray:
    # Move ``amount`` question-units in total, spread over the questions in proportion to weight.
    w = np.where(ok, weight, 0.0)
    total = np.maximum(np.sum(w, axis=-1, keepdims=True), 1e-12)
    moved: FloatArray = np.clip(p + amount[..., None] * w / total, 0.0, 1.0)
    return moved


def _var(p: FloatArray) -> FloatArray:
    var: FloatArray = p * (1 - p)
    return var


def null_se(
    o: Outcomes, se: FloatArray, drop: FloatArray, margin: FloatArray, go: bool
) -> FloatArray:
    """``se`` grown by the binomial variance the null (``drop == margin``) would add.

    Args:
        o: the outcomes (answered pairs as ``paired_masks`` makes them).
        se: the observed standard error of the drop.
        drop: the observed drop (positive = the candidate is worse).
        margin: the null's drop (GO's: the margin for GO; NO-GO's: the one for NO-GO).
        go: True for GO's null (the candidate worse than observed), False for NO-GO's.
    """
    base, cand = paired_masks(o)
    # Copies (no question's repeats vary on either side: greedy) are one answer per question.
    vary = repeats_vary(base, cand)[..., None]
    kb, kc = (np.where(vary, np.isfinite(s).sum(-1), 1) for s in (base, cand))
    with np.errstate(invalid="ignore", divide="ignore"):
        pb, pc = row_mean(base), row_mean(cand)
        ok = np.isfinite(pb) & np.isfinite(pc)
        pb, pc = np.where(ok, pb, 0.0), np.where(ok, pc, 0.0)
        n = np.sum(ok, axis=-1)
        gap = np.maximum(margin - drop if go else drop - margin, 0.0)
        half = np.where(np.isfinite(gap), gap, 0.0) * n / 2
        sign = 1.0 if go else -1.0
        pc0 = _toward(pc, -sign * half, pc if go else 1 - pc, ok)
        pb0 = _toward(pb, sign * half, 1 - pb if go else pb, ok)
        grown = (_var(pc0) - _var(pc)) / np.maximum(kc, 1) + (_var(pb0) - _var(pb)) / np.maximum(
            kb, 1
        )
        extra = np.sum(np.where(ok, grown, 0.0), axis=-1) / np.maximum(n, 1) ** 2
    floored: FloatArray = np.sqrt(se**2 + np.maximum(extra, 0.0))
    return floored
