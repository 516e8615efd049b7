"""The issue's item 7 requirements, evaluated on ``simulation`` results.

Shared by the slow test and ``benchmarks/signoff_rules_comparison.py``, so the table and the test
cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.stats.noninferiority import GO, NO_GO

from .simulation import (
    PAIRED,
    SHAPES,
    Benchmark,
    Setup,
    Tally,
    key,
    scenarios,
    sequential_key,
    simulate,
    with_drop,
)

Results = dict[str, dict[str, Tally]]


@dataclass(frozen=True)
class Requirement:
    """One requirement: ``value`` compared with ``bound`` (``<``, ``<=`` or ``>=``).

    For error rates ("at most alpha, within Monte Carlo error") the allowance is three Monte Carlo
    standard errors of a rate equal to the bound; powers and coverage get no allowance.
    """

    design: str
    text: str
    value: float
    op: str
    bound: float
    allowance: float

    @property
    def met(self) -> bool:
        """Whether the simulated value meets the bound."""
        if self.op == "<":
            return self.value < self.bound
        if self.op == "<=":
            return self.value <= self.bound + self.allowance
        return self.value >= self.bound - self.allowance


def run_all(bench: Benchmark, setup: Setup) -> Results:
    """Simulate every scenario of ``scenarios(setup.margin)`` with one generator (seeded)."""
    rng = np.random.default_rng(setup.seed)
    return {
        label: simulate(bench.p, with_drop(bench, drop, shape), setup, rng)
        for label, drop, shape in scenarios(setup.margin)
    }


def _label(drop: float, shape: str) -> str:
    return f"{drop * 100:g}-pt drop, {shape}"


def check(results: Results, setup: Setup) -> list[Requirement]:
    """All requirements of the fixed design (``fixed_repeats[0]``) and the sequential one."""
    mc = 3 * math.sqrt(setup.alpha * (1 - setup.alpha) / setup.reps)
    fixed = key(PAIRED, setup.fixed_repeats[0])
    seq = sequential_key(setup.design)
    out: list[Requirement] = []
    for name in (fixed, seq):
        out.append(
            Requirement(
                name,
                "false NO-GO, no true drop",
                results["no drop"][name].rate(NO_GO),
                "<=",
                setup.alpha,
                mc,
            )
        )
        for shape in SHAPES:
            out.append(
                Requirement(
                    name,
                    f"false GO, true drop = margin ({shape})",
                    results[_label(setup.margin, shape)][name].rate(GO),
                    "<=",
                    setup.alpha,
                    mc,
                )
            )
    out.append(
        Requirement(fixed, "GO, no true drop", results["no drop"][fixed].rate(GO), ">=", 0.8, 0.0)
    )
    for shape in SHAPES:
        out.append(
            Requirement(
                fixed,
                f"NO-GO, true 5-pt drop ({shape})",
                results[_label(0.05, shape)][fixed].rate(NO_GO),
                ">=",
                0.8,
                0.0,
            )
        )
        out.append(
            Requirement(
                seq,
                f"NO-GO, true 4-pt drop ({shape})",
                results[_label(0.04, shape)][seq].rate(NO_GO),
                ">=",
                0.8,
                0.0,
            )
        )
    for label, tallies in results.items():
        cov = tallies[fixed].coverage
        out.append(
            Requirement(
                fixed, f"95% interval coverage, {label}", float(cov or 0.0), ">=", 0.93, 0.0
            )
        )
        out.append(
            Requirement(
                seq,
                f"mean repeats < {setup.design.max_repeats}, {label}",
                tallies[seq].mean_repeats,
                "<",
                setup.design.max_repeats,
                0.0,
            )
        )
    return sorted(out, key=lambda r: r.design != fixed)
