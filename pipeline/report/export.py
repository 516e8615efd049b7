"""``summary.json`` (everything, machine-readable) and ``cells.csv`` (one row per cell x eval).

``cells.csv`` gains the prefill-time columns (``PREFILL_COLUMNS``, last) only when some eval has
a prefill time (a server run with ``--enable-metrics``).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from pipeline.report.build import Report
from pipeline.report.load import CellRecord
from pipeline.report.tables import sort_key
from pipeline.results.result_types import AcceptBlock, EvalSummary

SCHEMA_VERSION = 1
CSV_COLUMNS = [
    "gpu",
    "model",
    "variant",
    "kv_dtype",
    "skip_prefill",
    "skip_decode",
    "speculative",
    "status",
    "simulated",
    "verdict",
    "eval",
    "n_questions",
    "n_repeats",
    "accuracy",
    "stderr",
    "ci95_low",
    "ci95_high",
    "accept_length",
    "accept_length_stderr",
    "accept_rate",
    "no_answer_rate",
    "truncated_rate",
    "error_rate",
    "vs_baseline",
    "accept_vs_baseline",
    "vs_reference",
    "accept_vs_reference",
    "folder",
]
# Appended only when some eval has a prefill time, so a report of older results stays as it was.
PREFILL_COLUMNS = ["mean_prefill_s", "prefill_s_per_1k_prompt_tokens"]


def _cell(report: Report, cell: CellRecord) -> dict[str, Any]:
    return {
        "id": cell.id,
        "label": cell.label,
        "gpu": cell.gpu,
        "model": cell.model,
        "variant": cell.variant,
        "kv_dtype": cell.kv_dtype,
        "skip_softmax": {"prefill": cell.skip_prefill, "decode": cell.skip_decode},
        "speculative": cell.speculative,
        "status": cell.status,
        "simulated": cell.simulated,
        "verdict": report.cell_verdict(cell),
        "verdict_note": report.cell_note(cell),
        "folder": str(cell.folder or ""),
        "note": cell.note,
        "unverified": cell.unverified,
        "overrides": list(cell.overrides),
        "checks": [
            {
                "eval": k.eval,
                "kind": k.kind,
                "title": k.title(report.tolerance.baseline),
                "verdict": k.verdict,
                "message": k.message,
                "numbers": k.numbers,
            }
            for k in report.checks_of(cell)
        ],
    }


def render_summary(report: Report) -> str:
    """summary.json text."""
    tol = report.tolerance
    counts: dict[str, int] = {}
    for check in report.checks:
        counts[check.verdict] = counts.get(check.verdict, 0) + 1
    data = {
        "schema_version": SCHEMA_VERSION,
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "simulated": report.simulated,
        "generated_at": report.generated_at,
        "inputs": report.inputs,
        "tolerance": {
            "file": str(tol.path),
            "baseline": tol.baseline,
            "alpha": tol.alpha,
            "power": tol.power,
            "multiplicity": tol.multiplicity,
            "reference_variance": tol.reference_variance,
            "match": list(tol.match),
        },
        "counts": counts,
        "warnings": report.warnings,
        "ignored": report.ignored,
        "cells": [_cell(report, c) for c in sorted(report.cells, key=sort_key)],
    }
    return json.dumps(data, indent=1, default=str) + "\n"


def _verdict(report: Report, cell: CellRecord, name: str, kind: str) -> str:
    return next(
        (k.verdict for k in report.checks_of(cell) if k.eval == name and k.kind == kind), ""
    )


def render_csv(report: Report) -> str:
    """cells.csv text."""
    out = io.StringIO()
    timed = any(e.mean_prefill_s is not None for c in report.cells for e in c.evals.values())
    columns = CSV_COLUMNS + (PREFILL_COLUMNS if timed else [])
    writer = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for cell in sorted(report.cells, key=sort_key):
        base = {
            "gpu": cell.gpu,
            "model": cell.model,
            "variant": cell.variant,
            "kv_dtype": cell.kv_dtype,
            "skip_prefill": cell.skip_prefill,
            "skip_decode": cell.skip_decode,
            "speculative": (cell.speculative or {}).get("algorithm") or "",
            "status": cell.status,
            "simulated": cell.simulated,
            "verdict": report.cell_verdict(cell),
            "folder": str(cell.folder or ""),
        }
        for name, summary in (cell.evals or {"": EvalSummary.from_json({})}).items():
            accept = summary.accept or AcceptBlock()
            writer.writerow(
                {
                    **base,
                    "eval": name,
                    "n_questions": summary.n_questions,
                    "n_repeats": summary.n_repeats,
                    "accuracy": summary.accuracy,
                    "stderr": summary.stderr,
                    **summary.rates,
                    "ci95_low": summary.ci95[0],
                    "ci95_high": summary.ci95[1],
                    "accept_length": accept.accept_length,
                    "accept_length_stderr": accept.accept_length_stderr,
                    "accept_rate": accept.accept_rate,
                    "vs_baseline": _verdict(report, cell, name, "accuracy_vs_baseline"),
                    "accept_vs_baseline": _verdict(report, cell, name, "accept_vs_baseline"),
                    "vs_reference": _verdict(report, cell, name, "accuracy_vs_reference"),
                    "accept_vs_reference": _verdict(report, cell, name, "accept_vs_reference"),
                    "mean_prefill_s": summary.mean_prefill_s,
                    "prefill_s_per_1k_prompt_tokens": summary.prefill_s_per_1k_prompt_tokens,
                }
            )
    return out.getvalue()
