"""Per-question (cluster) summaries and clustered standard errors of means and ratios.

A question's repeats are not independent samples (they share the question's true score): the report
averages them per question first and takes the spread across questions, or, for a ratio of sums
such as the token-weighted accept length, linearises it and sums the residuals per question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

FloatArray = np.ndarray


def ragged_to_matrix(by_question: Mapping[str, Sequence[float]]) -> FloatArray:
    """Per-question value lists as an ``(n_questions, max_repeats)`` matrix padded with NaN.

    Args:
        by_question: question id -> the values of its repeats (at least one each).

    Returns:
        The matrix, rows in sorted question-id order.
    """
    if not by_question:
        raise ValueError("no questions: need at least one question with at least one value")
    width = max(len(v) for v in by_question.values())
    out = np.full((len(by_question), max(width, 1)), np.nan)
    for row, key in enumerate(sorted(by_question)):
        values = list(by_question[key])
        if not values:
            raise ValueError(f"question {key!r} has no values")
        out[row, : len(values)] = values
    return out


def question_means(matrix: FloatArray) -> FloatArray:
    """Mean over repeats (last axis) of a NaN-padded ``(..., n, k)`` matrix."""
    means: FloatArray = np.nanmean(np.asarray(matrix, dtype=float), axis=-1)
    return means


def within_question_se(matrix: FloatArray) -> float | None:
    """Standard error of the mean of per-question means from the repeat-to-repeat spread only.

    ``sqrt(sum_i s_i^2 / k_i) / n`` with ``s_i^2`` the sample variance of question i's repeats
    (questions with a single repeat get the pooled variance of the others): the uncertainty of
    the score on *this* question set (NeMo Evaluator's sample-level CI). It leaves out
    question-sampling variance, which cancels against a reference measured on the same questions.
    None when no question has two repeats.
    """
    data = np.asarray(matrix, dtype=float)
    k = np.sum(~np.isnan(data), axis=-1)
    data, k = data[k > 0], k[k > 0]
    usable = k >= 2
    if not usable.any():
        return None
    var = np.full(len(k), np.nan)
    var[usable] = np.nanvar(data[usable], axis=-1, ddof=1)
    var[~usable] = np.mean(var[usable])
    return float(np.sqrt(np.sum(var / k)) / len(k))


def log_ratio_se(
    numerators: Sequence[FloatArray], denominators: Sequence[FloatArray], clusters: Sequence[str]
) -> float | None:
    """Clustered SE of ``sum(log(sum num_j)) - sum(log(sum den_j))`` by the delta method.

    For one ratio pass one numerator and one denominator; for the paired accept-length ratio
    ``(C_B / V_B) / (C_A / V_A)`` pass ``[c_B, v_A]`` and ``[v_B, c_A]``. Each row's influence is
    ``sum_j num_j / NUM_j - sum_j den_j / DEN_j``; the influences sum to zero, so the variance is
    ``G / (G - 1) * sum_g (sum of influences in g)^2``.

    Args:
        numerators: arrays of per-row values whose totals are in the numerator.
        denominators: arrays of per-row values whose totals are in the denominator.
        clusters: the cluster (question id) of each row.

    Returns:
        The standard error of the log ratio, or None with fewer than two clusters.
    """
    rows = [np.asarray(a, dtype=float) for a in (*numerators, *denominators)]
    if any(r.sum() <= 0 for r in rows):
        raise ValueError("ratio totals must be positive")
    influence = sum(r / r.sum() for r in rows[: len(numerators)]) - sum(
        r / r.sum() for r in rows[len(numerators) :]
    )
    labels, index = np.unique(np.asarray(clusters), return_inverse=True)
    groups = len(labels)
    if groups < 2:
        return None
    sums = np.bincount(index, weights=np.asarray(influence, dtype=float), minlength=groups)
    return float(np.sqrt(groups / (groups - 1) * np.sum(sums**2)))
