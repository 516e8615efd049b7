"""Anytime-valid sign-off: betting e-processes on the paired per-question difference.

The data of a candidate against its baseline are pairs ``x = c - b`` in {-1, 0, 1}, one per
(question, repeat). Repeat ``r`` of every question is one *step*: given everything seen at
earlier repeats, its pairs are independent with means ``delta_i`` (the question set is fixed: it
is the eval), whose average ``mu`` is the difference the sign-off is about. Each of the two
one-sided nulls is tested by a wealth process (Waudby-Smith & Ramdas 2023, betting on a bounded
mean), with ``m = -margin``:

- GO rejects ``mu <= m``: wealth ``W = prod_r prod_i (1 + lam_r (x_ri - m))``;
- NO-GO rejects ``mu >= m``: ``W = prod_r prod_i (1 + lam_r (m - x_ri))``.

Why it is valid: ``lam_r`` is one bet for every question of step ``r``, chosen from earlier
steps only (predictable), and ``0 <= lam_r (1 +- m) < 1`` keeps every factor positive. Given the
past, the step's factor has expectation ``prod_i (1 + lam_r (delta_i - m)) <= exp(lam_r n (mu -
m)) <= 1`` under GO's null (the same for NO-GO's), so ``W`` is a nonnegative supermartingale
and by Ville's inequality ``P(sup_r W_r >= 1/a) <= a``. Hence ``p = 1 / max_{s <= r} W_s`` is a
p-value at *any* stopping time: a look may stop on it, the report may read it after the run
stopped wherever it did, and a run extended past its planned ``max_repeats`` keeps it valid.
NO-GO is read at ``alpha / family`` (Bonferroni over the sweep's candidates x evals, fixed
before the first look); GO at ``alpha`` per cell (the release is GO only if every cell is).

The bet is half the predictable plug-in Kelly bet, ``lam = KELLY max(mean_y, margin) / mean_y2``
over earlier steps (``y`` the bet's outcome), starting from a prior worth ``PRIOR_PAIRS`` pairs
and capped at ``CAP``: it aims at the alternative a sign-off needs power for (a clean candidate
for GO, one a margin beyond it for NO-GO) and grows with the evidence. Half Kelly because the
plug-in's own noise makes the full bet overshoot: on the issue's 198-question set a clean
candidate reaches GO by 32 repeats in 99.9% of runs at half Kelly, 98.2% at full Kelly.

Errors are not random: GO's wealth counts the candidate's lost pairs (the baseline answered, the
candidate's request errored) as wrong, NO-GO's as right. Pairs the baseline lost are left out.
NO-GO's ``alpha / family`` is split between NO-GO's e-process and the broken-prompt check
(``pipeline.stats.nogo_split``: four fifths and one fifth), so the cell's NO-GO checks together
are level ``alpha / family``. Broken prompts (``pipeline.stats.breaks``) are tested at every
look ``j`` at their share times ``1 / (j (j + 1))``: these sum to the share over any number of
looks.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from pipeline.stats.breaks import broken_prompts
from pipeline.stats.nogo_split import BROKEN_SHARE, nogo_shares
from pipeline.stats.outcomes import Outcomes

FloatArray = np.ndarray
KELLY = 0.5  # share of the plug-in Kelly bet (see the module docstring)
CAP = 0.5  # largest bet, as a share of the one that could lose everything on one pair
PRIOR_PAIRS = 20.0  # pairs' worth of prior belief in the bet's first step
PRIOR_SQUARE = 0.25  # the prior's mean squared outcome (a quarter of pairs discordant)


@dataclass(frozen=True)
class AnytimeEvidence:
    """Both e-processes and the broken-prompt check after the data seen so far.

    Attributes:
        p_go: ``(...)`` ``1 / max wealth`` of GO's bet (the lost pairs counted wrong).
        p_nogo: ``(...)`` the same of NO-GO's (the lost pairs counted right).
        p_broken: ``(...)`` the broken-prompt check's p-value over looks (``alpha``'s scale:
            ``min_j p_j (j (j + 1))``).
        steps: ``(...)`` repeats with at least one pair.
    """

    p_go: FloatArray
    p_nogo: FloatArray
    p_broken: FloatArray
    steps: FloatArray


def bet_outcomes(o: Outcomes, margin: float, go: bool) -> FloatArray:
    """``(..., n, k)`` outcome ``y`` of each pair for GO's bet (``x + margin``) or NO-GO's.

    NaN where there is no pair: the baseline gave no answer, or the candidate was not asked
    (absent, or a later round not run yet). A lost pair counts wrong for GO, right for NO-GO.
    """
    cand = np.where(o.lost(), 0.0 if go else 1.0, o.cand) if o.by_repeat else o.cand
    x: FloatArray = cand - o.base
    shifted: FloatArray = x + margin if go else -margin - x
    return shifted


def log_wealth(y: FloatArray, margin: float, go: bool, reach: float = 1.0) -> FloatArray:
    """``(..., k)`` log wealth after each repeat of the bet with outcomes ``y`` (``bet_outcomes``).

    ``reach`` is the largest ``|x|`` a pair can show (1; more when pairs are importance-weighted),
    which bounds the bet. A repeat without any pair leaves wealth and bet as they were.
    """
    cap = CAP / (reach - margin if go else reach + margin)
    lead = y.shape[:-2]
    total = np.zeros(lead)
    sum_y = np.full(lead, PRIOR_PAIRS * margin)
    sum_y2 = np.full(lead, PRIOR_PAIRS * PRIOR_SQUARE)
    count = np.full(lead, PRIOR_PAIRS)
    out = np.empty((*lead, y.shape[-1]))
    for r in range(y.shape[-1]):
        col = y[..., r]
        seen = np.isfinite(col)
        lam = np.clip(KELLY * np.maximum(sum_y / count, margin) * count / sum_y2, 0.0, cap)
        step = np.log1p(lam[..., None] * np.where(seen, col, 0.0))
        total = total + step.sum(-1)
        filled = np.where(seen, col, 0.0)
        sum_y, sum_y2 = sum_y + filled.sum(-1), sum_y2 + (filled**2).sum(-1)
        count = count + seen.sum(-1)
        out[..., r] = total
    return out


def eprocess_p(o: Outcomes, margin: float, go: bool) -> FloatArray:
    """``(...)`` the anytime-valid p-value ``1 / max_r W_r`` of GO's null (or NO-GO's).

    NaN (no verdict) when the sides are not paired by repeat: the bet needs one step per repeat.
    """
    if not o.by_repeat:
        return np.full(o.cand.shape[:-2], np.nan)
    y = bet_outcomes(o, margin, go)
    if y.shape[-1] == 0:
        return np.ones(y.shape[:-2])
    best = np.maximum(np.max(log_wealth(y, margin, go), axis=-1), 0.0)
    p: FloatArray = np.exp(-best)
    return p


def look_share(look: int) -> float:
    """The share of the broken-prompt check's alpha spent at look ``look`` (1-based)."""
    return 1.0 / (look * (look + 1))


