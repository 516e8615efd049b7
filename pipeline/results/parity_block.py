"""The ``parity`` block of ``result.json`` as frozen values: when the phase ran, what it cost.

With ``parity.gate`` it also holds the verdict that decided whether the cell's accuracy repeats
ran. The layout is ``result_schema.ParityJson``; a result without one (parity off, or a cell written
before the block existed) reads as None. A number that is not a number reads as None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.results.json_values import as_map, as_optional_text, as_text

SKIPPED = "skipped"  # ParityGate.accuracy when a parity NO-GO ended the sign-off


def _seconds(value: Any) -> float | None:
    ok = type(value) in (int, float) and math.isfinite(value)
    return float(value) if ok else None


@dataclass(frozen=True)
class ParityGate:
    """The cell's own parity verdict, taken before its evals (``parity.gate``)."""

    verdict: str
    reason: str
    aa_cell: str | None
    accuracy: str  # run | skipped
    skipped: Mapping[str, int] = field(default_factory=dict)  # eval -> repeats not run

    @property
    def stopped(self) -> bool:
        """Whether the parity verdict ended the cell's sign-off before its accuracy repeats."""
        return self.accuracy == SKIPPED

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ParityGate:
        """The gate as written (``ParityGateJson``)."""
        skipped = {str(k): v for k, v in as_map(data.get("skipped")).items() if type(v) is int}
        return cls(
            verdict=as_text(data.get("verdict"), "?"),
            reason=as_text(data.get("reason")),
            aa_cell=as_optional_text(data.get("aa_cell")),
            accuracy=as_text(data.get("accuracy"), "run"),
            skipped=skipped,
        )

    def skipped_text(self) -> str:
        """``gsm8k 32 repeats, mtbench 1 repeat`` (what the sign-off did not spend)."""
        return ", ".join(
            f"{name} {n} repeat{'s' if n != 1 else ''}" for name, n in self.skipped.items()
        )


@dataclass(frozen=True)
class ParityBlock:
    """When the parity phase ran (first or last), on how many sequences, and what it cost."""

    order: str
    sequences: int | None
    wall_s: float | None
    rescore_s: float | None
    gate: ParityGate | None = None

    @classmethod
    def from_json(cls, value: Any) -> ParityBlock | None:
        """The block as written, or None where the cell has none."""
        if not isinstance(value, Mapping):
            return None
        gate = value.get("gate")
        count = value.get("sequences")
        return cls(
            order=as_text(value.get("order"), "last"),
            sequences=count if type(count) is int else None,
            wall_s=_seconds(value.get("wall_s")),
            rescore_s=_seconds(value.get("rescore_s")),
            gate=ParityGate.from_json(gate) if isinstance(gate, Mapping) else None,
        )
