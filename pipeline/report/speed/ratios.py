"""The speed of each variant against its baseline, per shape (pure): the report's speed rows.

A cell's speed phase (``result.json`` ``speed``) gives, per shape, a time per repeat. Its baseline
is the cell the accuracy checks pair it with (``pairing.find_baseline``: same model, KV dtype,
skip-softmax, GPU, speculative recipe) among the cells of its own SGLang release (a ratio across
releases would measure the release too: ``costs`` compares releases), so the A/A cell
(the baseline run again under another name) is reported like any variant. The ratio is the
baseline's median cost over the variant's (above 1: the variant is faster); the cost is the
prefill time for a prefill shape and the time per decoded token for a decode shape. Its 95%
interval is a percentile bootstrap over the repeats, each side resampled on its own: the two
cells ran one after the other on separate servers, nothing pairs their repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.report.judge.pairing import find_baseline
from pipeline.report.load.cells import CellRecord
from pipeline.results.speed_block import PREFILL, SpeedPoint

BOOTSTRAP_DRAWS = 4000


@dataclass(frozen=True)
class SpeedRow:
    """One variant at one shape: its median and spread, and its ratio to the baseline."""

    cell: CellRecord
    point: SpeedPoint
    baseline: CellRecord | None
    ratio: float | None  # baseline median cost / this median cost
    ratio_ci: tuple[float, float] | None
    note: str  # why there is no ratio, or how the baseline was chosen
    aa_band: float | None = None  # the A/A band at this shape (restart_noise; None: no A/A)
    same_kernels: bool = False  # this shape's phase ran the baseline's kernels (phase_kernels)
    aa_pair: bool = False  # it and its baseline: an A/A (restart_noise.same_engine), the band

    @property
    def median_ms(self) -> float | None:
        """The median of the repeats' times (the batch's prefill, or decode, span)."""
        return self.point.median_ms

    @property
    def spread_ms(self) -> tuple[float, float] | None:
        """Min and max of the repeats' times (None: no repeat was read)."""
        times = self.point.times_ms
        return (min(times), max(times)) if times else None

    @property
    def tokens_per_s(self) -> float | None:
        """Decode: the median of the repeats' decoded tokens per second (prefill: None)."""
        rates = self.point.tokens_per_s
        return float(np.median(rates)) if rates else None


def costs(point: SpeedPoint) -> tuple[float, ...]:
    """What the ratio compares, per repeat: ms of prefill, or ms per decoded token."""
    if point.phase == PREFILL:
        return point.times_ms
    return tuple(1000.0 / rate for rate in point.tokens_per_s if rate > 0)


def ratio_interval(
    base: Sequence[float], var: Sequence[float], seed: int = 0
) -> tuple[float, float]:
    """95% percentile-bootstrap interval of median(base) / median(var), each side resampled."""
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(np.asarray(base), size=(BOOTSTRAP_DRAWS, len(base))), axis=1)
    v = np.median(rng.choice(np.asarray(var), size=(BOOTSTRAP_DRAWS, len(var))), axis=1)
    low, high = np.percentile(b / v, [2.5, 97.5])
    return float(low), float(high)


def compare_points(
    point: SpeedPoint, base_point: SpeedPoint | None
) -> tuple[float | None, tuple[float, float] | None, str]:
    """Ratio, 95% interval and why there is none, of ``point`` against ``base_point``."""
    if base_point is None:
        return None, None, "the baseline has no speed at this shape"
    base, var = costs(base_point), costs(point)
    if not base or not var:
        return None, None, "no repeat measured on one side"
    ratio = float(np.median(base) / np.median(var))
    return ratio, ratio_interval(base, var), ""


def cell_rows(
    cell: CellRecord, pool: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> list[SpeedRow]:
    """The speed rows of one cell (none when it ran no speed phase)."""
    speed = cell.result.speed
    if speed is None or cell.status != "ok":
        return []
    if cell.variant == baseline:
        return [SpeedRow(cell, p, None, None, None, "the baseline") for p in speed.points]
    found, note = find_baseline(cell, same_release(cell, pool, baseline), baseline, match)
    if found is None and find_baseline(cell, pool, baseline, match)[0] is not None:
        note = (f"no baseline ran on SGLang {cell.result.cell.sglang_version}: a ratio to "
                "another release's would measure the release too")  # fmt: skip
    theirs = found.result.speed if found is not None else None
    by_key = {p.key: p for p in theirs.points} if theirs is not None else {}
    rows = []
    for point in speed.points:
        if found is None:
            rows.append(SpeedRow(cell, point, None, None, None, note))
            continue
        ratio, ci, why = compare_points(point, by_key.get(point.key))
        same = kernels_only_elsewhere(cell, found, point.phase)
        rows.append(SpeedRow(cell, point, found, ratio, ci, why or note, same_kernels=same))
    return rows


# The server roles (result.json ``runs``) whose kernels time each phase of a speed point.
PHASE_ROLES = {PREFILL: ("prefill",), "decode": ("decode", "verify", "draft")}


def phase_kernels(cell: CellRecord, phase: str) -> tuple[str, ...] | None:
    """The kernels the cell's server ran in ``phase``'s roles (None: it did not report them)."""
    runs = cell.result.runs
    roles = PHASE_ROLES.get(phase, ())
    if not roles or any(role not in runs for role in roles):
        return None
    return tuple(str(runs[role]) for role in roles)


def kernels_only_elsewhere(cell: CellRecord, base: CellRecord, phase: str) -> bool:
    """The two ran the same kernels in ``phase`` and differ in another phase's.

    Then the variant's ratio at that phase times two server starts of one kernel (SGLang 0.5.19's
    fmha_v2 is a prefill kernel: its cells decode with FA3, as the baseline does), not a kernel.
    """
    mine, theirs = phase_kernels(cell, phase), phase_kernels(base, phase)
    return mine is not None and mine == theirs and dict(cell.result.runs) != dict(base.result.runs)


def same_release(cell: CellRecord, pool: Sequence[CellRecord], baseline: str) -> list[CellRecord]:
    """The cells of ``pool`` on ``cell``'s SGLang release (or none recorded), of its KV pool if any.

    Baselines of the same pool where one ran: on a release that copies the pool, two pools
    differ in speed.
    """
    mine = cell.result.cell.sglang_version
    found = [c for c in pool if not mine or c.result.cell.sglang_version in (mine, None)]
    size = kv_pool(cell)
    same = [c for c in found if c.variant == baseline and size and kv_pool(c) == size]
    return same or found


def kv_pool(cell: CellRecord) -> int | None:
    """The server's KV pool in tokens (``/server_info`` ``max_total_num_tokens``), if it said."""
    found = cell.result.observed.get("max_total_num_tokens")
    return found if type(found) is int and found > 0 else None


def speed_rows(
    cells: Sequence[CellRecord], pool: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> list[SpeedRow]:
    """Every cell's speed rows, baselines taken from ``pool`` by the accuracy checks' rule."""
    return [row for cell in cells for row in cell_rows(cell, pool, baseline, match)]
