"""What the MLflow export writes for a report: one run per cell, one parent run (pure).

A cell's run is named by its sweep's folder and the cell, spans the cell's own start and end
(``result.json``'s ``timing``), carries the cell's ``result.json`` and ``samples/`` as artifacts
and is found again by a key made of where the sweep ran and the job (``run_key``), which moving
the sweep's folder does not change. It has its identity, versions and server argv as params,
accuracy per eval, accept length and rate, each comparison's change and bounds, and each speed
shape's figures (under ``speed/<phase>_<batch>x<tokens>/``: the same name in every run, so a
chart spans runs) as metrics, and its verdicts as tags.
The parent run holds the sweep: the release verdict, the policy and the counts. Keys follow
MLflow's use of ``/`` for groups (``accuracy/gsm8k``); a value that is not a finite number is
left out (MLflow would keep a NaN, which no dashboard plots).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import (
    BIN_KINDS,
    DECODE_PARITY,
    PARITY_VS_BASELINE,
    STAT_KINDS,
)
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.ratios import SpeedRow
from pipeline.report.write.bin_tables import bin_metrics
from pipeline.results.cell_paths import result_path, samples_dir
from pipeline.results.serving_block import ServingPoint

TAG = "mtp_eval"  # the prefix of the tags that find a run again on the next export
MAX_PARAM = 6000  # MLflow's longest param value (MAX_PARAM_VAL_LENGTH)
MAX_NAME = 250  # a run name MLflow's UI still shows whole
# A cell that ended without a measurement shows red in MLflow's run list.
_FAILED = frozenset({"failed", "missing"})


@dataclass(frozen=True)
class RunFields:
    """One MLflow run's name, params, metrics and tags, as the export writes them."""

    key: str  # finds the run again: the same sweep and cell give the same key
    name: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    start_ms: int | None = None  # when the measurement started (None: not recorded)
    end_ms: int | None = None
    status: str = "FINISHED"  # MLflow's run status
    artifacts: tuple[Path, ...] = ()  # files and folders logged at the run's artifact root


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_key(origin: str, cell: CellRecord) -> str:
    """A cell's key: where its sweep ran (``mlflow_identity.sweep_origin``) and which job it was.

    The job is its overrides (unique in a sweep, and known for a MISSING cell, so the cell keeps
    its run once it has a folder), else its folder's name; no path that moves with the folder.
    """
    job = " ".join(cell.overrides) or (cell.folder.name if cell.folder else cell.name)
    return _digest(f"{origin}\n{job}")


def sweep_key(origins: Mapping[str, str]) -> str:
    """The parent run's key: where the report's sweeps ran, in order."""
    return _digest("\n".join(sorted(set(origins.values()))))


def epoch_ms(stamp: str | None) -> int | None:
    """``2026-11-30T22:50:10+00:00`` -> milliseconds since the epoch; None when absent or bad."""
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1000) if stamp else None
    except ValueError:
        return None


def run_name(cell: CellRecord) -> str:
    """``<sweep folder> <model/variant/kv/sp/sd> (<layout>) @ <GPU> [simulated]``: no full path."""
    spread = f" ({cell.layout})" if cell.layout else ""
    mark = " [simulated]" if cell.simulated else ""
    return f"{Path(cell.sweep).name} {cell.name}{spread} @ {cell.gpu}{mark}"[:MAX_NAME]


def _finite(values: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value):
            out[key] = float(value)
    return out


def _params(cell: CellRecord) -> dict[str, str]:
    spec = cell.speculative or {}
    params: dict[str, Any] = {
        "cell": cell.name, "gpu": cell.gpu, "model": cell.model, "model_path": cell.model_path,
        "variant": cell.variant, "kv_dtype": cell.kv_dtype, "skip_prefill": cell.skip_prefill,
        "skip_decode": cell.skip_decode, "speculative": spec.get("algorithm") or "off",
        "layout": cell.layout or "1 GPU", "simulated": cell.simulated,
        "server_argv": " ".join(cell.result.server_argv), "git_sha": cell.result.provenance.git_sha,
        "sglang_version_reported": cell.result.observed.get("version"),  # by /server_info
    }  # fmt: skip
    for package, version in cell.result.provenance.packages.items():
        params[f"version/{package}"] = version
    return {k: str(v)[:MAX_PARAM] for k, v in params.items() if v not in (None, "")}


# The kinds whose numbers become metrics (their csv fields).
_NUMBERED = (*STAT_KINDS, *BIN_KINDS, PARITY_VS_BASELINE, DECODE_PARITY)


def _metrics(report: Report, cell: CellRecord) -> dict[str, float]:
    values: dict[str, Any] = {}
    for name, summary in cell.evals.items():
        accept = summary.accept
        values |= {f"accuracy/{name}": summary.accuracy, f"stderr/{name}": summary.stderr,
                   f"n_questions/{name}": summary.n_questions,
                   f"accept_length/{name}": accept.accept_length if accept else None,
                   f"accept_rate/{name}": accept.accept_rate if accept else None}  # fmt: skip
    for check in report.checks_of(cell):
        if check.kind in BIN_KINDS:  # by length or category: each bin's change and bounds
            values |= bin_metrics(check)
        if check.kind in _NUMBERED:  # parity's checks have no eval
            fields = check.kind.csv_fields(check)
            where = f"/{check.eval}" if check.eval else ""
            values |= {f"{key}{where}": value for key, value in fields.items()}
    for row in report.speed:
        if row.cell is cell:
            values |= speed_metrics(row)
    block = cell.result.serving if cell.status == "ok" else None
    for point in block.points if block is not None else ():
        values |= serving_metrics(point)
    return _finite(values)


