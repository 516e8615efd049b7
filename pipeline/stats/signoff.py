"""The one sign-off rule of a candidate against its baseline.

Shared by the report, the sequential stopping rule (``pipeline/measuring/sequential_run.py``)
and the simulation that validates both.

Everything works on arrays whose last two axes are (question, repeat), so a report (one cell),
a sequential look and the simulation (thousands of replications at once) call the same code.

- **Errors are not assumed random.** A request that errored (``error_kind`` set) is not an
  answer: it is NaN here. The estimate uses answered pairs, but GO must also hold with the
  candidate's lost pairs (the baseline answered, the candidate errored) counted wrong, and NO-GO
  with them counted right: errors that fall on the answers it would have got wrong (timeouts on
  runaway generations) never buy a GO. Pairs the baseline lost too are left out. A truncated
  answer is an answer (wrong).
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
  NaN p-values, hence INCONCLUSIVE, never GO / NO-GO. A zero standard error is floored at
  ``1 / (k n)`` (see ``mean_check``): identical pairs on two questions are not certainty.
- **Broken prompts**: ``pipeline.stats.breaks``, at a fifth of NO-GO's alpha, the mean test's
  NO-GO at the rest (``pipeline.stats.nogo_split``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from pipeline.stats.breaks import Broken, broken_prompts
from pipeline.stats.nogo_split import nogo_shares
from pipeline.stats.noninferiority import margin_test, paired_drop
from pipeline.stats.null_variance import null_se

if TYPE_CHECKING:
    from pipeline.stats.sequential import SequentialDesign
from pipeline.stats.outcomes import (
    Outcomes,
    answers_per_question,
    paired_masks,
    question_diffs,
    row_mean,
)

__all__ = ["Broken", "Evidence", "Outcomes", "accuracy_evidence", "broken_prompts",
           "cell_verdict", "paired_masks", "question_diffs", "verdict_of"]  # fmt: skip

FloatArray = np.ndarray


@dataclass(frozen=True)
class MeanCheck:
    """The mean-difference numbers of one way of reading the unanswered pairs."""

    drop: FloatArray
    se: FloatArray
    df: FloatArray
    n_paired: FloatArray
    n_unanswered: FloatArray
    n_absent: FloatArray
    margin_go: FloatArray
    margin_nogo: FloatArray
    worst_shift: FloatArray
    blocked: FloatArray
    se_go: FloatArray
    se_nogo: FloatArray

    def p_go(self) -> FloatArray:
        """p-value of "drop >= margin", missing questions at their worst (1 when blocked)."""
        return np.where(self.blocked, 1.0, _against(self.drop, self.se_go, self.df,
                                                    self.margin_go, upper=True))  # fmt: skip

    def p_nogo(self) -> FloatArray:
        """p-value of "drop <= margin", missing questions at their best."""
        return _against(self.drop, self.se_nogo, self.df, self.margin_nogo, upper=False)

    def bound(self, margin: float, alpha: float, upper: bool) -> FloatArray:
        """The one-sided (1 - alpha) bound of the drop on the margin's scale.

        ``upper`` (GO's): ``<= margin`` exactly when ``p_go() <= alpha``; lower (NO-GO's):
        ``> margin`` exactly when ``p_nogo() <= alpha``.
        """
        q = stats.t.isf(alpha, np.maximum(self.df, 1.0)) * (self.se_go if upper else self.se_nogo)
        bound: FloatArray = (
            self.drop + q + margin - self.margin_go
            if upper
            else self.drop - q + margin - self.margin_nogo
        )
        return bound


@dataclass(frozen=True)
class Evidence:
    """The mean-difference check of one or many comparisons (arrays over the leading axes).

    ``drop`` / ``se`` are the answered pairs'; ``go`` reads the candidate's lost pairs (the
    baseline answered, the candidate's request errored) as wrong, ``nogo`` as right, and
    ``answered`` leaves them out. ``p_go`` / ``p_nogo`` (what the verdict reads) come from
    ``go`` / ``nogo``; ``p_go_answered`` / ``p_nogo_answered`` from ``answered``; the
    ``_paired`` ones from the answered pairs alone, missing questions not counted.
    """

    drop: FloatArray
    se: FloatArray
    df: FloatArray
    n_paired: FloatArray
    n_unanswered: FloatArray
    n_absent: FloatArray
    n_lost: FloatArray
    margin_go: FloatArray
    margin_nogo: FloatArray
    worst_shift: FloatArray
    p_go: FloatArray
    p_nogo: FloatArray
    p_go_answered: FloatArray
    p_nogo_answered: FloatArray
    p_go_paired: FloatArray
    p_nogo_paired: FloatArray
    go_bound: FloatArray
    nogo_bound: FloatArray


def mean_check(
    o: Outcomes, margin: float, max_absent: float = 0.0, null_variance: bool = True
) -> MeanCheck:
    """Drop and SE on the answered pairs, with the margins shifted for missing questions.

    The standard error is at least ``1 / (k n)`` (``k`` answers per question, ``n`` questions):
    what it would be had one question differed by one answer. Identical pairs on a handful of
    questions are not certainty; on 198 questions the floor is far below any real SE. Each test
    reads it grown to where its null holds (``null_variance.null_se``).
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
    b_all, c_all = row_mean(o.base), row_mean(o.cand)
    worst = np.where(np.isfinite(b_all), b_all, 1.0) - np.where(np.isfinite(c_all), c_all, 0.0)
    best = np.where(np.isfinite(b_all), b_all, 0.0) - np.where(np.isfinite(c_all), c_all, 1.0)
    n_miss = missing.sum(axis=-1).astype(float)
    n_tot = n_p + n_miss
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows or cells with nothing paired
        drop, se, df = paired_drop(np.where(paired, d, np.nan))
        se = np.where(np.isfinite(se), np.maximum(se, 1 / (answers_per_question(o) * n_p)), se)
        margin_go = (margin * n_tot - np.sum(np.where(missing, worst, 0.0), -1)) / n_p
        margin_nogo = (margin * n_tot - np.sum(np.where(missing, best, 0.0), -1)) / n_p
        worst_shift = np.sum(np.where(missing, worst, 0.0), -1) / n_tot
        se_go = null_se(o, se, drop, margin_go, go=True) if null_variance else se
        se_nogo = null_se(o, se, drop, margin_nogo, go=False) if null_variance else se
    return MeanCheck(drop, se, df, n_p, n_miss, n_absent, margin_go, margin_nogo, worst_shift,
                     blocked, se_go, se_nogo)  # fmt: skip


def accuracy_evidence(
    o: Outcomes, margin: float, alpha: float, max_absent: float = 0.0, null_variance: bool = True
) -> Evidence:
    """Drop, SE and the two p-values, with whatever has no answer taken at its worst (best).

    GO must hold with the candidate's lost pairs counted wrong and missing questions at their
    worst; NO-GO with the lost pairs counted right and missing questions at their best. Errors
    that fall on requests the candidate would have got wrong (timeouts on runaway generations)
    then never buy a GO. NaN p-values (fewer than two paired questions, non-finite SE) mean
    INCONCLUSIVE. ``null_variance`` False reads the SE at the estimate (a sequential cell
    written before the null-variance SE stopped on that; see ``SequentialDesign.statistic``).
    """
    answered = mean_check(o, margin, max_absent, null_variance)
    lost = o.lost()
    if lost.any():
        go, nogo = (mean_check(o.imputed(v), margin, max_absent, null_variance) for v in (0, 1))
    else:
        go = nogo = answered
    usable = (answered.n_paired >= 2) & np.isfinite(answered.se)
    plain = margin_test(answered.drop, answered.se, np.maximum(answered.df, 1.0), margin, alpha)

    def known(x: FloatArray) -> FloatArray:
        return np.where(usable, x, np.nan)

    a = answered
    with np.errstate(invalid="ignore", divide="ignore"):
        return Evidence(
            drop=a.drop, se=a.se, df=a.df, n_paired=a.n_paired, n_unanswered=a.n_unanswered,
            n_absent=a.n_absent, n_lost=lost.sum(axis=(-2, -1)).astype(float),
            margin_go=a.margin_go, margin_nogo=a.margin_nogo, worst_shift=a.worst_shift,
            p_go=known(go.p_go()), p_nogo=known(nogo.p_nogo()),
            p_go_answered=known(a.p_go()), p_nogo_answered=known(a.p_nogo()),
            p_go_paired=known(plain.p_go), p_nogo_paired=known(plain.p_nogo),
            go_bound=known(go.bound(margin, alpha, upper=True)),
            nogo_bound=known(nogo.bound(margin, alpha, upper=False)),
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


def cell_verdict(
    o: Outcomes, margin: float, alpha: float, level: float, max_absent: float = 0.0
) -> np.ndarray:
    """One candidate alone at ``level``: what the report says of it, and what a look stops on.

    ``alpha`` is the policy's (Tarone's count); ``level`` the one the p-values are read at
    (``alpha``, or a sequential look's). NO-GO's ``level`` is split between the mean test and
    the broken-prompt check (``nogo_split``). See ``verdict_of``.
    """
    ev = accuracy_evidence(o, margin, alpha, max_absent)
    mean, broken = nogo_shares()
    p_broken = broken_prompts(o, alpha).p_cell
    return verdict_of(ev.p_go, ev.p_nogo, p_broken, level, level * broken, level * mean)


def verdict_of(
    p_go: FloatArray, p_nogo: FloatArray, p_broken: FloatArray, level: FloatArray | float,
    broken_level: FloatArray | float | None = None, nogo_level: FloatArray | float | None = None,
) -> np.ndarray:  # fmt: skip
    """The verdict of one cell's checks at ``level`` (``broken_level`` for the broken prompts).

    NO-GO when the mean check says NO-GO or a prompt breaks; GO when the mean check says GO and
    nothing breaks; else INCONCLUSIVE (NaN p-values decide nothing). A sequential look reads GO
    at the look's level, NO-GO at the level of its share of the family (``nogo_level``) and the
    broken prompts at the alpha that look spends of that share.
    """
    broken_level = level if broken_level is None else broken_level
    nogo_level = level if nogo_level is None else nogo_level
    from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO

    with np.errstate(invalid="ignore"):
        go, nogo = np.asarray(p_go) <= level, np.asarray(p_nogo) <= nogo_level
        broken = np.asarray(p_broken) <= broken_level
    out = np.full(np.broadcast(go, nogo, broken).shape, INCONCLUSIVE, dtype=object)
    out[go & ~broken] = GO
    out[nogo | broken] = NO_GO
    return out


def look_levels(design: SequentialDesign, look: int) -> tuple[float, float, float]:
    """``(level, broken_level, nogo_level)`` of ``verdict_of`` at a sequential look.

    GO at the GO design's level, NO-GO and broken prompts at the NO-GO design's (the family's
    share of alpha), so the report, reading the stopped cell's stagewise p-values with the same
    Bonferroni split, reaches the same verdict by construction.
    """
    from pipeline.stats.sequential import level_at
    from pipeline.stats.sequential_pvalues import increment

    go, nogo = design.side(True), design.side(False)
    return level_at(go, look), increment(nogo, look), level_at(nogo, look)


def look_verdict(o: Outcomes, design: SequentialDesign, look: int) -> np.ndarray:
    """What a sequential look decides (``sequential_run.look``): see ``look_levels``."""
    ev = accuracy_evidence(o, design.margin, design.alpha, 0.0, design.statistic == "null")
    broken = broken_prompts(o, design.alpha).p_cell
    return verdict_of(ev.p_go, ev.p_nogo, broken, *look_levels(design, look))
