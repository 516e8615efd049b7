"""Sequential early stopping over repeats: a group-sequential design with alpha spending.

How the cell job uses it (the design of cells written with ``statistic: null`` / ``observed``;
new cells use the anytime-valid ``pipeline.stats.anytime``): the baseline variant runs all its
repeats first; the candidate runs its repeats in rounds of ``repeats_per_round`` up to
``max_repeats``. After each round (a *look*) ``pipeline.measuring.sequential_run.look`` pairs the
candidate's samples so far with the baseline's by (question, repeat) and decides with
``signoff.look_verdict`` at ``signoff.look_levels``: "GO" or "NO-GO" stops the cell, None runs the
next round (at the last look None means the design ends undecided; the report then says
INCONCLUSIVE).

Why it keeps the error rates: each of the two one-sided tests (GO rejects "drop >= margin",
NO-GO rejects "drop <= margin") gets its own Lan-DeMets alpha-spending function, by default the
O'Brien-Fleming type ``alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``, with information fraction
``t = look / n_looks`` (repeats add equal information). The critical value at each look is the
one that spends exactly ``alpha(t_j) - alpha(t_{j-1})`` given that earlier looks did not cross,
under the canonical joint distribution of the z-statistics (independent increments), computed by
numerical integration of the standard recursion (Jennison & Turnbull, ch. 19) with scipy's normal.
Both boundaries are non-binding, so stopping on one side only makes the other test conservative,
and the probability of a false GO (or a false NO-GO) over all looks is at most ``alpha``.
Early looks are very strict (about z = 5.5 at 2 of 16 repeats), so a cell stops early only on
clear evidence, and the last look is close to the fixed design's critical value.

Checked by simulation in ``benchmarks/signoff_sim/release_sim.py`` and
``benchmarks/signoff_rules_comparison.py``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from pipeline.stats.look_schedule import ALPHA_LOOKS, LookSchedule

SPENDING = ("obrien_fleming", "pocock")
STATISTICS = ("eprocess", "null", "observed")
_GRID_POINTS = 2001
_GRID_LOW = -9.0


@dataclass(frozen=True)
class SequentialDesign:
    """Rounds of repeats with a look after each round.

    Attributes:
        max_repeats: repeats at the last look (e.g. 16).
        repeats_per_round: repeats added per round (e.g. 2); must divide ``max_repeats``.
        alpha: one-sided error rate of each of the two decisions over all looks.
        margin: the largest acceptable drop (accuracy fraction, 0.02 = 2 points).
        spending: "obrien_fleming" (default) or "pocock" (Lan-DeMets forms).
        family: candidates whose NO-GO alarms share ``alpha`` (Bonferroni: each NO-GO test,
            and the broken-prompt check, spends ``alpha / family``). Known before the first
            look (the sweep's ``multirun.yaml``), so a look's NO-GO and the report's are the
            same decision. GO needs no split (the release is GO only if every cell is).
        statistic: "eprocess" (the anytime-valid design of ``pipeline.stats.anytime``: what
            cells write since; the spending function and ``max_repeats`` then only plan the
            run, a look may go past it), "null" (group-sequential, the SE each test reads
            grown to where its null holds, ``pipeline.stats.null_variance``) or "observed"
            (group-sequential, the SE at the estimate: the oldest cells, read as they stopped).
        broken_share: the broken-prompt check's share of NO-GO's alpha, the mean test getting
            the rest (``pipeline.stats.nogo_split``); None: no split (cells written before it,
            and the group-sequential design), each check at the full NO-GO level.
        planned_looks: the looks the anytime design plans its alpha over (``anytime.look_weight``;
            later looks share what is left); None: every look (``n_looks``). A greedy server's
            repeats are copies within a start, so its design plans one look (``planned``).
        alpha_looks: which looks of the anytime design spend alpha (``look_schedule``):
            "doubling" (what cells write since: rounds 1, 2, 4, ... and the plan's last);
            None: "every" look, as cells written before it ran.
    """

    max_repeats: int
    repeats_per_round: int
    alpha: float = 0.05
    margin: float = 0.02
    spending: str = "obrien_fleming"
    family: int = 1
    statistic: str = "observed"
    broken_share: float | None = None
    planned_looks: int | None = None
    alpha_looks: str | None = None

    def __post_init__(self) -> None:
        if self.repeats_per_round < 1 or self.max_repeats < self.repeats_per_round:
            raise ValueError(
                f"need 1 <= repeats_per_round ({self.repeats_per_round}) <= "
                f"max_repeats ({self.max_repeats})"
            )
        if self.max_repeats % self.repeats_per_round:
            raise ValueError(
                f"repeats_per_round={self.repeats_per_round} must divide "
                f"max_repeats={self.max_repeats}"
            )
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha={self.alpha} must be in (0, 0.5)")
        if self.margin < 0:
            raise ValueError(f"margin={self.margin} must be >= 0 (a fraction, 0.02 = 2 points)")
        if self.spending not in SPENDING:
            raise ValueError(f"spending={self.spending!r}: use one of {SPENDING}")
        if self.statistic not in STATISTICS:
            raise ValueError(f"statistic={self.statistic!r}: use one of {STATISTICS}")
        if isinstance(self.family, bool) or not isinstance(self.family, int) or self.family < 1:
            raise ValueError(f"family={self.family!r} must be an integer >= 1 (candidates)")
        if self.broken_share is not None and not 0 < self.broken_share < 1:
            raise ValueError(f"broken_share={self.broken_share!r} must be in (0, 1) or absent")
        planned = self.planned_looks
        if planned is not None and (
            isinstance(planned, bool) or not isinstance(planned, int) or planned < 1
        ):
            raise ValueError(f"planned_looks={planned!r} must be an integer >= 1 or absent")
        if self.alpha_looks is not None and self.alpha_looks not in ALPHA_LOOKS:
            raise ValueError(f"alpha_looks={self.alpha_looks!r}: one of {ALPHA_LOOKS} or absent")

    def side(self, go: bool) -> SequentialDesign:
        """The one-family design of GO's test (``alpha``) or NO-GO's (``alpha / family``)."""
        if self.family == 1:
            return self
        alpha = self.alpha if go else self.alpha / self.family
        return SequentialDesign(
            self.max_repeats, self.repeats_per_round, alpha, self.margin, self.spending, 1,
            self.statistic, self.broken_share, self.planned_looks, self.alpha_looks,
        )  # fmt: skip

    @property
    def n_looks(self) -> int:
        """Number of looks (rounds)."""
        return self.max_repeats // self.repeats_per_round

    @property
    def planned(self) -> int:
        """Looks the anytime design spreads its planned alpha over (``planned_looks``)."""
        return self.n_looks if self.planned_looks is None else min(self.planned_looks, self.n_looks)

    @property
    def schedule(self) -> LookSchedule:
        """Where the anytime design spends each check's alpha (``pipeline.stats.look_schedule``)."""
        return LookSchedule(self.repeats_per_round, self.planned, self.alpha_looks or "every")

    def repeats_at(self, look: int) -> int:
        """Repeats per question after round ``look`` (1-based)."""
        self._check_look(look)
        return look * self.repeats_per_round

    def _check_look(self, look: int) -> None:
        if not 1 <= look <= self.n_looks:
            raise ValueError(f"look={look} must be in 1..{self.n_looks}")


def spent_alpha(fraction: float, alpha: float, spending: str) -> float:
    """Cumulative alpha spent by information fraction ``fraction`` (Lan-DeMets forms)."""
    if fraction <= 0:
        return 0.0
    t = min(fraction, 1.0)
    if spending == "obrien_fleming":
        return float(2 * stats.norm.sf(stats.norm.isf(alpha / 2) / math.sqrt(t)))
    if spending == "pocock":
        return float(alpha * math.log(1 + (math.e - 1) * t))
    raise ValueError(f"spending={spending!r}: use one of {SPENDING}")


@functools.lru_cache(maxsize=64)
def boundaries(design: SequentialDesign) -> tuple[float, ...]:
    """Critical z-values of one one-sided test at each look (the same for GO and NO-GO)."""
    fractions = [j / design.n_looks for j in range(1, design.n_looks + 1)]
    spent = [spent_alpha(t, design.alpha, design.spending) for t in fractions]
    increments = np.diff([0.0, *spent])
    return tuple(_solve_boundaries(fractions, list(increments)))


def _solve_boundaries(fractions: list[float], increments: list[float]) -> list[float]:
    bounds = [float(stats.norm.isf(increments[0]))]
    grid = np.linspace(_GRID_LOW, bounds[0], _GRID_POINTS)
    density = stats.norm.pdf(grid)
    for j in range(1, len(fractions)):
        prev, now = fractions[j - 1], fractions[j]
        step = math.sqrt(now - prev)
        mass = density * _trapezoid_weights(grid)

        shift = grid * math.sqrt(prev)

        def crossing(
            c: float,
            mass: np.ndarray = mass,
            shift: np.ndarray = shift,
            now: float = now,
            step: float = step,
        ) -> float:
            # P(not stopped before, Z_j >= c): mass times the chance each path ends above c.
            return float(np.sum(mass * stats.norm.sf((c * math.sqrt(now) - shift) / step)))

        target = increments[j]
        if target <= 1e-15:
            bounds.append(math.inf)
            continue
        c = optimize.brentq(lambda c, target=target: crossing(c) - target, -8.0, 40.0, xtol=1e-10)
        bounds.append(float(c))
        new_grid = np.linspace(_GRID_LOW, c, _GRID_POINTS)
        kernel = stats.norm.pdf(
            (new_grid[:, None] * math.sqrt(now) - grid[None, :] * math.sqrt(prev)) / step
        )
        density = kernel @ mass * math.sqrt(now) / step
        grid = new_grid
    return bounds


def _trapezoid_weights(grid: np.ndarray) -> np.ndarray:
    h = np.diff(grid)
    weights = np.zeros_like(grid)
    weights[:-1] += h / 2
    weights[1:] += h / 2
    return weights


def level_at(design: SequentialDesign, look: int) -> float:
    """Nominal one-sided level a look's p-value is compared with."""
    design._check_look(look)
    return float(stats.norm.sf(boundaries(design)[look - 1]))
