"""The numbers each kind of check carries: one small frozen type per kind or family of kinds.

A check's numbers are read by attribute (tables, plots, ``cells.csv``, MLflow); only the JSON
edge (``summary.json``, ``junit.xml``, the parity list) turns them into a mapping, through
``numbers_json``: the fields in the order they are declared, which is the order ``summary.json``
has always written them in, a field still ``UNSET`` left out (a key the check never had), a
``flatten`` field's own keys written in its place. ``Adjusted`` is what ``verdicts.finalize``
adds to a statistical check after the multiplicity correction; it follows the kind's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Final

from pipeline.report.load.parity_files import WorstSequence


class Unset(Enum):
    """A number the check never had: not written at all (``null`` would be a value)."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET
FLAT: Final = {"flatten": True}  # field metadata: the field's own keys take its place


@dataclass(frozen=True)
class Numbers:
    """A check without numbers of its own (status, no baseline, errors)."""


NO_NUMBERS: Final = Numbers()


@dataclass(frozen=True)
class Adjusted:
    """What the multiplicity correction adds: adjusted p-values, family, repeats still needed."""

    p_go_adjusted: float
    p_nogo_adjusted: float
    family_size: int
    extra_repeats: int | Unset | None = UNSET  # None: repeats alone would not decide it


@dataclass(frozen=True)
class AcceptMetricNumbers(Numbers):
    """The accept length a speculative cell reported."""

    accept_length: float


@dataclass(frozen=True)
class McNemarNumbers(Numbers):
    """Discordant questions on each side and the exact one-sided p-value."""

    b: int
    c: int
    p: float


@dataclass(frozen=True)
class BrokenNumbers(Numbers):
    """Questions that could show a break, those that broke, the sign test's p-value."""

    testable: int
    broken_questions: list[str]
    p: float
    baseline: str
    nogo_family: int | Unset = UNSET  # a sequential candidate's NO-GO split, as its looks


@dataclass(frozen=True)
class DropNumbers(Numbers):
    """A drop against a margin: estimate, SE, df, the one-sided bounds and the 95% interval."""

    drop: float
    se: float
    df: float
    margin: float
    alpha: float
    level: float
    ci95: list[float]
    lower: float
    upper: float


@dataclass(frozen=True)
class Dependence:
    """What a repeat is worth (``judge/dependence.py``)."""

    identical_share: float
    icc: float
    icc_ci95: list[float]
    answers_per_side: float
    effective_answers: float
    repeats_vary: bool
    questions_needed: int | None


@dataclass(frozen=True)
class AccuracyVsBaselineNumbers(DropNumbers):
    """Paired accuracy against the baseline: both accuracies, coverage, the pairing."""

    baseline: str
    baseline_folder: str
    note: str
    sequential: str
    look_level: float
    n_questions: int
    repeats: int
    n_lost: int
    n_unanswered_questions: int
    go_bound: float
    nogo_bound: float
    n_pairs: int
    coverage: str
    pairing: str
    undecided_because: str
    accuracy_baseline: float
    accuracy_candidate: float
    rates: dict[str, float] = field(metadata=FLAT)  # base_error, cand_truncated, ...
    nogo_family: int | Unset = UNSET
    earlier_runs: list[str] | Unset = UNSET
    dependence: Dependence | Unset = field(default=UNSET, metadata=FLAT)


@dataclass(frozen=True)
class AcceptVsBaselineNumbers(DropNumbers):
    """Token-weighted accept length against the baseline (log scale)."""

    baseline: str
    accept_length_baseline: float
    accept_length_candidate: float
    band: float
    n_pairs: int
    scale: str


@dataclass(frozen=True)
class AccuracyVsReferenceNumbers(DropNumbers):
    """Accuracy against a reference value and the SEs used."""

    reference: float
    reference_stderr: float
    accuracy: float
    se_run: float
    se_method: str
    n_questions: int
    repeats: int | None  # None: result.json's summary, which did not say
    source: dict[str, str] = field(metadata=FLAT)  # reference_file and the provenance
    stopped_early: str | Unset = UNSET


@dataclass(frozen=True)
class AcceptVsReferenceNumbers(DropNumbers):
    """Accept length against a reference value (log scale)."""

    reference: float
    reference_stderr: float
    accept_length: float
    band: float
    scale: str
    source: dict[str, str] = field(metadata=FLAT)
    stopped_early: str | Unset = UNSET


