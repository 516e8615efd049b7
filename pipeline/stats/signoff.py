"""The one sign-off rule of a candidate against its baseline.

Shared by the report, the sequential stopping rule (``pipeline/sweeps/sequential_run.py``) and the
simulation that validates both.

Everything works on arrays whose last two axes are (question, repeat), so a report (one cell),
a sequential look and the simulation (thousands of replications at once) call the same code.

- **Answered pairs only.** A request that errored (``error_kind`` set) is not an answer: it is
  NaN here and left out of the pairing on both sides. A truncated answer is an answer (wrong).
- **Pairing.** When both sides use the same repeat indices (or one side's are a subset of the
  other's, as during a sequential run) pairs are (question, repeat) with both answered;
  otherwise per question, the candidate's mean over its answers minus the baseline's.
- **Missing answers.** A baseline question with no answered pair may hide a loss. The drop over
  the whole question set is ``(n_p drop_p + sum of the missing questions' losses) / n``; each
  loss lies between ``b_i - 1`` and ``b_i`` (``b_i`` the baseline's accuracy on it, when known),
  so GO is tested against the margin shifted by the worst case and NO-GO by the best case
  (``margin_go`` / ``margin_nogo``): a missing answer never makes a verdict easier.
- **Absent questions** (the candidate has no line at all for a question the baseline has):
  GO only when their share is at most the policy's ``max_absent_questions``; they are left out.
- **Non-finite or too few**: fewer than two paired questions or a non-finite standard error give
  NaN p-values, hence INCONCLUSIVE, never GO / NO-GO.
- **Broken prompts.** Per question, a one-sided Fisher exact test on the questions the baseline
  gets right in most repeats and the candidate in none, with Tarone's version of Bonferroni
  across questions (only questions whose margins could ever reach significance count).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from pipeline.stats.noninferiority import margin_test, paired_drop

FloatArray = np.ndarray


@dataclass(frozen=True)
class Outcomes:
    """Both sides' outcomes on the baseline's questions.

    Attributes:
        base: ``(..., n, kb)`` 1.0 right / 0.0 wrong, NaN where no answer.
        cand: ``(..., n, kc)`` the same for the candidate (rows are the baseline's questions).
        cand_asked: ``(..., n)`` whether the candidate has any line for the question.
        by_repeat: columns are the same repeat indices on both sides (pair by repeat).
    """

    base: FloatArray
    cand: FloatArray
    cand_asked: FloatArray
    by_repeat: bool = True


def paired_masks(o: Outcomes) -> tuple[FloatArray, FloatArray]:
    """The two sides with everything but answered pairs NaN (by repeat), else each side's own."""
    if not o.by_repeat:
        return o.base, o.cand
    both = np.isfinite(o.base) & np.isfinite(o.cand)
    return np.where(both, o.base, np.nan), np.where(both, o.cand, np.nan)


def _row_mean(x: FloatArray) -> FloatArray:
    count = np.sum(np.isfinite(x), axis=-1)
    total = np.nansum(x, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def question_diffs(o: Outcomes) -> FloatArray:
    """``(..., n)`` candidate minus baseline per question, NaN where nothing is paired."""
    base, cand = paired_masks(o)
    b, c = _row_mean(base), _row_mean(cand)
    return c - b  # NaN where either side has no answer


@dataclass(frozen=True)
class Evidence:
    """The mean-difference check of one or many comparisons (arrays over the leading axes)."""

    drop: FloatArray
    se: FloatArray
    df: FloatArray
    n_paired: FloatArray
    n_unanswered: FloatArray
    n_absent: FloatArray
    margin_go: FloatArray
    margin_nogo: FloatArray
    worst_shift: FloatArray
    p_go: FloatArray
    p_nogo: FloatArray
    p_go_paired: FloatArray
    p_nogo_paired: FloatArray


def accuracy_evidence(
    o: Outcomes, margin: float, alpha: float, max_absent: float = 0.0
) -> Evidence:
    """Drop, SE and the two p-values, with the missing answers taken at their worst.

    ``p_go_paired`` / ``p_nogo_paired`` are the p-values on the paired questions alone; ``p_go`` /
    ``p_nogo`` add the worst (best) case of the questions without an answered pair, which is what
    the verdict reads. NaN p-values (fewer than two paired questions, non-finite SE) mean
    INCONCLUSIVE.
    """
    d = question_diffs(o)
    paired = np.isfinite(d)
    n_p = paired.sum(axis=-1).astype(float)
    absent = ~np.asarray(o.cand_asked, dtype=bool) & ~paired
    missing = ~paired & ~absent
    n_rows = d.shape[-1]
    n_absent = absent.sum(axis=-1).astype(float)
    blocked = n_absent > max_absent * n_rows + 1e-9
    # Beyond the allowed share, absent questions count as missing (worst case) too.
    missing = missing | (absent & blocked[..., None])
    b_all, c_all = _row_mean(o.base), _row_mean(o.cand)
    worst = np.where(np.isfinite(b_all), b_all, 1.0) - np.where(np.isfinite(c_all), c_all, 0.0)
    best = np.where(np.isfinite(b_all), b_all, 0.0) - np.where(np.isfinite(c_all), c_all, 1.0)
    n_miss = missing.sum(axis=-1).astype(float)
    n_tot = n_p + n_miss
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows or cells with nothing paired
        drop, se, df = paired_drop(np.where(paired, d, np.nan))
        margin_go = (margin * n_tot - np.sum(np.where(missing, worst, 0.0), -1)) / n_p
        margin_nogo = (margin * n_tot - np.sum(np.where(missing, best, 0.0), -1)) / n_p
        worst_shift = np.sum(np.where(missing, worst, 0.0), -1) / n_tot
    usable = (n_p >= 2) & np.isfinite(se)
    plain = margin_test(drop, se, np.maximum(df, 1.0), margin, alpha)
    p_go = _against(drop, se, df, margin_go, upper=True)
    p_nogo = _against(drop, se, df, margin_nogo, upper=False)
    p_go = np.where(blocked, 1.0, p_go)
    nan = np.nan
    return Evidence(
        drop=drop, se=se, df=df, n_paired=n_p, n_unanswered=n_miss, n_absent=n_absent,
        margin_go=margin_go, margin_nogo=margin_nogo, worst_shift=worst_shift,
        p_go=np.where(usable, p_go, nan), p_nogo=np.where(usable, p_nogo, nan),
        p_go_paired=np.where(usable, plain.p_go, nan),
        p_nogo_paired=np.where(usable, plain.p_nogo, nan),
    )  # fmt: skip


def _against(
    drop: FloatArray, se: FloatArray, df: FloatArray, margin: FloatArray, upper: bool
) -> FloatArray:
    # margin_test's p-values against a per-row margin (the worst / best case of missing answers).
    df1 = np.maximum(df, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (margin - drop) / se
        exact = np.where(drop <= margin, 0.0, 1.0) if upper else np.where(drop > margin, 0.0, 1.0)
        t = stats.t.sf(z, df1) if upper else stats.t.cdf(z, df1)
    return np.where(se > 0, t, exact)


@dataclass(frozen=True)
class Broken:
    """The broken-prompt check (arrays over the leading axes).

    Attributes:
        p_question: ``(..., n)`` one-sided Fisher p-value per question (1 where not tested).
        testable: ``(...)`` Tarone's count of questions that could reach significance.
        p_cell: ``(...)`` ``min p_question * testable`` (capped at 1): the check's p-value.
    """

    p_question: FloatArray
    testable: FloatArray
    p_cell: FloatArray

    def flagged(self, level: float) -> FloatArray:
        """``(..., n)`` questions that break at ``level`` (Bonferroni over ``testable``)."""
        return self.p_question * np.maximum(self.testable, 1)[..., None] <= level


def _log_choose(n: FloatArray, k: FloatArray) -> FloatArray:
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def broken_prompts(o: Outcomes, alpha: float) -> Broken:
    """Questions the baseline gets right in most repeats and the candidate never.

    Fisher's exact test of "the candidate is no worse on this question", one-sided, conditional
    on the question's total right answers ``K``: with the candidate right in none of its ``nc``
    answers, ``p = C(nb, K) / C(nb + nc, K)``. Only questions with ``nb / 2 < K <= nb`` can show
    this pattern; Tarone's count of them (those whose smallest possible p is <= alpha / count)
    is the Bonferroni factor.
    """
    base, cand = paired_masks(o)
    nb, nc = np.isfinite(base).sum(-1), np.isfinite(cand).sum(-1)
    xb, xc = np.nansum(base, -1), np.nansum(cand, -1)
    k = xb + xc
    possible = (nc > 0) & (2 * k > nb) & (k <= nb)
    p_min = np.where(possible, np.exp(_log_choose(nb, k) - _log_choose(nb + nc, k)), 1.0)
    p_question = np.where(possible & (xc == 0), p_min, 1.0)
    testable = _tarone(p_min, alpha)
    p_cell = np.minimum(1.0, p_question.min(axis=-1) * np.maximum(testable, 1))
    return Broken(p_question, testable.astype(float), p_cell)


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


def cell_verdict(
    o: Outcomes, margin: float, alpha: float, level: float, max_absent: float = 0.0
) -> np.ndarray:
    """One candidate alone at ``level``: what the report says of it, and what a look stops on.

    ``alpha`` is the policy's (Tarone's count); ``level`` the one the p-values are read at
    (``alpha``, or a sequential look's). See ``verdict_of``.
    """
    ev = accuracy_evidence(o, margin, alpha, max_absent)
    return verdict_of(ev.p_go, ev.p_nogo, broken_prompts(o, alpha).p_cell, level)


def verdict_of(
    p_go: FloatArray, p_nogo: FloatArray, p_broken: FloatArray, level: FloatArray | float,
    broken_level: FloatArray | float | None = None,
) -> np.ndarray:  # fmt: skip
    """The verdict of one cell's checks at ``level`` (``broken_level`` for the broken prompts).

    NO-GO when the mean check says NO-GO or a prompt breaks; GO when the mean check says GO and
    nothing breaks; else INCONCLUSIVE (NaN p-values decide nothing). A sequential look reads the
    mean check at the look's level and the broken prompts at the alpha that look spends.
    """
    broken_level = level if broken_level is None else broken_level
    from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO

    with np.errstate(invalid="ignore"):
        go, nogo = np.asarray(p_go) <= level, np.asarray(p_nogo) <= level
        broken = np.asarray(p_broken) <= broken_level
    out = np.full(np.broadcast(go, nogo, broken).shape, INCONCLUSIVE, dtype=object)
    out[go & ~broken] = GO
    out[nogo | broken] = NO_GO
    return out
