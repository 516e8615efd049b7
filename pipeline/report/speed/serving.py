"""The serving phase against the baseline and against speculation off (pure): the report's rows.

Per cell, bucket and concurrency: its output tokens/s (per GPU) and tokens/s per user, their
ratios to the baseline's same level (the accuracy checks' pairing rule, among cells whose
speculation is set alike: a speculation-off candidate pairs with the speculation-off baseline),
and speculation's own speed-up, the cell's figures over the cell of its variant, model, KV dtype,
GPU and release without speculation (``serving.speculation=false``). Every pair (baseline,
speculation off, A/A) served the same prompts (random words, one eval's, or with
``eval:PATTERN`` the same eval per bucket: the block's ``prompts`` text names each bucket's, so
it alone decides): a ratio across two prompt sources would measure the workload, not the
variant. A level is run once, so no interval comes from repeats: the A/A band (two starts of one
engine configuration, the largest ratio they gave at that level) is the noise a ratio must clear
to be called faster or slower; an A/A's own ratio made the band and is shown as the A/A.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from pipeline.report.judge.check_kinds import SPEED_VS_BASELINE
from pipeline.report.judge.check_numbers import SpeedNumbers, SpeedShapeNumbers
from pipeline.report.judge.pairing import find_baseline
from pipeline.report.judge.verdicts import INCONCLUSIVE, NO_BASELINE, Check, make_check
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import ServingTolerance
from pipeline.report.speed.band_checks import slowdown_verdict
from pipeline.report.speed.restart_noise import beyond, engine_of, same_engine, scope_of, widened
from pipeline.results.serving_block import ServingBlock, ServingPoint

LevelKey = tuple[int, int]  # bucket, concurrency


def block_of(cell: CellRecord) -> ServingBlock | None:
    """The cell's serving block when the cell is ok and ran one."""
    return cell.result.serving if cell.status == "ok" else None


def spec_on(cell: CellRecord) -> bool:
    """Whether the cell served with speculation (the block says so; a cell without one: True)."""
    block = cell.result.serving
    return block.speculation if block is not None else True


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


@dataclass(frozen=True)
class ServingRow:
    """One cell at one level: its figures, the ratios to its baseline and to speculation off."""

    cell: CellRecord
    point: ServingPoint
    speculation: bool
    baseline: CellRecord | None
    ratio: float | None  # output tokens/s over the baseline's (above 1: more throughput)
    user_ratio: float | None  # tokens/s per user over the baseline's
    aa_band: float | None
    spec_off: CellRecord | None  # the same variant without speculation
    spec_speedup: float | None  # output tokens/s with speculation over without
    spec_user_speedup: float | None
    note: str = ""
    aa_pair: bool = False  # it and its baseline: an A/A (restart_noise.same_engine), the band

    @property
    def beyond_aa(self) -> str | None:
        """What the throughput ratio says against the A/A band (None: no band or no ratio).

        A level runs once, so the ratio is its own interval (``restart_noise.beyond``'s rule).
        """
        ratio = (self.ratio, self.ratio) if self.ratio is not None else None
        return beyond(ratio, self.aa_band, self.aa_pair)


def aa_bands(cells: Sequence[CellRecord]) -> dict[tuple[object, bool, LevelKey], float]:
    """Per scope, speculation flag and level: the largest throughput ratio two starts gave."""
    groups: dict[tuple[object, ...], list[CellRecord]] = {}
    for cell in cells:
        if block_of(cell) is not None:
            groups.setdefault((*engine_of(cell), spec_on(cell), prompts_of(cell)), []).append(cell)
    bands: dict[tuple[object, bool, LevelKey], float] = {}
    for group in groups.values():
        for a, b in combinations(sorted(group, key=lambda c: c.id), 2):
            theirs = _points(b)
            for key, point in _points(a).items():
                r = _ratio(point.output_tokens_per_s, _tps(theirs.get(key)))
                if r:
                    found = (scope_of(a), spec_on(a), key)
                    bands[found] = max(r, 1.0 / r, bands.get(found, 1.0))
    return bands


def _points(cell: CellRecord) -> dict[LevelKey, ServingPoint]:
    block = block_of(cell)
    return {p.key: p for p in block.points} if block is not None else {}


def _tps(point: ServingPoint | None) -> float | None:
    return point.output_tokens_per_s if point is not None else None


def _user(point: ServingPoint | None) -> float | None:
    return point.tokens_per_s_per_user if point is not None else None


def prompts_of(cell: CellRecord) -> str | None:
    """What the cell's serving prompts were: random words, an eval's, or each bucket's eval."""
    block = block_of(cell)
    return block.prompts if block is not None else None


def _same_variant(cell: CellRecord, other: CellRecord) -> bool:
    # Other prompts are another workload: a speed-up across them would be the prompts' own.
    def key(c: CellRecord) -> tuple[object, ...]:
        return c.variant, c.model, c.kv_dtype, c.gpu, scope_of(c), prompts_of(c)

    return key(cell) == key(other)


