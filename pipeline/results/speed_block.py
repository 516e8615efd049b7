"""The ``speed`` block of ``result.json`` as frozen values: what the report reads of a speed phase.

The layout is ``result_schema.SpeedJson``; a block from a result that has none reads as None, and
a point whose numbers are not numbers reads without them (never as a made-up zero).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pipeline.results.json_values import as_list, as_map, as_text
from pipeline.results.result_schema import SpeedJson, SpeedPointJson

PREFILL = "prefill"  # a prefill point's phase (the others are decode)


def _numbers(values: Any) -> tuple[float, ...]:
    return tuple(float(v) for v in as_list(values) if type(v) in (int, float) and math.isfinite(v))


def _count(value: Any) -> int:
    return value if type(value) is int else 0


@dataclass(frozen=True)
class SpeedPoint:
    """One shape of a cell's speed phase: its repeats' times (ms) and what they measured."""

    phase: str
    batch: int
    prompt_tokens: int
    new_tokens: int
    times_ms: tuple[float, ...]
    tokens_per_s: tuple[float, ...] = ()
    accept_length: float | None = None

    @property
    def median_ms(self) -> float | None:
        """The median of the repeats' times (None: no repeat was read)."""
        return statistics.median(self.times_ms) if self.times_ms else None

    @property
    def label(self) -> str:
        """``prefill 1 x 1,024`` / ``decode 8 x 512 (+256)``: how the report and console name it."""
        label = f"{self.phase} {self.batch} x {self.prompt_tokens:,}"
        return label if self.phase == PREFILL else f"{label} (+{self.new_tokens})"

    @property
    def key(self) -> tuple[str, int, int]:
        """What pairs it with the baseline's point: phase, batch, prompt tokens."""
        return self.phase, self.batch, self.prompt_tokens

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SpeedPoint:
        """A point as written (``SpeedPointJson``)."""
        point = cast(SpeedPointJson, as_map(data))
        accept: Any = point.get("accept_length")
        return cls(
            phase=as_text(point.get("phase"), "?"),
            batch=_count(point.get("batch")),
            prompt_tokens=_count(point.get("prompt_tokens")),
            new_tokens=_count(point.get("new_tokens")),
            times_ms=_numbers(point.get("times_ms")),
            tokens_per_s=_numbers(point.get("tokens_per_s")),
            accept_length=float(accept) if type(accept) in (int, float) else None,
        )


def prompts_text(block: Mapping[str, Any]) -> str:
    """What the phase's prompts were, for a reader: an eval's (``prompts``) or random ids."""
    prompts, ids = as_map(block.get("prompts")), as_map(block.get("token_ids"))
    if prompts:
        source = as_text(prompts.get("source"), "?").removeprefix("eval:")
        return (
            f"the {source} eval's prompts as its cell sends them (chat template, the tokenizer "
            f"of {as_text(prompts.get('tokenizer'), '?')}), cut to each shape's length"
        )
    if ids:
        return (
            f"random token ids in [{ids.get('low')}, {ids.get('high')}) (not real text: "
            "skip-softmax may skip another share of tiles on them than on real prompts)"
        )
    return "not recorded"


@dataclass(frozen=True)
class SpeedBlock:
    """A cell's speed phase: how it was measured, its points and the GPU's state meanwhile."""

    method: str
    repeats: int
    warmup: int
    spread: str
    notes: tuple[str, ...]
    points: tuple[SpeedPoint, ...]
    gpu_samples: Mapping[str, Any]
    log_warnings: tuple[Mapping[str, Any], ...] = ()  # kind, meaning, count, line
    release_notes: tuple[str, ...] = ()  # costs of the prefill kernel on this release only
    prompts: str = "not recorded"  # what the prompts were (prompts_text)

    @classmethod
    def from_json(cls, data: Any) -> SpeedBlock | None:
        """The block, or None when the result has no (readable) ``speed``."""
        if not isinstance(data, Mapping):
            return None
        block = cast(SpeedJson, as_map(data))
        return cls(
            method=as_text(block.get("method")),
            repeats=_count(block.get("repeats")),
            warmup=_count(block.get("warmup")),
            spread=as_text(block.get("spread"), "min_max"),
            notes=tuple(str(n) for n in as_list(block.get("notes"))),
            points=tuple(SpeedPoint.from_json(as_map(p)) for p in as_list(block.get("points"))),
            gpu_samples=as_map(block.get("gpu_samples")),
            log_warnings=tuple(as_map(w) for w in as_list(block.get("log_warnings"))),
            release_notes=tuple(str(n) for n in as_list(block.get("release_notes"))),
            prompts=prompts_text(block),
        )
