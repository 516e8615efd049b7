"""Both sides' outcomes on the baseline's questions, as the sign-off rule reads them.

Arrays whose last two axes are (question, repeat), so a report (one cell), a sequential look and
the simulation (thousands of replications at once) share the code.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

FloatArray = np.ndarray


@dataclass(frozen=True)
class Outcomes:
    """Both sides' outcomes on the baseline's questions.

    Attributes:
        base: ``(..., n, kb)`` 1.0 right / 0.0 wrong, NaN where no answer.
        cand: ``(..., n, kc)`` the same for the candidate (rows are the baseline's questions).
        cand_asked: ``(..., n)`` whether the candidate has any line for the question.
        by_repeat: columns are the same repeat indices on both sides (pair by repeat).
        cand_errored: ``(..., n, kc)`` the candidate sent the request and it errored (no answer);
            None: every NaN of ``cand`` on an asked question is one. A repeat not run yet (a
            sequential candidate's later rounds) is NaN but not errored.
    """

    base: FloatArray
    cand: FloatArray
    cand_asked: FloatArray
    by_repeat: bool = True
    cand_errored: FloatArray | None = None

    def lost(self) -> FloatArray:
        """``(..., n, k)`` pairs the baseline answered and the candidate's request errored on.

        These are the candidate's unanswered pairs beyond what the baseline also lost; empty
        (all False) when pairing by question.
        """
        if not self.by_repeat:
            return np.zeros(self.cand.shape, dtype=bool)
        errored = (
            np.isnan(self.cand) & np.asarray(self.cand_asked, dtype=bool)[..., None]
            if self.cand_errored is None
            else np.asarray(self.cand_errored, dtype=bool)
        )
        lost: FloatArray = errored & np.isfinite(self.base)
        return lost

    def imputed(self, value: float) -> Outcomes:
        """The same outcomes with the candidate's lost pairs (``lost``) answered ``value``."""
        cand = np.where(self.lost(), value, self.cand)
        return Outcomes(
            self.base, cand, self.cand_asked, self.by_repeat, np.zeros(cand.shape, bool)
        )


def paired_masks(o: Outcomes) -> tuple[FloatArray, FloatArray]:
    """The two sides with everything but answered pairs NaN (by repeat), else each side's own."""
    if not o.by_repeat:
        return o.base, o.cand
    both = np.isfinite(o.base) & np.isfinite(o.cand)
    return np.where(both, o.base, np.nan), np.where(both, o.cand, np.nan)


def row_mean(x: FloatArray) -> FloatArray:
    """Mean over the last axis of the finite values, NaN where there is none."""
    count = np.sum(np.isfinite(x), axis=-1)
    total = np.nansum(x, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def question_diffs(o: Outcomes) -> FloatArray:
    """``(..., n)`` candidate minus baseline per question, NaN where nothing is paired."""
    base, cand = paired_masks(o)
    diffs: FloatArray = row_mean(cand) - row_mean(base)  # NaN where either side has no answer
    return diffs


def repeats_vary(*sides: FloatArray) -> FloatArray:
    """``(...)``: whether any question of any side has answers that differ across repeats."""
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows with no answer at all
        spread = [np.nanmax(s, -1) > np.nanmin(s, -1) for s in sides]
    vary: FloatArray = np.any(np.logical_or.reduce(spread), axis=-1)
    return vary


def answers_per_question(o: Outcomes) -> FloatArray:
    """``(...)`` most answered pairs (by repeat) or candidate answers any question has, >= 1.

    1 where no question's answers vary across repeats on either side (greedy copies: a
    question's repeats are one answer, not ``k``).
    """
    base, cand = paired_masks(o)
    most: FloatArray = np.maximum(np.isfinite(cand).sum(-1).max(-1), 1)
    one: FloatArray = np.where(repeats_vary(base, cand), most, 1)
    return one
