"""The numbers of the parity checks: a logprob divergence per token and the band it is judged by.

``parity_checks.py`` (``ParityNumbers``) and ``decode_parity.py`` (``DecodeParityNumbers``) make
them; ``check_numbers.numbers_json`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.report.judge.check_numbers import FLAT, UNSET, Numbers, Unset
from pipeline.report.load.parity_files import WorstSequence


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
