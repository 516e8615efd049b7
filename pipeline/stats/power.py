"""How many repeats would decide a comparison (Miller's sample size with resampling).

With ``n`` questions and ``K`` repeats, the per-question mean difference has variance
``omega^2 + sigma_w^2 / K``: ``omega^2`` is the spread of the true per-question differences across
questions (repeats cannot shrink it) and ``sigma_w^2`` the repeat-to-repeat variance of one pair.
So ``SE(K) = sqrt((omega^2 + sigma_w^2 / K) / n)``. A verdict is likely (probability ``power``)
when the distance between the drop and the margin is at least ``(z_{1-alpha} + z_power) * SE``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class VarianceComponents:
    """Variance components of paired per-repeat differences.

    Attributes:
        within: repeat-to-repeat variance of one pair's difference (``sigma_w^2``).
        between: variance of the true per-question differences (``omega^2``), floored at 0.
        n_questions: questions with at least one pair.
    """

    within: float
    between: float
    n_questions: int


def variance_components(diffs: np.ndarray) -> VarianceComponents:
    """Estimate ``sigma_w^2`` and ``omega^2`` from a NaN-padded ``(n_questions, k)`` matrix.

    ``sigma_w^2`` is the pooled within-question variance (questions with two or more repeats);
    ``omega^2 = Var(question means) - mean(sigma_w^2 / k_i)`` (method of moments, floored at 0).
    With a single repeat everywhere ``sigma_w^2`` is not identifiable and all the variance is
    treated as repeat-to-repeat (the optimistic reading; say so when you report it).
    """
    data = np.asarray(diffs, dtype=float)
    k = np.sum(~np.isnan(data), axis=-1)
    data, k = data[k > 0], k[k > 0]
    means = np.nanmean(data, axis=-1)
    total = float(np.var(means, ddof=1)) if len(means) > 1 else 0.0
    multi = k >= 2
    if not multi.any():
        return VarianceComponents(within=total, between=0.0, n_questions=len(means))
    within = float(np.mean(np.nanvar(data[multi], axis=-1, ddof=1)))
    between = max(0.0, total - float(np.mean(within / k)))
    return VarianceComponents(within=within, between=between, n_questions=len(means))


def se_at(components: VarianceComponents, repeats: float) -> float:
    """Projected standard error of the mean difference with ``repeats`` repeats per question."""
    return math.sqrt((components.between + components.within / repeats) / components.n_questions)


def detectable_distance(se: float, alpha: float, power: float) -> float:
    """Distance from the margin a true drop needs to be decided with probability ``power``."""
    return float((stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)) * se)


def repeats_to_decide(
    distance: float, components: VarianceComponents, alpha: float, power: float
) -> int | None:
    """Repeats per question that decide a drop ``distance`` away from the margin with ``power``.

    Args:
        distance: |true drop - margin| assumed (the observed one, for an INCONCLUSIVE cell).
        components: the variance components.
        alpha: one-sided level of the test.
        power: wanted probability of a decision.

    Returns:
        The number of repeats, or None when no number of repeats reaches it because the
        between-question part alone is too large (more questions are needed) or distance is 0.
    """
    z = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    target_var = components.n_questions * (abs(distance) / z) ** 2
    room = target_var - components.between
    if distance == 0 or room <= 0:
        return None
    # The sign-off rule's SE is at least 1 / (K n) (signoff.mean_check): identical pairs on
    # few questions need enough repeats for that floor alone to be decided.
    floor = math.ceil(z / (abs(distance) * max(components.n_questions, 1)) - 1e-9)
    if components.within <= 0:
        # No repeat-to-repeat variation (greedy copies): repeats add nothing (the SE floor
        # counts such a question once, signoff.mean_check), only more questions can.
        return 1 if floor <= 1 else None
    return max(1, floor, math.ceil(components.within / room))


def extra_repeats(
    distance: float, diffs: np.ndarray, current_repeats: int, alpha: float, power: float = 0.8
) -> int | None:
    """Repeats to add to an INCONCLUSIVE comparison so that it would likely be decided.

    Args:
        distance: observed |drop - margin|.
        diffs: the paired per-repeat differences, ``(n_questions, k)`` NaN-padded.
        current_repeats: repeats already run.
        alpha: the level the verdict is read at.
        power: wanted probability of a decision.

    Returns:
        At least 1, or None when repeats alone cannot decide it.
    """
    needed = repeats_to_decide(distance, variance_components(diffs), alpha, power)
    if needed is None:
        return None
    return max(1, needed - current_repeats)
