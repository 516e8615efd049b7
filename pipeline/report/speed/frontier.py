"""The skip-softmax frontier (pure): per factor of one variant, its accuracy verdict and speed gain.

A frontier is the cells of one variant (GPU, model, backend, KV dtype, SGLang release, decode
factor, layout, speculative recipe) that differ only in the prefill skip-softmax factor, two
factors at least. Per factor it shows the accuracy verdict against the report's baseline (the worst
of the accuracy checks: the paired mean test or McNemar, and broken prompts; per eval too), the
prefill speed gain over the same variant's factor-0 cell at each prefill shape both measured
(the factor-0 cell's median time over this cell's, with the speed table's bootstrap interval;
above 1: faster), the share of key tiles skipped where it was measured, and where the cells ran
the parity phase, the logprob divergence from the baseline against its band (issue 39). What a
user picks from it: the largest factor whose verdict is GO, the largest inside the parity band,
and what they gain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pipeline.report.judge.verdicts import GO, Check, worst
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.frontier_parity import PARITY_KIND, Divergence, divergence_of
from pipeline.report.speed.ratios import compare_points
from pipeline.report.speed.restart_noise import same_engine
from pipeline.report.speed.skip_fractions import skipped_fraction
from pipeline.results.speed_block import PREFILL, SpeedPoint

# The checks that compare a candidate's answers with the baseline's.
ACCURACY_KINDS = ("accuracy_vs_baseline", "mcnemar", "broken_prompts")
Key = tuple[str, ...]  # gpu, model, variant, kv dtype, release, decode factor, layout, spec
RELEASE = 4  # the release's place in a ``Key``
UNKNOWN_RELEASE = "?"  # a cell that recorded none (a MISSING job never wrote one)
NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Gain:
    """One prefill shape of one factor: its speed against the variant's factor-0 cell."""

    batch: int
    tokens: int
    median_ms: float | None  # this cell's median prefill time (None: not measured)
    ratio: float | None  # factor-0 median / this median (above 1: faster)
    ratio_ci: tuple[float, float] | None
    note: str  # why there is no ratio ("not measured", ...), or "" when there is one
    aa_band: float | None = None  # the A/A band at this shape (restart_noise; None: no A/A)
    aa_pair: bool = False  # a factor-0 start again beside the reference: the A/A, not a gain


@dataclass(frozen=True)
class FrontierPoint:
    """One factor of a frontier."""

    factor: float
    cell: CellRecord
    verdict: str  # the worst accuracy verdict over evals (the cell's verdict when none ran)
    eval_verdicts: dict[str, str]
    gains: tuple[Gain, ...]  # one per shape of the frontier, in its order
    skipped: float | None  # share of key tiles skipped (None: not measured)
    divergence: Divergence | None = None  # logprob parity (None: no parity phase)


@dataclass(frozen=True)
class Frontier:
    """The factors of one variant, smallest first, and the shapes their speed phases measured."""

    key: tuple[str, ...]  # gpu, model, variant, kv dtype, release, decode factor, layout, spec
    reference: CellRecord | None  # the factor-0 cell the gains are against (None: none ran)
    shapes: tuple[tuple[int, int], ...]  # prefill (batch, tokens), batch 1 first, then length
    points: tuple[FrontierPoint, ...]
    notes: tuple[str, ...] = ()  # cells whose release is not recorded: placed here, or left out

    @property
    def best(self) -> FrontierPoint | None:
        """The largest factor whose accuracy verdict is GO (None: no factor is GO)."""
        found = [p for p in self.points if p.verdict == GO]
        return found[-1] if found else None

    @property
    def inside_band(self) -> FrontierPoint | None:
        """The largest factor whose logprob parity is GO: inside the band (None: none is)."""
        found = [p for p in self.points if p.divergence and p.divergence.verdict == GO]
        return found[-1] if found else None

    @property
    def has_parity(self) -> bool:
        """Whether any factor ran the parity phase against the baseline."""
        return any(p.divergence is not None for p in self.points)


def factor_of(cell: CellRecord) -> float:
    """The cell's prefill skip-softmax factor, 0 for exact softmax (unset or 0)."""
    return cell.prefill_factor


def variant_key(cell: CellRecord) -> Key:
    """What frontier a cell belongs to: everything that names the variant but the factor."""
    spec = cell.speculative or {}
    release = cell.result.cell.sglang_version or UNKNOWN_RELEASE
    return (cell.gpu, cell.model, cell.variant, cell.kv_dtype, release, str(cell.skip_decode),
            cell.layout, str(spec.get("algorithm")))  # fmt: skip


def worst_per_eval(found: Iterable[tuple[str | None, str, str]]) -> dict[str, str]:
    """Per eval, the worst verdict of its accuracy checks; ``found``: (eval, kind, verdict)."""
    by_eval: dict[str, list[str]] = {}
    for name, kind, verdict in found:
        if kind in ACCURACY_KINDS and name:
            by_eval.setdefault(name, []).append(verdict)
    return {name: worst(verdicts) for name, verdicts in by_eval.items()}


def accuracy_verdicts(checks: Sequence[Check]) -> dict[str, str]:
    """Per eval, the worst of its accuracy checks against the baseline."""
    return worst_per_eval((c.eval, c.kind.name, c.verdict) for c in checks)


def prefill_points(cell: CellRecord | None) -> dict[tuple[int, int], SpeedPoint]:
    """The cell's prefill speed points by (batch, tokens) (none when it ran no speed phase)."""
    speed = cell.result.speed if cell is not None and cell.status == "ok" else None
    if speed is None:
        return {}
    return {(p.batch, p.prompt_tokens): p for p in speed.points if p.phase == PREFILL}