@dataclass(frozen=True)
class SpeedShapeNumbers(Numbers):
    """The shape (or serving level) a speed check judges and its band."""

    phase: str
    batch: int
    tokens: int
    max_slowdown: float


@dataclass(frozen=True)
class SpeedNumbers(SpeedShapeNumbers):
    """A shape's slowdown against the baseline, its widened interval and the ratio."""

    slowdown: float
    slowdown_low: float
    slowdown_high: float
    ratio: float
    ratio_ci95: list[float]
    aa_band: float | None
    same_kernels: bool
    baseline: str
    baseline_folder: str


@dataclass(frozen=True)
class BinRow:
    """One bin of a by-length or by-category check (change: candidate minus baseline)."""

    label: str
    questions: int
    change: float
    change_low: float
    change_high: float
    p_go: float
    p_nogo: float
    verdict: str


PerPosition = dict[str, dict[str, list[float]]]  # side -> bin -> acceptance at position 1, 2, ...


@dataclass(frozen=True)
class ByBinNumbers(Numbers):
    """Paired checks per bin: a row per bin, the level and the correction over the bins."""

    bins: list[BinRow]
    alpha: float
    multiplicity: str
    baseline: str


@dataclass(frozen=True)
class AccuracyByBinNumbers(ByBinNumbers):
    """Accuracy per bin against the margin."""

    margin: float
    dimension: str


@dataclass(frozen=True)
class AcceptByBinNumbers(ByBinNumbers):
    """Accept length per bin against the band, with the per-position acceptance per bin."""

    band: float
    per_position: PerPosition
    dimension: str


@dataclass(frozen=True)
class LosslessNumbers(Numbers):
    """Greedy outputs with speculation on against off: where each request first differs."""

    spec_off_cell: str
    requests: int
    exact_match_rate: float
    first_divergence: dict[str, int]
    deterministic: bool


@dataclass(frozen=True)
class DivergenceNumbers(Numbers):
    """A logprob divergence per token with its one-sided bounds, clustered by sequence."""

    metric: str
    divergence: float
    lower: float
    upper: float
    se: float
    questions: int
    tokens: int
    confidence: float


@dataclass(frozen=True)
class PositionBin:
    """The divergence of one context-position bin (``high`` None: open-ended)."""

    low: int
    high: int | None
    mean: float | None
    tokens: int


@dataclass(frozen=True)
class ParityBand:
    """The band a paired divergence was judged against and what set it."""

    band: float
    band_source: str
    band_noise: float
    band_why: str
    aa_cell: str
    aa_upper: float
    reference_cell: str | None
    reference_upper: float | None


@dataclass(frozen=True)
class ParityNumbers(DivergenceNumbers):
    """Teacher-forced parity against the baseline (no band without an A/A: ``UNSET``)."""

    ceiling: float
    floor: float
    noise_factor: float
    sequences_from: str
    baseline_cell: str
    paired_by: str
    top1_agreement: float | None
    bins: list[PositionBin]
    worst: list[WorstSequence]
    judged: ParityBand | Unset = field(default=UNSET, metadata=FLAT)


@dataclass(frozen=True)
class DecodeParityNumbers(DivergenceNumbers):
    """The decode path against its own prefill re-score, judged against the baseline's own."""

    band: float
    band_source: str
    band_why: str
    baseline_cell: str
    paired_by: str
    baseline_upper: float
    aa_upper: float | None


def band_of(numbers: Numbers) -> tuple[float, str, str] | None:
    """A parity check's band, what set it and why (None: no A/A, so no band; not parity)."""
    if isinstance(numbers, DecodeParityNumbers):
        return numbers.band, numbers.band_source, numbers.band_why
    if isinstance(numbers, ParityNumbers) and not isinstance(numbers.judged, Unset):
        return numbers.judged.band, numbers.judged.band_source, numbers.judged.band_why
    return None


def numbers_json(numbers: Numbers, adjusted: Adjusted | None = None) -> dict[str, Any]:
    """The mapping ``summary.json`` writes: declared order, ``UNSET`` left out, ``FLAT`` inlined."""
    return _mapping(numbers) | (_mapping(adjusted) if adjusted else {})


def _mapping(part: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(part):
        value = getattr(part, f.name)
        if value is UNSET:
            continue
        if f.metadata.get("flatten"):
            out.update(_mapping(value) if is_dataclass(value) else value)
        else:
            out[f.name] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return _mapping(value) if is_dataclass(value) and not isinstance(value, type) else value
