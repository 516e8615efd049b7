"""What a repeat is worth: within-question dependence, effective answers, questions needed.

A question's repeats are independent draws only when the server samples afresh. Under greedy
decoding (temperature 0) they are copies within a server start; sampled answers can be sticky;
and on near-certain questions a repeat mostly confirms what the first said. One number covers
all three: the intraclass correlation (ICC) of the answers within a question, one-way ANOVA
(ICC(1), Shrout & Fleiss), with the F-based 95% interval. With ``k`` answers per question an
eval of ``n`` questions is worth ``n k / (1 + (k - 1) ICC)`` independent answers (the design
effect): ``n`` at ICC 1, ``n k`` at 0. The ICC does not tell copies from near-certain questions
(both answer alike every time); the share of questions whose repeats all agree, and whether any
question's repeats vary at all, say which it is: no variation anywhere is greedy copies, where
more repeats add nothing and only more questions (or more server starts) can.

The questions a margin needs: the sign-off's SE is ``s_d / sqrt(n)`` with ``s_d`` the spread of
the per-question differences at these repeats; a clean candidate is GO with probability
``power`` when ``margin >= (z_{1 - alpha} + z_power) s_d / sqrt(n)``. When the two sides answer
every question alike there is no spread, and the sign-off's own floor on the SE decides:
``questions_for_identical_answers`` finds the smallest question count at which that rule says GO.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

FloatArray = np.ndarray


@dataclass(frozen=True)
class WithinQuestion:
    """Dependence of the answers within a question, over both sides' answers.

    Attributes:
        identical_share: questions (with 2+ answers on a side) whose answers all agree.
        icc: intraclass correlation of the answers; NaN when nothing varies at all.
        icc_low: its 95% interval's lower end.
        icc_high: its upper end.
        answers: answers per side (questions x repeats answered, averaged over the two sides).
        effective: what they are worth in independent answers (``answers / design effect``).
        repeats_vary: whether any question's answers differ across its repeats.
    """

    identical_share: float
    icc: float
    icc_low: float
    icc_high: float
    answers: float
    effective: float
    repeats_vary: bool


def icc_one_way(rows: FloatArray, level: float = 0.95) -> tuple[float, float, float]:
    """``(icc, low, high)`` of a NaN-padded ``(groups, k)`` 0/1 matrix (groups with 2+ values).

    1 with a degenerate interval [1, 1] when every group's values agree and the groups differ;
    NaN when nothing varies at all.
    """
    data = np.asarray(rows, dtype=float)
    k = np.isfinite(data).sum(-1)
    data, k = data[k >= 2], k[k >= 2]
    if len(k) < 2:
        return math.nan, math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(data, -1)
    grand, total = float(np.nansum(data) / k.sum()), float(k.sum())
    df_b, df_w = len(k) - 1, total - len(k)
    ms_b = float(np.sum(k * (means - grand) ** 2)) / df_b
    ms_w = float(np.nansum((data - means[:, None]) ** 2)) / df_w
    k0 = (total - float(np.sum(k**2)) / total) / df_b  # unbalanced groups' mean size
    if ms_w == 0:
        return (1.0, 1.0, 1.0) if ms_b > 0 else (math.nan, math.nan, math.nan)
    f = ms_b / ms_w
    tail = (1 + level) / 2
    f_low, f_high = f / stats.f.ppf(tail, df_b, df_w), f * stats.f.ppf(tail, df_w, df_b)

    def icc(x: float) -> float:
        return (x - 1) / (x + k0 - 1)

    return icc(f), max(-1.0, icc(f_low)), min(1.0, icc(f_high))


def within_question(base: FloatArray, cand: FloatArray) -> WithinQuestion:
    """The dependence of both sides' answers (``(n, k)`` each, NaN where no answer)."""
    sides = [np.asarray(s, dtype=float) for s in (base, cand)]
    rows = np.concatenate(sides, axis=0) if sides[0].shape[1] == sides[1].shape[1] else None
    if rows is None:  # unequal widths: pad the narrower side with NaN
        width = max(s.shape[1] for s in sides)
        rows = np.concatenate([np.pad(s, ((0, 0), (0, width - s.shape[1])),
                                      constant_values=np.nan) for s in sides])  # fmt: skip
    counts = np.isfinite(rows).sum(-1)
    multi = rows[counts >= 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        agree = np.nanmax(multi, -1) == np.nanmin(multi, -1) if len(multi) else np.ones(0, bool)
    icc, low, high = icc_one_way(rows)
    answers = float(counts.sum()) / 2
    k = float(counts[counts > 0].mean()) if (counts > 0).any() else 1.0
    effect = 1 + (k - 1) * (icc if math.isfinite(icc) else 1.0)
    return WithinQuestion(float(agree.mean()) if len(agree) else math.nan, icc, low, high,
                          answers, answers / max(effect, 1.0), bool((~agree).any()))  # fmt: skip


def questions_needed(diffs: FloatArray, margin: float, alpha: float, power: float = 0.8,
                     ) -> int | None:  # fmt: skip
    """Questions a clean candidate needs for GO with probability ``power`` at these repeats.

    ``diffs``: the per-question differences (candidate minus baseline, mean over repeats);
    None when fewer than two or no spread (the SE floor then decides).
    """
    d = np.asarray(diffs, dtype=float)
    d = d[np.isfinite(d)]
    if len(d) < 2 or margin <= 0:
        return None
    spread = float(np.std(d, ddof=1))
    if spread == 0:
        return None
    z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    return math.ceil((z * spread / margin) ** 2)


def questions_for_identical_answers(accuracy: float, margin: float, alpha: float,
                                    limit: int = 1 << 17) -> int | None:  # fmt: skip
    """The fewest questions on which two sides that answer every question alike are GO.

    Decided by the sign-off's own check (``signoff.accuracy_evidence``: its SE floor and the SE
    grown to where GO's null holds) on one answer per question at ``accuracy``; repeats of
    copies count once there, so they do not change the answer. None beyond ``limit``.
    """
    from pipeline.stats.outcomes import Outcomes
    from pipeline.stats.signoff import accuracy_evidence

    def go(n: int) -> bool:
        right = np.zeros((n, 1))
        right[: round(min(max(accuracy, 0.0), 1.0) * n)] = 1.0
        ev = accuracy_evidence(Outcomes(right, right.copy(), np.ones(n, bool)), margin, alpha)
        return bool(float(ev.p_go) <= alpha)

    if margin <= 0 or not go(limit):
        return None
    low, high = 2, limit  # go(high) holds; bisect for the first n that is GO
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if go(mid) else (mid + 1, high)
    return low
