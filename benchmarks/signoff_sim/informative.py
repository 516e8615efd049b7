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

Both are simulated with the anytime design's own ``bet_outcomes`` / ``log_wealth``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.stats.anytime import log_wealth

MODES = ("all", "weighted", "skip")


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
