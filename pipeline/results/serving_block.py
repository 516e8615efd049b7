"""The ``serving`` block of ``result.json`` as frozen values: what the report reads of it.

The layout is ``result_schema.ServingJson``; a result without one reads as None, and a number
that is not a number reads as None (never as a made-up zero).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipeline.results.json_values import as_list, as_map, as_text
from pipeline.results.result_schema import ServingJson, ServingPointJson

PERCENTILES = ("p50", "p90", "p99")


def _number(value: Any) -> float | None:
    ok = type(value) in (int, float) and math.isfinite(value)
    return float(value) if ok else None


def _count(value: Any) -> int:
    return value if type(value) is int else 0


def _quantiles(value: Any) -> Mapping[str, float]:
    found = {k: _number(v) for k, v in as_map(value).items() if k in PERCENTILES}
    return {k: v for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class ServingPoint:
    """One concurrency level at one input-length bucket of a cell's serving phase."""

    bucket: int
    concurrency: int
    requests: int
    errors: int
    duration_s: float | None
    output_tokens_per_s: float | None
    output_tokens_per_s_per_gpu: float | None
    tokens_per_s_per_user: float | None
    ttft_ms: Mapping[str, float]
    itl_ms: Mapping[str, float]
    tpot_ms: Mapping[str, float]
    accept_length: float | None
    prompt_tokens_mean: float | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)  # /metrics deltas

    @property
    def key(self) -> tuple[int, int]:
        """What pairs it with another cell's point: bucket, concurrency."""
        return self.bucket, self.concurrency

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServingPoint:
        """A point as written (``ServingPointJson``)."""
        p = cast(ServingPointJson, as_map(data))
        metrics = {k: _number(v) for k, v in as_map(p.get("metrics")).items()}
        return cls(
            bucket=_count(p.get("bucket")),
            concurrency=_count(p.get("concurrency")),
            requests=_count(p.get("requests")),
            errors=_count(p.get("errors")),
            duration_s=_number(p.get("duration_s")),
            output_tokens_per_s=_number(p.get("output_tokens_per_s")),
            output_tokens_per_s_per_gpu=_number(p.get("output_tokens_per_s_per_gpu")),
            tokens_per_s_per_user=_number(p.get("tokens_per_s_per_user")),
            ttft_ms=_quantiles(p.get("ttft_ms")),
            itl_ms=_quantiles(p.get("itl_ms")),
            tpot_ms=_quantiles(p.get("tpot_ms")),
            accept_length=_number(p.get("accept_length")),
            prompt_tokens_mean=_number(p.get("prompt_tokens_mean")),
            metrics={k: v for k, v in metrics.items() if v is not None},
        )


@dataclass(frozen=True)
class ServingBlock:
    """A cell's serving phase: speculation on or off, its points, notes and cost."""

    speculation: bool
    gpus: int
    prompts: str
    points: tuple[ServingPoint, ...]
    notes: tuple[str, ...]
    wall_s: float | None

    @classmethod
    def from_json(cls, data: Any) -> ServingBlock | None:
        """The block, or None when the result has no (readable) ``serving``."""
        if not isinstance(data, Mapping):
            return None
        block = cast(ServingJson, as_map(data))
        return cls(
            speculation=block.get("speculation") is not False,
            gpus=max(_count(block.get("gpus")), 1),
            prompts=as_text(block.get("prompts"), "not recorded"),
            points=tuple(ServingPoint.from_json(as_map(p)) for p in as_list(block.get("points"))),
            notes=tuple(str(n) for n in as_list(block.get("notes"))),
            wall_s=_number(block.get("wall_s")),
        )