def spec_off_of(cell: CellRecord, cells: Sequence[CellRecord]) -> CellRecord | None:
    """The cell's variant served without speculation (None: none in the report)."""
    found = [c for c in cells if block_of(c) and not spec_on(c) and _same_variant(cell, c)]
    return max(found, key=lambda c: c.result.ended_at or "", default=None)


def serving_rows(
    cells: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> list[ServingRow]:
    """A row per ok cell with a serving block and per level it ran."""
    serving = [c for c in cells if block_of(c) is not None]
    bands = aa_bands(serving)
    rows = []
    for cell in serving:
        alike = [c for c in serving
                 if spec_on(c) == spec_on(cell) and prompts_of(c) == prompts_of(cell)]  # fmt: skip
        base, note = find_baseline(cell, alike, baseline, match)
        base = None if base is cell else base
        off = spec_off_of(cell, serving) if spec_on(cell) else None
        theirs, offs = _points(base) if base else {}, _points(off) if off else {}
        for key, point in sorted(_points(cell).items()):
            rows.append(ServingRow(
                cell, point, spec_on(cell), base,
                _ratio(point.output_tokens_per_s, _tps(theirs.get(key))),
                _ratio(point.tokens_per_s_per_user, _user(theirs.get(key))),
                bands.get((scope_of(cell), spec_on(cell), key)), off,
                _ratio(point.output_tokens_per_s, _tps(offs.get(key))),
                _ratio(point.tokens_per_s_per_user, _user(offs.get(key))),
                _note(cell, base, off, "the baseline" if base is None and cell.variant == baseline
                      else note), same_engine(cell, base),
            ))  # fmt: skip
    return rows


def _note(cell: CellRecord, base: CellRecord | None, off: CellRecord | None, said: str) -> str:
    """The row's note, and where the cells it is read against could use other CPU counts."""
    mine, notes = cell.result.provenance.cpus, [said]
    for other, whose in ((base, "the baseline's"), (off, "its speculation-off cell's")):
        theirs = other.result.provenance.cpus if other is not None else None
        if mine is not None and theirs is not None and mine != theirs:
            notes.append(f"{mine} CPUs against {whose} {theirs}")
    return "; ".join(filter(None, notes))


def stops_paying(rows: Sequence[ServingRow]) -> dict[tuple[str, int], int | None]:
    """Per cell and bucket, the lowest concurrency at which speculation's speed-up is <= 1.

    None: speculation paid at every level measured. Only rows with a speculation-off pair count.
    """
    out: dict[tuple[str, int], int | None] = {}
    for row in sorted(rows, key=lambda r: r.point.concurrency):
        if row.spec_speedup is None:
            continue
        key = (row.cell.id, row.point.bucket)
        out.setdefault(key, None)
        if out[key] is None and row.spec_speedup <= 1.0:
            out[key] = row.point.concurrency
    return out


def serving_checks(
    rows: Sequence[ServingRow], bands: ServingTolerance, baseline: str
) -> list[Check]:
    """A ``speed_vs_baseline`` check per candidate level whose band ``conf/tolerance`` sets.

    Judged as a speed band is (``band_checks.slowdown_verdict``) on the throughput slowdown, with
    the A/A band as its only interval (a level runs once): without an A/A it is INCONCLUSIVE. An
    A/A's second start is not a candidate (``band_checks.speed_checks``: its band is its own).
    """
    out = []
    for row in rows:
        band = bands.band(row.point.concurrency, row.point.bucket)
        if band is not None and row.cell.variant != baseline and not row.aa_pair:
            out.append(_serving_check(row, band, baseline))
    return out


def _serving_check(row: ServingRow, band: float, baseline: str) -> Check:
    p, spec = row.point, "on" if row.speculation else "off"
    name = f"serving c{p.concurrency} x {p.bucket} (spec {spec})"
    shape = SpeedShapeNumbers("serving", p.concurrency, p.bucket, band)
    if row.ratio is None or row.baseline is None:
        message = f"serving band {band:g}x set, but no {baseline} serving level to compare with"
        return make_check(row.cell, name, SPEED_VS_BASELINE, NO_BASELINE, message, shape)
    low, high = widened((row.ratio, row.ratio), row.aa_band)
    interval = (1.0 / high, 1.0 / low)
    verdict = slowdown_verdict(interval, band) if row.aa_band else INCONCLUSIVE
    why = "" if row.aa_band else "no A/A at this level: one run has no interval"
    numbers = SpeedNumbers(
        "serving", p.concurrency, p.bucket, band, slowdown=1.0 / row.ratio,
        slowdown_low=interval[0], slowdown_high=interval[1], ratio=row.ratio,
        ratio_ci95=[row.ratio, row.ratio], aa_band=row.aa_band, same_kernels=False,
        baseline=row.baseline.label, baseline_folder=str(row.baseline.folder or row.baseline.id),
    )  # fmt: skip
    return make_check(row.cell, name, SPEED_VS_BASELINE, verdict, why, numbers)