def serving_metrics(point: ServingPoint) -> dict[str, float | None]:
    """One serving level's metrics: ``serving/c16_x1024/output_tokens_per_s_per_gpu``, ...

    The ratios to the baseline and to speculation off are in summary.json and serving.csv.
    """
    prefix = f"serving/c{point.concurrency}_x{point.bucket}"
    values = {"output_tokens_per_s_per_gpu": point.output_tokens_per_s_per_gpu,
              "tokens_per_s_per_user": point.tokens_per_s_per_user,
              "ttft_p50_ms": point.ttft_ms.get("p50"), "ttft_p99_ms": point.ttft_ms.get("p99"),
              "itl_p50_ms": point.itl_ms.get("p50"), "itl_p99_ms": point.itl_ms.get("p99"),
              "accept_length": point.accept_length}  # fmt: skip
    return {f"{prefix}/{name}": value for name, value in values.items()}


def speed_metrics(row: SpeedRow) -> dict[str, float | None]:
    """One speed shape's metrics: ``speed/prefill_1x1024/median_ms``, ``.../ratio``, ...

    The ratio is the baseline's median cost over this cell's (above 1: faster), with its 95%
    bootstrap interval; decode adds tokens/s and the accept length. A baseline cell has no ratio.
    """
    point = row.point
    prefix = f"speed/{point.phase}_{point.batch}x{point.prompt_tokens}"
    low, high = row.ratio_ci or (None, None)
    values = {"median_ms": row.median_ms, "ratio": row.ratio, "ratio_low": low,
              "ratio_high": high, "tokens_per_s": row.tokens_per_s,
              "accept_length": point.accept_length}  # fmt: skip
    return {f"{prefix}/{name}": value for name, value in values.items()}


def _tags(report: Report, cell: CellRecord, origin: str, parent: str) -> dict[str, str]:
    result = cell.result
    tags = {f"{TAG}.sweep": origin, f"{TAG}.cell": cell.id, f"{TAG}.status": cell.status,
            f"{TAG}.folder": str(cell.folder or ""), f"{TAG}.job": " ".join(cell.overrides),
            f"{TAG}.started_at": result.started_at or "not recorded",
            f"{TAG}.ended_at": result.ended_at or "not recorded",
            "verdict": report.cell_verdict(cell), "mlflow.parentRunId": parent}  # fmt: skip
    for check in report.checks_of(cell):
        title = check.kind.name + (f"/{check.eval}" if check.eval else "")
        tags[f"verdict/{title}"] = check.verdict
    return tags


def _artifacts(cell: CellRecord) -> tuple[Path, ...]:
    return (result_path(cell.folder), samples_dir(cell.folder)) if cell.folder else ()


def cell_run(report: Report, cell: CellRecord, origin: str, parent_run_id: str) -> RunFields:
    """A cell's run, a child of ``parent_run_id``; ``origin`` is where its sweep ran."""
    return RunFields(
        key=run_key(origin, cell),
        name=run_name(cell),
        params=_params(cell),
        metrics=_metrics(report, cell),
        tags=_tags(report, cell, origin, parent_run_id),
        start_ms=epoch_ms(cell.result.started_at),
        end_ms=epoch_ms(cell.result.ended_at),
        status="FAILED" if cell.status in _FAILED else "FINISHED",
        artifacts=_artifacts(cell),
    )


def cell_runs(report: Report, origins: Mapping[str, str], parent_run_id: str) -> list[RunFields]:
    """One run per cell of ``report``; ``origins`` maps each sweep folder to where it ran."""
    return [cell_run(report, c, origins[c.sweep], parent_run_id) for c in report.cells]


def _span(cells: list[CellRecord]) -> tuple[int | None, int | None]:
    starts = [t for c in cells if (t := epoch_ms(c.result.started_at)) is not None]
    ends = [t for c in cells if (t := epoch_ms(c.result.ended_at)) is not None]
    return (min(starts) if starts else None, max(ends) if ends else None)


def sweep_run(report: Report, origins: Mapping[str, str]) -> RunFields:
    """The parent run: the release verdict, the policy, what was judged; the cells' span.

    ``origins`` maps each sweep folder of the report to where it ran (its key and name).
    """
    tol, sweep = report.tolerance, sweep_key(origins)
    counts: dict[str, float] = {}
    for check in report.checks:
        counts[f"checks/{check.verdict}"] = counts.get(f"checks/{check.verdict}", 0) + 1
    ran_at = "; ".join(sorted(set(origins.values())))
    tags = {f"{TAG}.sweep": ran_at, f"{TAG}.role": "sweep", "verdict": report.verdict,
            "simulated": str(report.simulated), "policy": str(tol.path),
            "inputs": "; ".join(report.inputs)[:MAX_PARAM]}  # fmt: skip
    params = {"baseline": tol.baseline, "alpha": str(tol.alpha), "power": str(tol.power),
              "multiplicity": tol.multiplicity}  # fmt: skip
    metrics = {"exit_code": float(report.exit_code), "cells": float(len(report.cells)), **counts}
    name = "sweep " + ", ".join(sorted({Path(folder).name for folder in origins}))
    start, end = _span(report.cells)
    return RunFields(sweep, name[:MAX_NAME], params, metrics, tags, start, end)
