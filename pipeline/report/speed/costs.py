"""What a variant's speed costs beyond its kernel (pure): the KV pool's size and the SGLang release.

SGLang 0.5.19-0.5.22 copy the layer's whole KV pool on every fmha_v2 prefill, so its prefill time
there grows with the pool (``--mem-fraction-static``, ``--max-total-tokens``), and the same kernel
is faster or slower against FA3 depending on the release. Two questions a speed table cannot
answer on its own, answered from the same speed rows:

- **Pool**: one variant, release and shape measured at two or more pool sizes (the server's
  ``max_total_num_tokens``): the largest pool's median cost over the smallest's, with a 95%
  bootstrap interval. Above 1 with the interval: the time has a part that grows with the pool.
- **Release**: one variant and shape whose ratio to its baseline (of the same release) was
  measured on two or more releases, at one KV pool size where they share one: each release's
  ratio and interval. Two intervals that do not overlap: the variant's speed depends on the
  release.

Both compare separate server starts, so where the report holds an A/A (``restart_noise``) each
interval is first stretched by its shape's A/A band: a restart alone never reads as a cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from backends.version_ranges import VersionError, parse_version
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.ratios import SpeedRow, costs, kv_pool, ratio_interval
from pipeline.report.speed.restart_noise import clears, widened


def release_of(cell: CellRecord) -> str | None:
    """The SGLang release the cell ran on, as it recorded it (None: not recorded)."""
    return cell.result.cell.sglang_version or None


def mem_fraction_of(cell: CellRecord) -> float | None:
    """The server's ``mem_fraction_static`` as ``/server_info`` reported it, if it did."""
    found = cell.result.observed.get("mem_fraction_static")
    return float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None


@dataclass(frozen=True)
class PoolCost:
    """One variant at one shape on one release, measured at several KV pool sizes."""

    rows: tuple[SpeedRow, ...]  # by pool size, smallest first
    ratio: float  # the largest pool's median cost / the smallest's (above 1: the pool costs)
    ratio_ci: tuple[float, float]

    @property
    def grows(self) -> bool:
        """The interval, stretched by the A/A band, says the larger pool is slower."""
        return clears(widened(self.ratio_ci, self.rows[0].aa_band)[0])


@dataclass(frozen=True)
class ReleaseCost:
    """One variant's ratio to its baseline at one shape, on each release that measured it."""

    rows: tuple[SpeedRow, ...]  # by release

    @property
    def depends(self) -> bool:
        """Two releases' intervals do not overlap: the release moved the variant's speed."""
        spans = [widened(r.ratio_ci, r.aa_band) for r in self.rows if r.ratio_ci is not None]
        return any(a[1] < b[0] or b[1] < a[0] for i, a in enumerate(spans) for b in spans[i + 1 :])


Groups = dict[tuple[object, ...], list[SpeedRow]]


def _group(rows: Sequence[SpeedRow], with_release: bool) -> Groups:
    groups: Groups = {}
    for row in rows:
        c = row.cell
        key = (c.gpu, c.model, c.variant, c.kv_dtype, c.skip_prefill, c.skip_decode, row.point.key)
        groups.setdefault((*key, release_of(c)) if with_release else key, []).append(row)
    return groups


def pool_costs(rows: Sequence[SpeedRow]) -> list[PoolCost]:
    """Each variant, release and shape timed at two or more known pool sizes."""
    found = []
    for group in _group(rows, with_release=True).values():
        sized = sorted((r for r in group if kv_pool(r.cell) and costs(r.point)), key=_pool)
        if len({kv_pool(r.cell) for r in sized}) < 2:
            continue
        small, large = costs(sized[0].point), costs(sized[-1].point)
        ratio = float(np.median(large) / np.median(small))
        found.append(PoolCost(tuple(sized), ratio, ratio_interval(large, small)))
    return found


def _pool(row: SpeedRow) -> int:
    return kv_pool(row.cell) or 0


def release_costs(rows: Sequence[SpeedRow]) -> list[ReleaseCost]:
    """Each variant and shape whose ratio to its baseline is known on two or more releases.

    Where two releases ran it at one KV pool size (each against a baseline at that pool), there
    is one comparison per such pool: on a release that copies the pool the ratio depends on it,
    so rows of different pools are never set side by side. Else one row per release, the one
    at its baseline's pool where there is one.
    """
    found = []
    for group in _group(rows, with_release=False).values():
        paired = [r for r in group if r.ratio is not None and release_of(r.cell) is not None]
        for same in _by_shared_pool(paired) or [paired]:
            by_release = {release_of(r.cell): r for r in sorted(same, key=_same_pool)}
            ordered = tuple(by_release[k] for k in sorted(by_release, key=_ver))
            if len(ordered) >= 2:
                found.append(ReleaseCost(ordered))
    return found


def _by_shared_pool(rows: Sequence[SpeedRow]) -> list[list[SpeedRow]]:
    """The rows at their baseline's pool, one list per pool size two or more releases share."""
    pools: dict[int, list[SpeedRow]] = {}
    for row in rows:
        if _same_pool(row) and kv_pool(row.cell):
            pools.setdefault(_pool(row), []).append(row)
    return [pools[p] for p in sorted(pools) if len({release_of(r.cell) for r in pools[p]}) >= 2]


def _same_pool(row: SpeedRow) -> bool:
    return row.baseline is not None and kv_pool(row.cell) == kv_pool(row.baseline)


def _ver(release: str | None) -> tuple[tuple[int, ...], int, int]:
    try:
        found = parse_version(release or "")
    except VersionError:
        return (), 0, 0  # not a version: first
    return found.release, found.stage, found.stage_number
