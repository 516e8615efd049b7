"""Asking only the questions still informative: what it saves, and what keeps it valid.

A question both sides have answered alike in every repeat so far shows no variance, and asking
it again mostly confirms that. Two ways to stop asking it (both sides, from a warm-up on):

- ``skip``: never ask it again. The bet then averages only the questions still asked: a small
  loss hidden on the always-alike questions (diffuse drops put most of a drop there) is never
  seen, so the test is no longer of the whole set's mean and a false GO can exceed alpha.
- ``weighted``: ask it with probability ``pi_min`` (a predictable choice: it reads earlier
  repeats only), and weight an asked pair by ``1 / pi`` (Horvitz-Thompson). Given the past each
  question's weighted difference has its true mean, so the e-process of ``pipeline.stats
  .anytime`` stays a supermartingale under each null (its bet bounded by ``reach = 1 / pi_min``).

Both are simulated with the per-repeat betting e-process the anytime design used before issue 37
(``log_wealth`` below, kept here): it is valid only when a question's repeats are independent
draws, which is what this benchmark assumes; the design now reads questions, not repeats
(``pipeline.stats.anytime``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FloatArray = np.ndarray
MODES = ("all", "weighted", "skip")
KELLY = 0.5  # share of the plug-in Kelly bet
CAP = 0.5  # largest bet, as a share of the one that could lose everything on one pair
PRIOR_PAIRS = 20.0  # pairs' worth of prior belief in the bet's first step
PRIOR_SQUARE = 0.25  # the prior's mean squared outcome (a quarter of pairs discordant)


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


@dataclass(frozen=True)
class Plan:
    """How repeats are spent: ``mode``, the share ``pi_min`` of alike questions still asked."""

    mode: str = "all"
    pi_min: float = 0.25
    warm: int = 2  # repeats every question is asked first


def ask_probability(base: np.ndarray, cand: np.ndarray, r: int, plan: Plan) -> np.ndarray:
    """``(..., n)`` chance each question is asked at repeat ``r``, from repeats < r only."""
    if plan.mode == "all" or r < plan.warm:
        return np.ones(base.shape[:-1])
    # Alike: every answer asked so far, on both sides, the same (the warm-up asked them all).
    seen = np.concatenate([base[..., :r], cand[..., :r]], axis=-1)
    alike = np.nanmax(seen, -1) == np.nanmin(seen, -1)
    low = 0.0 if plan.mode == "skip" else plan.pi_min
    return np.where(alike, low, 1.0)


def weighted_pairs(
    base: np.ndarray, cand: np.ndarray, plan: Plan, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``(x, asked)``: each pair's weighted difference (NaN: not a pair) and whether asked.

    A question not asked shows 0 under ``weighted`` (its expected weighted difference given
    the past is still its true one) and no pair under ``skip``.
    """
    x = np.full(cand.shape, np.nan)
    asked = np.zeros(cand.shape, dtype=bool)
    seen_b, seen_c = np.full(base.shape, np.nan), np.full(cand.shape, np.nan)
    for r in range(cand.shape[-1]):
        pi = ask_probability(seen_b, seen_c, r, plan)
        hit = rng.random(pi.shape) < pi
        asked[..., r] = hit
        seen_b[..., r] = np.where(hit, base[..., r], np.nan)
        seen_c[..., r] = np.where(hit, cand[..., r], np.nan)
        diff = (cand[..., r] - base[..., r]) / np.where(pi > 0, pi, 1.0)
        unasked = 0.0 if plan.mode == "weighted" else np.nan
        x[..., r] = np.where(hit, diff, unasked)
    return x, asked


def stop_and_cost(
    base: np.ndarray, cand: np.ndarray, plan: Plan, margin: float, alpha: float, go: bool,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per replication: whether the test rejected by the last repeat, and pairs asked per
    question until it did (or to the end)."""
    rng = np.random.default_rng(seed)
    x, asked = weighted_pairs(base, cand, plan, rng)
    y = x + margin if go else -margin - x
    reach = 1.0 / plan.pi_min if plan.mode == "weighted" else 1.0
    wealth = np.maximum.accumulate(log_wealth(y, margin, go, reach), -1)
    crossed = wealth >= np.log(1 / alpha)
    k = cand.shape[-1]
    stop = np.where(crossed.any(-1), crossed.argmax(-1) + 1, k)
    per_repeat = asked.mean(-2)  # (..., k): share of questions asked at each repeat
    cost = np.sum(np.where(np.arange(k) < stop[..., None], per_repeat, 0.0), -1)
    return crossed.any(-1), cost
