"""What the MLflow export writes for a report: one run per cell, one parent run (pure).

A cell's run has its identity, versions and server argv as params, accuracy per eval, accept
length and rate, each comparison's change and bounds, and each speed shape's figures (under
``speed/<phase>_<batch>x<tokens>/``: the same name in every run, so a chart spans runs) as
metrics, and its verdicts as tags.
The parent run holds the sweep: the release verdict, the policy and the counts. Keys follow
MLflow's use of ``/`` for groups (``accuracy/gsm8k``); a value that is not a finite number is
left out (MLflow would keep a NaN, which no dashboard plots).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.report.build import Report
from pipeline.report.check_kinds import STAT_KINDS
from pipeline.report.load import CellRecord
from pipeline.report.speed_table import SpeedRow

TAG = "mtp_eval"  # the prefix of the tags that find a run again on the next export
MAX_PARAM = 6000  # MLflow's longest param value (MAX_PARAM_VAL_LENGTH)


@dataclass(frozen=True)
class RunFields:
    """One MLflow run's name, params, metrics and tags, as the export writes them."""

    key: str  # finds the run again: the same sweep and cell give the same key
    name: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def sweep_key(report: Report) -> str:
    """The sweep's identity: its input folders, resolved (so ``.`` and its full path agree)."""
    text = "\n".join(sorted(str(Path(p).resolve()) for p in report.inputs))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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


def _metrics(report: Report, cell: CellRecord) -> dict[str, float]:
    values: dict[str, Any] = {}
    for name, summary in cell.evals.items():
        accept = summary.accept
        values |= {f"accuracy/{name}": summary.accuracy, f"stderr/{name}": summary.stderr,
                   f"n_questions/{name}": summary.n_questions,
                   f"accept_length/{name}": accept.accept_length if accept else None,
                   f"accept_rate/{name}": accept.accept_rate if accept else None}  # fmt: skip
    for check in report.checks_of(cell):
        if check.kind in STAT_KINDS:
            fields = check.kind.csv_fields(check)
            values |= {f"{key}/{check.eval}": value for key, value in fields.items()}
    for row in report.speed:
        if row.cell is cell:
            values |= speed_metrics(row)
    return _finite(values)


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


def _tags(report: Report, cell: CellRecord, sweep: str, parent: str) -> dict[str, str]:
    tags = {f"{TAG}.sweep": sweep, f"{TAG}.cell": cell.id, f"{TAG}.status": cell.status,
            f"{TAG}.folder": str(cell.folder or ""), "verdict": report.cell_verdict(cell),
            "mlflow.parentRunId": parent}  # fmt: skip
    for check in report.checks_of(cell):
        title = check.kind.name + (f"/{check.eval}" if check.eval else "")
        tags[f"verdict/{title}"] = check.verdict
    return tags


def cell_runs(report: Report, parent_run_id: str) -> list[RunFields]:
    """One run per cell of ``report``, each a child of ``parent_run_id``."""
    sweep = sweep_key(report)
    return [
        RunFields(
            key=f"{sweep}/{cell.id}",
            name=cell.label,
            params=_params(cell),
            metrics=_metrics(report, cell),
            tags=_tags(report, cell, sweep, parent_run_id),
        )
        for cell in report.cells
    ]


def sweep_run(report: Report) -> RunFields:
    """The parent run: the release verdict, the policy, what was judged."""
    tol, sweep = report.tolerance, sweep_key(report)
    counts: dict[str, float] = {}
    for check in report.checks:
        counts[f"checks/{check.verdict}"] = counts.get(f"checks/{check.verdict}", 0) + 1
    tags = {f"{TAG}.sweep": sweep, f"{TAG}.role": "sweep", "verdict": report.verdict,
            "simulated": str(report.simulated), "policy": str(tol.path),
            "inputs": "; ".join(report.inputs)[:MAX_PARAM]}  # fmt: skip
    params = {"baseline": tol.baseline, "alpha": str(tol.alpha), "power": str(tol.power),
              "multiplicity": tol.multiplicity}  # fmt: skip
    metrics = {"exit_code": float(report.exit_code), "cells": float(len(report.cells)), **counts}
    name = "sweep " + ", ".join(report.inputs)
    return RunFields(key=sweep, name=name[:250], params=params, metrics=metrics, tags=tags)
