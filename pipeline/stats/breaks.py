"""The broken-prompt check: questions the baseline gets right in most repeats, the candidate never.

Per question, a one-sided Fisher exact test, with Tarone's version of Bonferroni across questions
(only questions whose margins could ever reach significance count). Fisher's test takes a
question's repeats as independent draws. Under greedy decoding (temperature 0) they are copies of
one answer: when no question varies across its repeats on either side, each side's question is
one observation (its first answer), so a question that flips from right to wrong is a
difference of one answer, not of ``k`` (a net-zero change no longer reads as broken prompts).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special

from pipeline.stats.outcomes import Outcomes, paired_masks

FloatArray = np.ndarray


@dataclass(frozen=True)
class Broken:
    """The broken-prompt check (arrays over the leading axes).

    Attributes:
        p_question: ``(..., n)`` one-sided Fisher p-value per question (1 where not tested).
        testable: ``(...)`` Tarone's count of questions that could reach significance.
        p_cell: ``(...)`` ``min p_question * testable`` (capped at 1): the check's p-value.
        repeats_vary: ``(...)`` whether any question's answers vary across its repeats (False:
            greedy-like copies, each question counted once).
    """

    p_question: FloatArray
    testable: FloatArray
    p_cell: FloatArray
    repeats_vary: FloatArray

    def flagged(self, level: float) -> FloatArray:
        """``(..., n)`` questions that break at ``level`` (Bonferroni over ``testable``)."""
        flags: FloatArray = self.p_question * np.maximum(self.testable, 1)[..., None] <= level
        return flags


def _log_choose(n: FloatArray, k: FloatArray) -> FloatArray:
    logs: FloatArray = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return logs


def repeats_vary(*sides: FloatArray) -> FloatArray:
    """``(...)``: whether any question of any side has answers that differ across repeats."""
    with np.errstate(invalid="ignore"):
        spread = [np.nanmax(s, -1) > np.nanmin(s, -1) for s in sides]
    vary: FloatArray = np.any(np.logical_or.reduce(spread), axis=-1)
    return vary


def broken_prompts(o: Outcomes, alpha: float) -> Broken:
    """Questions the baseline gets right in most repeats and the candidate never.

    Fisher's exact test of "the candidate is no worse on this question", one-sided, conditional
    on the question's total right answers ``K``: with the candidate right in none of its ``nc``
    answers, ``p = C(nb, K) / C(nb + nc, K)``. Only questions with ``nb / 2 < K <= nb`` can show
    this pattern; Tarone's count of them (those whose smallest possible p is <= alpha / count)
    is the Bonferroni factor. Without any variation across repeats each side counts once.
    """
    base, cand = paired_masks(o)
    nb, nc = np.isfinite(base).sum(-1), np.isfinite(cand).sum(-1)
    xb, xc = np.nansum(base, -1), np.nansum(cand, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows with no answer at all
        vary = repeats_vary(base, cand)[..., None]
    # Copies of one answer: one observation per side (the answers are all equal).
    nb, nc = np.where(vary, nb, np.minimum(nb, 1)), np.where(vary, nc, np.minimum(nc, 1))
    xb, xc = np.where(vary, xb, np.minimum(xb, 1)), np.where(vary, xc, np.minimum(xc, 1))
    k = xb + xc
    possible = (nc > 0) & (2 * k > nb) & (k <= nb)
    p_min = np.where(possible, np.exp(_log_choose(nb, k) - _log_choose(nb + nc, k)), 1.0)
    p_question = np.where(possible & (xc == 0), p_min, 1.0)
    testable = _tarone(p_min, alpha)
    p_cell = np.minimum(1.0, p_question.min(axis=-1) * np.maximum(testable, 1))
    return Broken(p_question, testable.astype(float), p_cell, vary[..., 0])


def _tarone(p_min: FloatArray, alpha: float) -> FloatArray:
    # Smallest m >= 1 with #{p_min <= alpha / m} <= m.
    ordered = np.sort(p_min, axis=-1)
    n = ordered.shape[-1]
    out = np.full(ordered.shape[:-1], n, dtype=int)
    done = np.zeros(ordered.shape[:-1], dtype=bool)
    for m in range(1, n + 1):
        count = np.sum(ordered <= alpha / m, axis=-1)
        hit = ~done & (count <= m)
        out[hit], done = m, done | hit
        if done.all():
            break
    return out
