"""Restart noise (pure): how far two starts of one engine configuration differ in speed.

A speed ratio's bootstrap interval (``ratios.ratio_interval``) resamples the repeats inside
each cell, on one server start. It knows nothing of what a new start changes: CUDA graphs, memory
placement, the scheduler's CPUs, clocks. An A/A measures that: the same engine configuration (GPU,
model, release, KV dtype and pool, skip-softmax factors, the kernels each phase ran, layout,
speculative recipe) started twice, under one variant name or two (``fa3`` and ``fa3_repeat``, or a
factor-0 cell run again). Per GPU, model, release and shape, the band is the largest A/A ratio
seen, as a factor of 1 or more (1.10: two starts differed by 10%). A ratio is called faster or
slower only when its interval lies wholly beyond the band (above it, or below its inverse); else
it is within the A/A, on the band's edge included. A ratio between the two starts of an A/A is
never judged against the band: it is what made the band (``AA``). On the live trained model,
whose prefill is 8-22 ms of scheduler time, two A/A pairs differed by up to 28% where single
cells' intervals excluded 1 (benchmarks/live_h200/README.md, section 10). One or two A/A pairs
show what restarts did, not a bound on what they can do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.ratios import compare_points, kv_pool

FASTER, SLOWER, WITHIN = "faster", "slower", "within the A/A"
# The ratio of an A/A's own two starts: the band is the largest such ratio, so judging it against
# the band would judge the band against itself (a tie, or a rounding bit past it, read "faster").
AA = "the A/A itself"
# A ratio must clear the band's edge by more than rounding: the band and the ratio are one
# quotient taken in opposite directions (a/b against 1/(b/a)), which differ in the last bits.
EDGE = 1e-9
NO_AA = (
    "No A/A here (one engine configuration started twice): each interval covers the repeats of "
    "one server start, not what a new start moves; add the baseline again under another name "
    "(backend=fa3,fa3_repeat,...) to measure it."
)
ShapeKey = tuple[str, int, int]  # phase, batch, prompt tokens (SpeedPoint.key)
Scope = tuple[str, str, str]  # gpu, model, SGLang release


def scope_of(cell: CellRecord) -> Scope:
    """Where an A/A's band applies: the same GPU, model and SGLang release."""
    return cell.gpu, cell.model, cell.result.cell.sglang_version or "?"


def engine_of(cell: CellRecord) -> tuple[object, ...]:
    """What two starts must share to be an A/A (the variant's name aside, when kernels are known).

    Without the kernels the server ran (``runs`` empty) the variant's name stands in for them, so
    two variants of unknown kernels never pair.
    """
    runs = tuple(sorted((role, str(kernel)) for role, kernel in cell.result.runs.items()))
    spec = json.dumps(cell.speculative or {}, sort_keys=True, default=str)
    return (*scope_of(cell), cell.kv_dtype, kv_pool(cell), cell.prefill_factor,
            str(cell.skip_decode), runs or cell.variant, cell.layout, spec)  # fmt: skip


def same_engine(cell: CellRecord, other: CellRecord | None) -> bool:
    """Whether two cells are an A/A: one engine configuration started twice (two cells, not one)."""
    return other is not None and other.id != cell.id and engine_of(cell) == engine_of(other)


@dataclass(frozen=True)
class RestartNoise:
    """The A/A bands of a report: per scope and shape, the largest ratio two starts gave."""

    bands: dict[tuple[Scope, ShapeKey], float] = field(default_factory=dict)
    pairs: dict[Scope, tuple[str, ...]] = field(default_factory=dict)  # "A vs B" labels

    def band(self, cell: CellRecord, key: ShapeKey) -> float | None:
        """The band at ``cell``'s scope and the shape ``key`` (None: no A/A measured it)."""
        return self.bands.get((scope_of(cell), key))

    def said(self, cells: Iterable[CellRecord]) -> str:
        """The sentence a speed table adds: which A/A pairs set its bands, or that none did."""
        found = sorted({p for c in cells for p in self.pairs.get(scope_of(c), ())})
        if not found:
            return NO_AA
        return (
            f"A/A (one engine configuration started twice: {'; '.join(found)}): each ratio's "
            "interval covers the repeats of one start only, so a variant is called faster or "
            "slower only where that interval lies beyond the largest A/A ratio at its shape "
            f"(aa_band in summary.json), else 'within the A/A'; an A/A's own ratio, '{AA}', is "
            "that band and never judged by it."
        )


def restart_noise(cells: Sequence[CellRecord]) -> RestartNoise:
    """The A/A bands of every pair of ``ok`` cells with speed that share an engine configuration."""
    groups: dict[tuple[object, ...], list[CellRecord]] = {}
    for cell in cells:
        if cell.status == "ok" and cell.result.speed is not None:
            groups.setdefault(engine_of(cell), []).append(cell)
    bands: dict[tuple[Scope, ShapeKey], float] = {}
    pairs: dict[Scope, set[str]] = {}
    for group in groups.values():
        for a, b in combinations(sorted(group, key=lambda c: c.id), 2):
            pairs.setdefault(scope_of(a), set()).add(f"{a.label} vs {b.label}")
            _add_pair(bands, scope_of(a), a, b)
    return RestartNoise(bands, {s: tuple(sorted(p)) for s, p in pairs.items()})


def _add_pair(
    bands: dict[tuple[Scope, ShapeKey], float], scope: Scope, a: CellRecord, b: CellRecord
) -> None:
    """Raise ``bands`` at each shape both starts measured to their ratio, if it is larger."""
    theirs = {p.key: p for p in b.result.speed.points} if b.result.speed else {}
    for point in a.result.speed.points if a.result.speed else ():
        other = theirs.get(point.key)
        ratio = compare_points(point, other)[0] if other is not None else None
        if ratio is not None and ratio > 0:
            spread = max(ratio, 1.0 / ratio)
            bands[(scope, point.key)] = max(spread, bands.get((scope, point.key), 1.0))


def widened(ratio_ci: tuple[float, float], band: float | None) -> tuple[float, float]:
    """The interval stretched by the A/A band on both sides (log scale); as it is without one."""
    factor = band or 1.0
    return ratio_ci[0] / factor, ratio_ci[1] * factor


def clears(ratio: float) -> bool:
    """Whether a ratio (already widened by the band) lies above 1 by more than rounding."""
    return ratio > 1.0 + EDGE


def beyond(
    ratio_ci: tuple[float, float] | None, band: float | None, aa_pair: bool = False
) -> str | None:
    """``faster`` / ``slower`` when the interval lies beyond the A/A band, else ``within the A/A``.

    ``AA`` for the ratio of an A/A's two starts (``aa_pair``, ``same_engine``): it made the band.
    An interval whose end sits on the band's edge is within it. None when there is no interval
    or no A/A measured the shape.
    """
    if ratio_ci is None:
        return None
    if aa_pair:
        return AA
    if band is None:
        return None
    low, high = widened(ratio_ci, band)
    if clears(low):
        return FASTER
    return SLOWER if clears(1.0 / high) else WITHIN
