"""Non-inferiority with a margin: GO / NO-GO / INCONCLUSIVE from one-sided bounds on a drop.

``drop`` is always "how much worse the candidate is" (baseline minus candidate for accuracy), so a
positive drop is bad. With margin ``m`` and one-sided level ``alpha``
(NeMo Evaluator's gate, TOST one-sided):

- GO      when the upper (1 - alpha) bound of the drop is <= m   (rejects H0: drop >= m),
- NO-GO   when the lower (1 - alpha) bound of the drop is  > m   (rejects H0: drop <= m),
- INCONCLUSIVE otherwise.

The two p-values below are the tests behind the two bounds, so a multiplicity correction (Holm)
can be applied to them and the verdict read from the adjusted values. Student t with
``df = questions - 1`` is the usual small-sample form for a mean clustered by question.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

GO, NO_GO, INCONCLUSIVE = "GO", "NO-GO", "INCONCLUSIVE"

FloatArray = np.ndarray


@dataclass(frozen=True)
class MarginTest:
    """One-sided bounds and p-values of a drop against a margin (arrays broadcast together).

    Attributes:
        drop: estimated drop (positive = the candidate is worse).
        se: its standard error.
        df: degrees of freedom of the t reference distribution.
        margin: the largest acceptable drop.
        alpha: one-sided level of ``lower`` / ``upper``.
        lower: lower one-sided (1 - alpha) bound of the drop.
        upper: upper one-sided (1 - alpha) bound of the drop.
        ci95_low: lower end of the two-sided 95% interval of the drop.
        ci95_high: upper end of the two-sided 95% interval of the drop.
        p_go: p-value of H0 "drop >= margin" (small: the drop is within the margin).
        p_nogo: p-value of H0 "drop <= margin" (small: the drop is beyond the margin).
    """

    drop: FloatArray
    se: FloatArray
    df: FloatArray
    margin: float
    alpha: float
    lower: FloatArray
    upper: FloatArray
    ci95_low: FloatArray
    ci95_high: FloatArray
    p_go: FloatArray
    p_nogo: FloatArray


def paired_drop(per_question_diffs: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Drop and its standard error from per-question mean differences (candidate - baseline).

    Each question counts once (its repeats averaged first), so the standard error across questions
    is the one clustered by question; with equal cluster sizes it equals
    ``sqrt(G / ((G - 1) N^2) * sum_g e_g^2)`` exactly.

    Args:
        per_question_diffs: array ``(..., n_questions)``; NaN marks a question without pairs.

    Returns:
        ``(drop, se, df)`` along the last axis; ``drop = -mean``, ``df = questions - 1``.
    """
    diffs = np.asarray(per_question_diffs, dtype=float)
    n = np.sum(~np.isnan(diffs), axis=-1)
    mean = np.nanmean(diffs, axis=-1)
    sd = np.nanstd(diffs, axis=-1, ddof=1)
    return -mean, sd / np.sqrt(n), (n - 1).astype(float)


def margin_test(
    drop: FloatArray | float,
    se: FloatArray | float,
    df: FloatArray | float,
    margin: float,
    alpha: float,
) -> MarginTest:
    """Bounds and p-values of ``drop`` against ``margin``.

    A zero standard error (every pair identical, e.g. deterministic kernels at temperature 0)
    makes the bounds equal to the estimate and the p-values 0 or 1. A non-finite standard error
    or ``df < 1`` gives NaN p-values (no verdict).

    Args:
        drop: estimated drop(s).
        se: standard error(s), >= 0.
        df: degrees of freedom (> 0).
        margin: largest acceptable drop (same unit as ``drop``).
        alpha: one-sided level, in (0, 0.5).

    Returns:
        A ``MarginTest``.
    """
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha={alpha} must be in (0, 0.5)")
    drop_a, se_a, df_a = (np.asarray(x, dtype=float) for x in (drop, se, df))
    q_one, q_two = stats.t.ppf(1 - alpha, df_a), stats.t.ppf(0.975, df_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (margin - drop_a) / se_a
    p_go = np.where(se_a > 0, stats.t.sf(z, df_a), np.where(drop_a <= margin, 0.0, 1.0))
    p_nogo = np.where(se_a > 0, stats.t.cdf(z, df_a), np.where(drop_a > margin, 0.0, 1.0))
    # A NaN or infinite SE, or no degrees of freedom (one question), is no evidence at all:
    # NaN p-values, which every reader takes as INCONCLUSIVE (NaN <= level is False).
    known = np.isfinite(se_a) & np.isfinite(drop_a) & (df_a >= 1)
    p_go, p_nogo = np.where(known, p_go, np.nan), np.where(known, p_nogo, np.nan)
    return MarginTest(
        drop=drop_a,
        se=se_a,
        df=df_a,
        margin=margin,
        alpha=alpha,
        lower=drop_a - q_one * se_a,
        upper=drop_a + q_one * se_a,
        ci95_low=drop_a - q_two * se_a,
        ci95_high=drop_a + q_two * se_a,
        p_go=p_go,
        p_nogo=p_nogo,
    )


def verdicts(
    p_go: FloatArray | float, p_nogo: FloatArray | float, level: FloatArray | float
) -> np.ndarray:
    """GO / NO-GO / INCONCLUSIVE from the two p-values at ``level`` (array of str)."""
    p_go_a, p_nogo_a = np.asarray(p_go, dtype=float), np.asarray(p_nogo, dtype=float)
    out = np.full(
        np.broadcast(p_go_a, p_nogo_a, np.asarray(level)).shape, INCONCLUSIVE, dtype=object
    )
    out[p_go_a <= level] = GO
    out[p_nogo_a <= level] = NO_GO
    return out


def verdict(test: MarginTest) -> str:
    """The verdict of a single (scalar) test at its own level."""
    return str(verdicts(test.p_go, test.p_nogo, test.alpha)[()])