def broken_over_looks(o: Outcomes, alpha: float, rounds: list[int]) -> FloatArray:
    """The broken-prompt check's p-value over looks after ``rounds`` repeats each (cumulative).

    ``min_j p_j / share_j``: at most ``alpha`` exactly when some look's check broke at its
    share of ``alpha``.
    """
    out = np.ones(o.cand.shape[:-2])
    for j, k in enumerate(rounds, start=1):
        part = Outcomes(o.base[..., :k], o.cand[..., :k], o.cand_asked, o.by_repeat,
                        None if o.cand_errored is None else o.cand_errored[..., :k])  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = broken_prompts(part, alpha * look_share(j)).p_cell
        out = np.minimum(out, p / look_share(j))
    return np.minimum(out, 1.0)


def look_repeats(answered: int, per_round: int) -> list[int]:
    """Repeats after each look, up to ``answered`` repeats (the last look may be partial)."""
    looks = list(range(per_round, answered + 1, per_round))
    return looks if looks and looks[-1] == answered else [*looks, answered] if answered else []


def paired_steps(o: Outcomes) -> FloatArray:
    """``(...)`` repeats with at least one pair (answered, or lost by the candidate)."""
    ran = np.isfinite(o.cand) | o.lost()
    steps: FloatArray = np.any(ran & np.isfinite(o.base), axis=-2).sum(-1)
    return steps


def broken_p(o: Outcomes, alpha: float, per_round: int) -> FloatArray:
    """The broken check over the looks a run in rounds of ``per_round`` made on these pairs."""
    steps = paired_steps(o)
    width = int(np.max(steps)) if np.size(steps) else 0
    return broken_over_looks(o, alpha, look_repeats(width, per_round))


def anytime_evidence(
    o: Outcomes, margin: float, alpha: float, per_round: int, max_absent: float = 0.0
) -> AnytimeEvidence:
    """Both e-processes' p-values and the broken check's, on the data seen so far.

    GO is impossible (p 1) when more of the baseline's questions were never asked of the
    candidate than ``max_absent`` allows.
    """
    asked = np.asarray(o.cand_asked, dtype=bool)
    blocked = (~asked).sum(-1) > max_absent * asked.shape[-1] + 1e-9
    p_go = np.where(blocked, 1.0, eprocess_p(o, margin, True))
    p_nogo = eprocess_p(o, margin, False)
    steps = paired_steps(o).astype(float)
    return AnytimeEvidence(p_go, p_nogo, broken_p(o, alpha, per_round), steps)


def anytime_verdict(
    ev: AnytimeEvidence, alpha: float, family: int, broken_share: float | None = BROKEN_SHARE
) -> np.ndarray:
    """GO / NO-GO / INCONCLUSIVE: the look's decision and the report's, one function.

    The cell's NO-GO alpha is ``alpha / family``, split between NO-GO's e-process and the broken
    check (``nogo_split``; ``broken_share`` None: a cell written before the split, each at the
    full share). GO when GO's p is at most ``alpha`` and nothing broke at the broken check's
    level; NO-GO when NO-GO's p or the broken check's is at most its level.
    """
    from pipeline.stats.signoff import verdict_of

    mean, broken = nogo_shares(broken_share)
    share = alpha / family
    return verdict_of(ev.p_go, ev.p_nogo, ev.p_broken, alpha, share * broken, share * mean)
