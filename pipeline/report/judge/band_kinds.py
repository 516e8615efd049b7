"""The kinds judged against a band of measured noise: speed, and logprob parity, vs the baseline.

Parity is the prefill re-score's (``parity_vs_baseline``) and decode/verify's
(``decode_parity_vs_baseline``); both are ``ParityVsBaseline`` with their own prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pipeline.report.judge.check_numbers import SpeedNumbers
from pipeline.report.judge.kind_base import CheckKind, CheckReading, CsvFields, CsvValue
from pipeline.report.judge.parity_numbers import DivergenceNumbers, ParityNumbers, band_of


@dataclass(frozen=True)
class SpeedVsBaseline(CheckKind):
    """A speed shape's slowdown against the baseline, its interval widened by the A/A band."""

    null_reasons: ClassVar[dict[str, str]] = {"aa_band": "no A/A measured this shape"}

    def describe(self, check: CheckReading) -> str:
        """Slowdown, its widened interval against the band, and what widened it."""
        n = check.numbers
        if not isinstance(n, SpeedNumbers):
            return check.message
        aa = f"A/A band {n.aa_band:.3f}" if n.aa_band else "no A/A at this shape"
        same = "; same kernels as the baseline in this phase" if n.same_kernels else ""
        # A serving level (issue 42) runs once: its interval is the A/A band alone.
        runs = "one run" if n.phase == "serving" else "the repeats' 95% bootstrap"
        return (f"time {n.slowdown:.3f}x the baseline's (ratio {n.ratio:.3f}); interval "
                f"[{n.slowdown_low:.3f}, {n.slowdown_high:.3f}] with {runs} "
                f"and the {aa}, vs band {n.max_slowdown:g}x{same}")  # fmt: skip


@dataclass(frozen=True)
class ParityVsBaseline(CheckKind):
    """Teacher-forced logprob divergence from the baseline against a band of measured noise."""

    prefix: str = "parity"

    null_reasons: ClassVar[dict[str, str]] = {
        "upper": "fewer than two questions: no clustered bound",
        "lower": "fewer than two questions: no clustered bound",
    }

    def describe(self, check: CheckReading) -> str:
        """The divergence, its bounds against the band and what set the band."""
        n = check.numbers
        # No band (no A/A), or not paired: the message says why.
        if not isinstance(n, DivergenceNumbers) or (band := band_of(n)) is None:
            return check.message
        limit, source, why = band
        top1 = n.top1_agreement if isinstance(n, ParityNumbers) else None
        return (
            f"{n.metric} {n.divergence:.3g} per token, one-sided {100 * n.confidence:g}% "
            f"bounds [{n.lower:.3g}, {n.upper:.3g}] over {n.questions} sequences "
            f"({n.tokens} tokens) vs band {limit:.3g} ({source}: {why}); "
            f"top-1 agreement {_share(top1)}"
        )

    @property
    def columns(self) -> tuple[str, ...]:
        """``cells.csv``'s parity columns."""
        fields = ("", "_metric", "_divergence", "_upper", "_band")
        return tuple(f"{self.prefix}{f}" for f in fields)

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """Verdict, metric, divergence, upper bound and band of ``check``."""
        n = check.numbers
        if not isinstance(n, DivergenceNumbers):
            values: list[CsvValue] = [check.verdict, None, None, None, None]
        else:
            band = band_of(n)
            values = [check.verdict, n.metric, n.divergence, n.upper, band[0] if band else None]
        return dict(zip(self.columns, values, strict=True))


def _share(value: float | None) -> str:
    return "unknown" if value is None else f"{100 * value:.2f}%"
