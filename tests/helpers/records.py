"""In-memory ``CellRecord``s for the report's unit tests: one place that fills the identity.

The report's judging and speed code reads a cell through ``CellRecord``; these tests build one
from a ``result.json``-shaped mapping and the few identity fields they vary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.report.load.cells import CellRecord
from pipeline.results.result_blocks import CellIdentity
from pipeline.results.result_types import CellResult


def record(
    cid: str,
    data: Mapping[str, Any] | None = None,
    *,
    variant: str = "fa3",
    kv: str = "auto",
    factor: float | None = None,
    gpu: str = "H200",
    model: str = "m",
    **fields: Any,
) -> CellRecord:
    """Cell ``cid`` read from ``data`` (a ``result.json``); ``fields``: other CellRecord fields."""
    identity = CellIdentity(model=model, model_path="m", variant=variant, kv_dtype=kv,
                            skip_prefill=factor, skip_decode=None, gpu_name=gpu)  # fmt: skip
    fields.setdefault("folder", None)
    fields.setdefault("status", "ok")
    return CellRecord(id=cid, identity=identity, result=CellResult.from_json(data or {}), **fields)


def speed_block(points: list[dict[str, Any]], repeats: int = 5) -> dict[str, Any]:
    """A ``speed`` block of ``points`` (min-max spread, no GPU samples)."""
    return {"method": "m", "warmup": 1, "repeats": repeats, "spread": "min_max", "notes": [],
            "points": points, "gpu_samples": {"source": "absent"}}  # fmt: skip