BandOf = Callable[[CellRecord, tuple[str, int, int]], float | None]  # RestartNoise.band


def gain(
    shape: tuple[int, int], mine: SpeedPoint | None, reference: SpeedPoint | None, is_ref: bool
) -> Gain:
    """The gain at one shape; the reference cell's own gain is 1 by definition."""
    batch, tokens = shape
    median = mine.median_ms if mine is not None else None
    if mine is None:
        return Gain(batch, tokens, None, None, None, NOT_MEASURED)
    if is_ref:
        return Gain(batch, tokens, median, 1.0, None, "the factor-0 reference")
    if reference is None:
        return Gain(batch, tokens, median, None, None, "the factor-0 cell did not measure it")
    ratio, interval, why = compare_points(mine, reference)
    return Gain(batch, tokens, median, ratio, interval, why)


def _point(
    cell: CellRecord,
    reference: CellRecord | None,
    shapes: Sequence[tuple[int, int]],
    checks_of: Callable[[CellRecord], list[Check]],
    fractions: Mapping[str, Mapping[float, float]],
    band_of: BandOf,
) -> FrontierPoint:
    checks = checks_of(cell)
    per_eval = accuracy_verdicts(checks)
    own = [c.verdict for c in checks if c.kind.name != PARITY_KIND]  # parity has its own column
    verdict = worst(per_eval.values()) if per_eval else worst(own)
    mine, ref = prefill_points(cell), prefill_points(reference)
    aa = same_engine(cell, reference)
    gains = tuple(
        replace(
            gain(s, mine.get(s), ref.get(s), cell is reference),
            aa_band=band_of(cell, (PREFILL, *s)), aa_pair=aa,
        )
        for s in shapes
    )  # fmt: skip
    factor = factor_of(cell)
    skipped = skipped_fraction(fractions, cell.kv_dtype, factor)
    return FrontierPoint(factor, cell, verdict, per_eval, gains, skipped, divergence_of(checks))


def _unrecorded(cell: CellRecord) -> str:
    if cell.status == "missing":
        return "SGLang release not recorded: MISSING, the job left no result.json"
    return "SGLang release not recorded in its result.json"


def place_unrecorded(groups: dict[Key, list[CellRecord]]) -> dict[Key, list[str]]:
    """Move each cell of unknown release into the one group its other keys match; the notes.

    A MISSING cell never wrote its release, so its own group would hold it alone and the
    frontier would lose it. With one matching release it joins that group (said in a note);
    with several it cannot be placed, and each of those groups says so.
    """
    notes: dict[Key, list[str]] = {}
    for key in [k for k in groups if k[RELEASE] == UNKNOWN_RELEASE]:
        rest = key[:RELEASE] + key[RELEASE + 1 :]
        matches = sorted(k for k in groups if k != key and k[:RELEASE] + k[RELEASE + 1 :] == rest)
        if len(matches) == 1:
            for cell in groups[key]:
                notes.setdefault(matches[0], []).append(
                    f"{cell.label}: {_unrecorded(cell)}; shown here by its other keys."
                )
            groups[matches[0]] += groups.pop(key)
            continue
        releases = " and ".join(k[RELEASE] for k in matches)
        for match in matches:
            notes.setdefault(match, []).extend(
                f"{cell.label} left out: {_unrecorded(cell)}, and it matches the frontiers "
                f"of SGLang {releases}." for cell in groups[key])  # fmt: skip
    return notes


def _frontier(
    key: tuple[str, ...],
    cells: Sequence[CellRecord],
    checks_of: Callable[[CellRecord], list[Check]],
    fractions: Mapping[str, Mapping[float, float]],
    band_of: BandOf,
    notes: Sequence[str] = (),
) -> Frontier:
    ordered = sorted(cells, key=lambda c: (factor_of(c), c.status != "ok", c.id))
    exact = [c for c in ordered if factor_of(c) == 0.0]
    # Of several factor-0 cells (an A/A), the one of the sweep that ran most of the factors.
    ran = Counter(c.sweep for c in ordered)
    found = [c for c in exact if c.status == "ok"]
    reference = max(found, key=lambda c: ran[c.sweep], default=exact[0] if exact else None)
    shapes = sorted({s for c in ordered for s in prefill_points(c)}, key=lambda s: (s[0] != 1, s))
    points = tuple(_point(c, reference, shapes, checks_of, fractions, band_of) for c in ordered)
    return Frontier(key, reference, tuple(shapes), points, tuple(notes))


def frontiers(
    cells: Sequence[CellRecord],
    checks_of: Callable[[CellRecord], list[Check]],
    fractions: Mapping[str, Mapping[float, float]],
    baseline: str,
    band_of: BandOf = lambda _cell, _shape: None,
) -> list[Frontier]:
    """Every variant with two skip-softmax factors or more, in the report's order.

    Args:
        cells: the report's cells.
        checks_of: a cell's checks (``Report.checks_of``).
        fractions: measured shares of skipped tiles (``read_skip_fractions``; empty: none).
        baseline: the baseline variant, never a frontier of its own.
        band_of: the A/A band of a cell at a speed shape (``RestartNoise.band``; None: none).
    """
    groups: dict[Key, list[CellRecord]] = {}
    for cell in cells:
        if cell.variant != baseline:
            groups.setdefault(variant_key(cell), []).append(cell)
    notes = place_unrecorded(groups)
    return [
        _frontier(key, group, checks_of, fractions, band_of, notes.get(key, ()))
        for key, group in sorted(groups.items())
        if len({factor_of(c) for c in group}) >= 2
    ]
