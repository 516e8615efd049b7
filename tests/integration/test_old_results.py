"""A sweep written before ``result.json`` became typed is still read by the report, unchanged.

``tests/data/sweep-schema1-f95dc87/`` is a real sweep (fmha_v2 / fa3 / trtllm_mha on the simulated
server, 10 questions x 2 repeats) made by mtp-eval at commit f95dc87, the last commit before the
typed contract (``pipeline.results.result_types``); only the files the report reads were kept.
``tests/data/sweep-schema1-f95dc87.report/`` holds that commit's own report of it (paths and the
time replaced by placeholders). The installed ``mtp-eval-report`` of today must write the same
(``cells.csv``: the same old columns; the numbers behind each verdict were added beside them),
and the installed ``mtp-eval`` of today must write results of the same shape (keys, their order,
JSON types) with the same measured values.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration
SWEEP = REPO / "tests" / "data" / "sweep-schema1-f95dc87"
EXPECTED = REPO / "tests" / "data" / "sweep-schema1-f95dc87.report"


def _normalised(text: str, sweep: Path) -> str:
    text = text.replace(str(sweep), "{INPUT}").replace(str(REPO / "conf"), "{CONF}")
    return re.sub(r"generated [0-9T:+-]+\.", "generated {TIME}.", text)


def test_report_of_an_old_sweep_is_what_the_old_code_wrote(tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(SWEEP, sweep)
    before = {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()}
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep), "--out", str(tmp_path / "report")],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr  # fa3 vs reference: undecided, as then
    written = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert _normalised(written, sweep) == (EXPECTED / "report.md").read_text(encoding="utf-8")
    # cells.csv gained the numbers behind each verdict: the old columns are unchanged.
    csv_text = _normalised((tmp_path / "report" / "cells.csv").read_text(encoding="utf-8"), sweep)
    old = list(csv.DictReader(io.StringIO((EXPECTED / "cells.csv").read_text(encoding="utf-8"))))
    new = list(csv.DictReader(io.StringIO(csv_text)))
    assert [{k: row[k] for k in old[0]} for row in new] == old
    assert "vs_reference_change" in new[0]
    assert {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()} == before  # read only


# Blocks that depend on neither time, ports, paths nor the checkout: equal to the old code's.
_SAME = ("schema_version", "status", "simulated", "cell", "config_hash", "config", "preflight",
         "warnings", "notes", "runs", "observed", "mismatches", "label_runs",
         "unverified", "client", "error")  # fmt: skip
# Notes whose facts were corrected since, old text -> new: read from the wheels, XQA's verify
# mask is in SGLang 0.5.21 (benchmarks/results/sglang-rules.md), not first in 0.5.23.
_CORRECTED_NOTES = {"mask before SGLang 0.5.23": "mask before SGLang 0.5.21"}
_TIMED = ("wall_time_s",)  # per-eval fields that measure time
# What the cell asks the server for, and what it records of the server's settings, may grow when
# a check is added (the draft model path, checked since; the KV pool, recorded since): the old
# entries stay, with their values.
_GROWS = ("requested", "observed")
# Per-eval fields added since (each eval's prefill time; the answered count, the
# accuracy's definition, error kinds and retries per cause): new, never changed.
_ADDED_EVAL_KEYS = (
    "mean_prefill_s", "prefill_s_per_1k_prompt_tokens", "n_answered", "accuracy_over",
    "error_kinds", "error_examples", "retries", "retry_rate",
)  # fmt: skip
# Accept-block fields added since (which requests the server-side figures cover): new, never
# changed; an uninterrupted cell's covers them all.
_ADDED_ACCEPT_KEYS = {"server_window": lambda w: w["covers"] == "all" and w["requests"] == w["of"]}


def _drop_added_accept(accept: dict[str, Any]) -> None:
    # Where the block has a field added since, its value is what an uninterrupted cell writes.
    for key, ok in _ADDED_ACCEPT_KEYS.items():
        if key in accept:
            assert ok(accept.pop(key)), (key, accept)


def _corrected(note: str) -> str:
    for old, new in _CORRECTED_NOTES.items():
        note = note.replace(old, new)
    return note


def _shape(value: Any) -> Any:
    """Keys in written order (nested) and the JSON type of every leaf."""
    if isinstance(value, dict):
        return [(key, _shape(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_shape(item) for item in value[:1]]
    return type(value).__name__


def _close(a: object, b: object) -> bool:
    """Equal, floats within a relative 1e-12 (nested dicts and lists)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_the_cell_writes_what_the_old_code_wrote(tmp_path):
    # The fixture's own command, through the installed mtp-eval of today.
    sweep = tmp_path / "sweep"
    run = subprocess.run(
        [console_script("mtp-eval"), "experiment=demo", "kv_dtype=auto",
         "backend=fmha_v2,fa3,trtllm_mha", "evals.mcq_sample.repeats=2",
         "evals.mcq_sample.dataset.limit=10", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for old_path in sorted(SWEEP.glob("*/result.json")):
        old = json.loads(old_path.read_text(encoding="utf-8"))
        new = json.loads((sweep / old_path.parent.name / "result.json").read_text("utf-8"))
        for block in _GROWS:
            grown = {k: v for k, v in new[block].items() if k in old[block]}
            assert grown == old[block], (old_path.parent.name, block)
            new[block] = grown
        for block in new["evals"].values():
            assert all([block.pop(k) is not None for k in _ADDED_EVAL_KEYS])
            _drop_added_accept(block["accept"])
        _drop_added_accept(new["accept"])
        # added since: the CPUs the cell's processes could use (a taskset or SLURM narrows them);
        # a cell refused before its launch has no host block
        if "host" in new["provenance"]:
            assert new["provenance"]["host"].pop("cpus") == len(os.sched_getaffinity(0))
        assert _shape(new) == _shape(old), old_path.parent.name
        old["notes"] = [_corrected(note) for note in old["notes"]]
        assert {k: new.get(k) for k in _SAME} == {k: old.get(k) for k in _SAME}
        for name, block in old["evals"].items():
            fixed = {k: v for k, v in block.items() if k not in _TIMED}
            assert _close({k: new["evals"][name][k] for k in fixed}, fixed), name
        # Float sums follow the order requests finish in (the simulated server's per-request
        # prefill wait moved it): equal to the last bits but one.
        assert _close(new["accept"], old["accept"]), old_path.parent.name
