"""A skip-softmax factor's logprob parity, as the frontier reads it (issue 39; pure).

The frontier names the largest factor inside the parity band beside the largest GO one; this is
what it reads of a cell's ``parity_vs_baseline`` check (by the kind's name: ``speed/`` reads
checks, never makes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.report.judge.parity_numbers import ParityNumbers, band_of
from pipeline.report.judge.verdicts import Check

PARITY_KIND = "parity_vs_baseline"


@dataclass(frozen=True)
class Divergence:
    """A factor's logprob parity against the baseline (its ``parity_vs_baseline`` check)."""

    verdict: str
    metric: str | None
    estimate: float | None
    upper: float | None
    band: float | None  # None: no A/A, no band


def divergence_of(checks: Sequence[Check]) -> Divergence | None:
    """The cell's parity reading (None: it ran no parity phase against the baseline)."""
    found = [c for c in checks if c.kind.name == PARITY_KIND]
    if not found:
        return None
    n = found[0].numbers
    if not isinstance(n, ParityNumbers):  # no baseline, or its files unreadable
        return Divergence(found[0].verdict, None, None, None, None)
    band = band_of(n)
    return Divergence(found[0].verdict, n.metric, n.divergence, n.upper, band[0] if band else None)
