"""Simulated right/wrong answers for the statistics tests (unit and slow tiers)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from pipeline.stats.outcomes import Outcomes

MARGIN = 0.02


def draw(rng: np.random.Generator, p: np.ndarray, reps: int, k: int) -> np.ndarray:
    """``reps`` replications of ``k`` independent repeats per question, right with ``p``."""
    return (rng.random((reps, len(p), k)) < p[:, None]).astype(float)


def copies(rng: np.random.Generator, p: np.ndarray, reps: int, k: int) -> np.ndarray:
    """Greedy-like: every repeat a copy of the first."""
    return np.repeat(draw(rng, p, reps, 1), k, axis=-1)


def outcomes(base: np.ndarray, cand: np.ndarray) -> Outcomes:
    """Paired outcomes, every pair answered, paired by question."""
    return Outcomes(base, cand, np.ones(cand.shape[:-1], dtype=bool), True)


def at_the_margin(n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Questions on which the candidate is exactly ``MARGIN`` worse (the nulls' boundary)."""
    p = np.linspace(0.1, 0.95, n)
    return p, p - MARGIN


def gpqa_shaped() -> np.ndarray:
    """The simulation's question set: 198 Beta quantiles, mean 0.70, one repeat's SD 1.5 points."""
    size = 0.21 / (0.21 - 198 * 0.015**2) - 1
    return np.asarray(stats.beta.ppf((np.arange(198) + 0.5) / 198, 0.7 * size, 0.3 * size))
