"""Answers whose repeats are not independent: greedy server starts and copied repeats.

Three ways a side's ``(question, repeat)`` outcomes are drawn, every repeat of question ``i``
right with the same probability (its marginal), so the truth (the mean difference) is the same
whatever the dependence:

- ``independent``: every repeat a fresh draw (sampling at temperature > 0 with fresh seeds);
- ``copied`` at ``rho``: repeat ``r > 1`` is a copy of repeat 1 with probability ``rho``, else a
  fresh draw (sticky answers; ``rho = 1``: every repeat a copy);
- ``greedy``: one greedy answer per question, right with probability ``p_i`` (a draw per
  replication: the model's own answer), shared by both sides; each server start flips each
  question's answer with probability ``phi`` (``2 phi (1 - phi)`` = the share of questions two
  starts disagree on: 3.6% measured live on SGLang), and every repeat within a start is a copy.
  A drop ``d`` turns each of the candidate start's right answers wrong with probability
  ``d / (its expected accuracy)``.
"""

from __future__ import annotations

import numpy as np

FLIPS = 0.036  # share of greedy answers two starts of one engine disagree on (live, SGLang)


def start_flip(disagree: float = FLIPS) -> float:
    """``phi``: each start's flip probability so that two starts disagree on ``disagree``."""
    return float((1 - np.sqrt(1 - 2 * disagree)) / 2)


def copied(rng: np.random.Generator, p: np.ndarray, lead: tuple[int, ...], k: int,
           rho: float) -> np.ndarray:  # fmt: skip
    """``(*lead, n, k)`` outcomes: repeat 1 fresh, each later one repeat 1's copy w.p. ``rho``."""
    fresh = (rng.random((*lead, len(p), k)) < p[:, None]).astype(float)
    if rho <= 0:
        return fresh
    copy = rng.random(fresh.shape) < rho
    copy[..., 0] = False
    out: np.ndarray = np.where(copy, fresh[..., :1], fresh)
    return out


def greedy_pair(rng: np.random.Generator, p: np.ndarray, lead: tuple[int, ...], k: int,
                drop: float, disagree: float = FLIPS) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(base, cand)`` of two greedy starts: shared greedy answers, per-start flips, copies.

    ``drop``: the candidate start's right answers go wrong with probability ``drop / acc``,
    ``acc`` its expected accuracy, so its expected accuracy is ``drop`` lower.
    """
    phi = start_flip(disagree)
    answer = rng.random((*lead, len(p))) < p
    sides = [answer ^ (rng.random(answer.shape) < phi) for _ in range(2)]
    if drop:
        acc = float(np.mean(p * (1 - phi) + (1 - p) * phi))
        sides[1] = sides[1] & ~(rng.random(answer.shape) < drop / acc)
    base, cand = (np.repeat(s[..., None], k, axis=-1).astype(float) for s in sides)
    return base, cand
