"""p-values of a sequentially stopped cell that stay valid under a correction across cells.

A candidate that stopped at look ``j`` because its look p-value crossed the look's level cannot
be read as a fixed-design p-value (it looked ``j`` times), and scaling by ``alpha / level`` breaks
under Holm (an early NO-GO at level 1e-5 would need 1e-5 / m). The stagewise-ordering p-value
does not: for a stop at look ``j`` with statistic ``z``,

    p = A(t_{j-1}) + P0(no crossing at looks 1..j-1, Z_j >= z),

``A`` the alpha spent by the earlier looks, the second term from the same recursion the
boundaries are solved with. It is <= alpha exactly when the design stops at look j (z >= c_j), so
a lone cell reads as its stopping rule did, and it is a p-value, so Holm across cells holds.
A look that did not cross gives 1 (conservative: the cell has not rejected).

The broken-prompt check spends the same increments by Bonferroni over looks (it is not a normal
statistic): a look's level is ``A(t_j) - A(t_{j-1})`` and its p-value ``A(t_{j-1}) + p_j``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from pipeline.stats.sequential import (
    _GRID_LOW,
    _GRID_POINTS,
    SequentialDesign,
    _trapezoid_weights,
    boundaries,
    spent_alpha,
)


def spent_before(design: SequentialDesign, look: int) -> float:
    """Alpha spent by looks 1..look-1."""
    return spent_alpha((look - 1) / design.n_looks, design.alpha, design.spending)


def increment(design: SequentialDesign, look: int) -> float:
    """Alpha spent at ``look`` alone: the broken-prompt check's level there."""
    return spent_before(design, look + 1) - spent_before(design, look)


@functools.lru_cache(maxsize=16)
def _survivors(design: SequentialDesign) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    # For each look j: grid and mass of Z_j on paths that crossed no boundary at looks 1..j.
    bounds = boundaries(design)
    out = []
    grid = np.linspace(_GRID_LOW, bounds[0], _GRID_POINTS)
    mass = stats.norm.pdf(grid) * _trapezoid_weights(grid)
    out.append((grid, mass))
    for j in range(1, design.n_looks - 1):
        prev, now = j / design.n_looks, (j + 1) / design.n_looks
        step = math.sqrt(now - prev)
        new = np.linspace(_GRID_LOW, min(bounds[j], 40.0), _GRID_POINTS)
        kernel = stats.norm.pdf((new[:, None] * math.sqrt(now) - grid[None, :] * math.sqrt(prev))
                                / step)  # fmt: skip
        density = kernel @ mass * math.sqrt(now) / step
        grid, mass = new, density * _trapezoid_weights(new)
        out.append((grid, mass))
    return tuple(out)


def _beyond(design: SequentialDesign, look: int, z: np.ndarray) -> np.ndarray:
    # P0(no crossing before ``look``, Z_look >= z).
    if look == 1:
        tail: np.ndarray = stats.norm.sf(z)
        return tail
    grid, mass = _survivors(design)[look - 2]
    prev, now = (look - 1) / design.n_looks, look / design.n_looks
    step = math.sqrt(now - prev)
    flat = np.ravel(z)
    out = np.empty(flat.shape)
    for start in range(0, flat.size, 4096):
        part = flat[start : start + 4096, None]
        tail = stats.norm.sf((part * math.sqrt(now) - grid[None, :] * math.sqrt(prev)) / step)
        out[start : start + 4096] = tail @ mass
    return out.reshape(np.shape(z))


def stagewise(design: SequentialDesign, look: int | np.ndarray, p_look: np.ndarray) -> np.ndarray:
    """Stagewise p-value of a mean-difference test read at ``look`` (look p-value ``p_look``).

    Args:
        design: the sequential design.
        look: the look the cell stopped at (scalar, or an array broadcast with ``p_look``).
        p_look: the look's one-sided p-value(s); NaN stays NaN.

    Returns:
        ``A(t_{j-1}) + P0(no earlier crossing, Z_j >= z)`` where the look crossed its boundary,
        else 1.
    """
    p = np.asarray(p_look, dtype=float)
    looks = np.broadcast_to(np.asarray(look), p.shape)
    bounds = np.asarray(boundaries(design))
    out = np.where(np.isnan(p), np.nan, 1.0)
    with np.errstate(divide="ignore"):
        z = stats.norm.isf(p)
    for j in np.unique(looks):
        crossed = (looks == j) & (z >= bounds[j - 1] - 1e-9) & ~np.isnan(p)
        if crossed.any():
            out[crossed] = spent_before(design, int(j)) + _beyond(design, int(j), z[crossed])
    return np.minimum(out, 1.0)


def bonferroni_over_looks(
    design: SequentialDesign, look: int | np.ndarray, p_look: np.ndarray
) -> np.ndarray:
    """The broken-prompt check's p-value: ``A(t_{j-1}) + p_j`` if it broke at ``look``, else 1."""
    p = np.asarray(p_look, dtype=float)
    looks = np.broadcast_to(np.asarray(look), p.shape)
    out = np.ones(p.shape)
    for j in np.unique(looks):
        hit = (looks == j) & (p <= increment(design, int(j)))
        out[hit] = spent_before(design, int(j)) + p[hit]
    return out
