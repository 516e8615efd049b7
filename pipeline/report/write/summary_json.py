"""``summary.json`` (everything, machine-readable) and ``cells.csv`` (one row per cell x eval).

``summary.json`` is strict JSON (schema_version 5): a number that is not finite is ``null``, and
the check it belongs to says why in ``null_because``; ``speed`` lists each speed point against
its baseline (``speed_tables.speed_entry``), ``frontier`` each skip-softmax frontier
(``frontier_tables.frontier_entries``), ``speed_costs`` what the KV pool and the release cost
(``cost_tables``), ``by_bin`` and ``frontier_by_length`` the checks by context length and
category (``bin_tables``), ``parity`` each candidate's logprob parity (``parity_tables``),
``serving`` the serving levels (``serving_tables``). Version 1 wrote a bare ``NaN`` there, 1 and 2
had no ``speed``, 1 to 3 no ``frontier``, 1 to 4 no ``speed_costs``, 1 to 5 no ``by_bin``,
``parity`` or ``serving``; ``read_summary`` reads them all (empty lists there). The by-bin and
parity columns of ``cells.csv`` (``BIN_COLUMNS``, ``PARITY_COLUMNS``) come only when some check
is of their kind.
``cells.csv`` has, per comparison, the numbers behind its verdict (``check_kinds.Comparison``),
and the prefill-time columns (``PREFILL_COLUMNS``, last) only when some eval has a prefill time
(a server run with ``--enable-metrics``).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals.json_text import strict_dumps
from pipeline.report.assemble.build import Report
from pipeline.report.assemble.gate import judged
from pipeline.report.judge.check_kinds import (
    ACCEPT_VS_BASELINE,
    ACCEPT_VS_REFERENCE,
    ACCURACY_VS_BASELINE,
    ACCURACY_VS_REFERENCE,
    BIN_KINDS,
    SPEED_VS_BASELINE,
    STAT_KINDS,
    CheckKind,
    CsvFields,
)
from pipeline.report.judge.check_numbers import numbers_json
from pipeline.report.judge.verdicts import Check
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.band_checks import SPEED_COLUMNS, speed_fields
from pipeline.report.write.baselines_table import baseline_entries
from pipeline.report.write.bin_tables import bin_entries
from pipeline.report.write.bin_tables import frontier_entries as bin_frontier_entries
from pipeline.report.write.cost_tables import speed_cost_entries
from pipeline.report.write.frontier_tables import frontier_entries
from pipeline.report.write.parity_tables import KINDS as PARITY_KINDS
from pipeline.report.write.parity_tables import PARITY_COLUMNS, parity_entries, parity_fields
from pipeline.report.write.section import sort_key
from pipeline.report.write.serving_tables import serving_entries
from pipeline.report.write.speed_tables import speed_entries
from pipeline.results.result_types import AcceptBlock, EvalSummary

# 2: strict JSON (null, with null_because, where 1 wrote NaN); 3: speed; 4: frontier;
# 5: speed_costs, and each speed entry's release and KV pool; 6: by_bin, frontier_by_length,
# serving, parity (issues 39, 40, 42)
SCHEMA_VERSION = 6
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
    *(column for kind in STAT_KINDS for column in kind.columns),
]
BIN_COLUMNS = [column for kind in BIN_KINDS for column in kind.columns]
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
        "checks": [_check(k, report.tolerance.baseline) for k in report.checks_of(cell)],
    }


def _check(check: Check, baseline: str) -> dict[str, Any]:
    numbers = numbers_json(check.numbers, check.adjusted)
    out = {
        "eval": check.eval,
        "kind": check.kind.name,
        "title": check.title(baseline),
        "verdict": check.verdict,
        "message": check.message,
        "numbers": numbers,
    }
    missing = {k: check.kind.null_reason(k) for k, v in numbers.items() if _non_finite(v)}
    if missing:
        out["null_because"] = missing
    return out


def _non_finite(value: object) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


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
            "speed": asdict(tol.speed),
        },
        "counts": counts,
        "judged": judged(report.checks),
        "not_judged": report.not_judged,
        "warnings": report.warnings,
        "ignored": report.ignored,
        "baselines": baseline_entries(report),
        "cells": [_cell(report, c) for c in sorted(report.cells, key=sort_key)],
        "speed": speed_entries(report),
        "frontier": frontier_entries(report),
        "speed_costs": speed_cost_entries(report),
        "by_bin": bin_entries(report),
        "frontier_by_length": bin_frontier_entries(report),
        "serving": serving_entries(report),
        "parity": parity_entries(report),
    }
    return strict_dumps(data, indent=1) + "\n"


def read_summary(path: Path) -> dict[str, Any]:
    """A ``summary.json`` of any schema version (1's bare ``NaN`` read as ``None``).

    A file from before version 3 reads with an empty ``speed`` list, one from before version 4
    with an empty ``frontier`` list, one from before version 5 with empty ``speed_costs`` lists,
    one from before version 6 with empty ``by_bin`` and ``frontier_by_length`` lists.

    Raises:
        ValueError: the file is not JSON, or of a newer schema than this reader knows.
    """
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text, parse_constant=lambda _: None)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err}); write it again with mtp-eval-report") from err
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {version!r} is newer than this reader "
                         f"({SCHEMA_VERSION}); update mtp-eval")  # fmt: skip
    costs = data.get("speed_costs", {"pool": [], "release": []})
    return {**data, "speed": data.get("speed", []), "frontier": data.get("frontier", []),
            "speed_costs": costs, "by_bin": data.get("by_bin", []),
            "frontier_by_length": data.get("frontier_by_length", []),
            "serving": data.get("serving", []), "parity": data.get("parity", [])}  # fmt: skip


def _verdict(report: Report, cell: CellRecord, name: str, kind: CheckKind) -> str:
    return next(
        (k.verdict for k in report.checks_of(cell) if k.eval == name and k.kind == kind), ""
    )


def _numbers(checks: list[Check], name: str) -> CsvFields:
    # A non-finite number is an empty field, like every missing value in the file.
    kinds = (*STAT_KINDS, *BIN_KINDS)
    found = [k.kind.csv_fields(k) for k in checks if k.eval == name and k.kind in kinds]
    merged = {key: value for fields in found for key, value in fields.items()}
    return {key: "" if _non_finite(v) else v for key, v in merged.items()}


def render_csv(report: Report) -> str:
    """cells.csv text."""
    out = io.StringIO()
    timed = any(e.mean_prefill_s is not None for c in report.cells for e in c.evals.values())
    banded = any(k.kind == SPEED_VS_BASELINE for k in report.checks)
    columns = CSV_COLUMNS + (PREFILL_COLUMNS if timed else []) + (SPEED_COLUMNS if banded else [])
    if any(k.kind in BIN_KINDS for k in report.checks):
        columns += BIN_COLUMNS
    if any(k.kind in PARITY_KINDS for k in report.checks):
        columns += PARITY_COLUMNS
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
            **speed_fields(report.checks_of(cell)),
            **parity_fields(report.checks_of(cell)),
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
                    "vs_baseline": _verdict(report, cell, name, ACCURACY_VS_BASELINE),
                    "accept_vs_baseline": _verdict(report, cell, name, ACCEPT_VS_BASELINE),
                    "vs_reference": _verdict(report, cell, name, ACCURACY_VS_REFERENCE),
                    "accept_vs_reference": _verdict(report, cell, name, ACCEPT_VS_REFERENCE),
                    **_numbers(report.checks_of(cell), name),
                    "mean_prefill_s": summary.mean_prefill_s,
                    "prefill_s_per_1k_prompt_tokens": summary.prefill_s_per_1k_prompt_tokens,
                }
            )
    return out.getvalue()
