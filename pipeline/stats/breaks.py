"""The broken-prompt check: questions the baseline gets right in most repeats, the candidate never.

The unit is the question, not the repeat: a question's repeats may be copies of one answer
(greedy decoding within a server start) or sticky, so a question the baseline answered right
8 times and the candidate wrong 8 times is one question that changed, not 8 observations (a
Fisher test pooling the repeats gave it p = 7.8e-5 and a clean candidate with sticky repeats was
NO-GO 99.8% of the time). The check counts the questions showing the pattern (``worse``: right
in most of the baseline's repeats, none of the candidate's) against those showing its mirror
(``better``: right in most of the candidate's, none of the baseline's), and tests with an exact
one-sided sign test whether ``worse`` is too many of the two.

Why it keeps its level whatever the within-question dependence: answers of different questions
are independent; on one question, with both sides' repeats drawn by the same mechanism (the same
dependence, accuracies ``p_b`` and ``p_c``), ``P(worse) = M(p_b) A(p_c)`` and
``P(better) = M(p_c) A(p_b)``, with ``M`` (most right) increasing and ``A`` (all wrong)
decreasing in the accuracy. Where no question is worse on the candidate (``p_c >= p_b``) a
question that shows one of the two patterns shows ``worse`` with probability at most 1/2, so
given how many show either, ``worse`` is at most Binomial(that many, 1/2). What it still
catches: ~10 broken questions with no mirror give ``p <= 2^-10``. When no question's repeats
vary on either side (copies throughout) the check is the accuracy check's McNemar discordance
over again and is not made (p 1): the accuracy check decides.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from pipeline.stats.outcomes import Outcomes, paired_masks, repeats_vary

FloatArray = np.ndarray


@dataclass(frozen=True)
class Broken:
    """The broken-prompt check (arrays over the leading axes).

    Attributes:
        p_question: ``(..., n)`` the check's p-value on the questions that show the pattern,
            1 on the others (a question is flagged when the check breaks).
        testable: ``(...)`` questions on which either pattern could show (some side right in
            most of its repeats, both sides answered).
        p_cell: ``(...)`` the exact sign test's p-value of ``worse`` against ``better``.
        repeats_vary: ``(...)`` whether any question's answers vary across its repeats (False:
            greedy-like copies; the check is then not made).
        worse: ``(...)`` questions right in most of the baseline's repeats, none of the
            candidate's.
        better: ``(...)`` the mirror.
    """

    p_question: FloatArray
    testable: FloatArray
    p_cell: FloatArray
    repeats_vary: FloatArray
    worse: FloatArray
    better: FloatArray

    def flagged(self, level: float) -> FloatArray:
        """``(..., n)`` questions that break at ``level`` (showing the pattern; the check broke)."""
        flags: FloatArray = self.p_question <= level
        return flags


def broken_prompts(o: Outcomes, alpha: float) -> Broken:
    """Questions the baseline gets right in most repeats and the candidate never.

    ``alpha`` is kept for the callers' symmetry with the other checks (the sign test needs no
    count of testable questions). See the module docstring for why it holds its level.
    """
    del alpha
    base, cand = paired_masks(o)
    nb, nc = np.isfinite(base).sum(-1), np.isfinite(cand).sum(-1)
    xb, xc = np.nansum(base, -1), np.nansum(cand, -1)
    vary = repeats_vary(base, cand)
    both = (nb > 0) & (nc > 0)
    worse = both & (2 * xb > nb) & (xc == 0)
    better = both & (2 * xc > nc) & (xb == 0)
    n_worse, n_better = worse.sum(-1), better.sum(-1)
    # P(Binomial(worse + better, 1/2) >= worse); 1 when nothing shows the pattern.
    p_sign = np.where(n_worse > 0, stats.binom.sf(n_worse - 1, n_worse + n_better, 0.5), 1.0)
    p_cell = np.where(vary, p_sign, 1.0)
    p_question = np.where(worse, p_cell[..., None], 1.0)
    testable = (both & ((2 * xb > nb) | (2 * xc > nc))).sum(-1).astype(float)
    return Broken(p_question, testable, p_cell, vary, n_worse.astype(float),
                  n_better.astype(float))  # fmt: skip
