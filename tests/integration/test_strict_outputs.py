"""Every output of the demo sweep reads with a strict JSON parser and a CSV reader.

The report's ``summary.json`` once held a bare ``NaN`` (``JSON.parse`` refuses the whole file);
``cells.csv`` had the verdicts but not the numbers behind them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.integration.conftest import DemoReport

pytestmark = pytest.mark.integration


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def strict_load(text: str) -> object:
    """What JSON.parse accepts: no NaN, no Infinity."""
    return json.loads(text, parse_constant=_refuse)


def test_every_json_file_and_line_the_sweep_wrote_is_strict_json(demo_report: DemoReport):
    found = 0
    for path in sorted(demo_report.sweep.rglob("*.json*")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines() if path.suffix == ".jsonl" else [text]
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    strict_load(line)
                except ValueError as err:
                    pytest.fail(f"{path}:{number}: {err}")
                found += 1
    assert found > 4 * 58 * 8  # every sample line of the four cells, and the JSON files


def test_summary_says_why_a_number_is_null(demo_report: DemoReport):
    summary = strict_load((demo_report.out / "summary.json").read_text())
    assert isinstance(summary, dict) and summary["schema_version"] == 6
    checks = [k for c in summary["cells"] for k in c["checks"]]
    broken = [k for k in checks if k["kind"] == "broken_prompts" and "p" in k["numbers"]]
    assert broken, "the demo's eight repeats make broken-prompt checks"
    for check in broken:
        assert check["numbers"]["p_go_adjusted"] is None
        assert "no GO test" in check["null_because"]["p_go_adjusted"]
    for check in checks:  # a reason is given for a null only (None can also be a value)
        nulls = {k for k, v in check["numbers"].items() if v is None}
        assert set(check.get("null_because", {})) <= nulls


def test_cells_csv_has_the_numbers_behind_each_verdict(demo_report: DemoReport):
    with (demo_report.out / "cells.csv").open(newline="") as fh:
        rows = {(r["variant"], r["kv_dtype"]): r for r in csv.DictReader(fh)}
    worse = rows[("fmha_v2", "fp8_e4m3")]
    assert worse["vs_baseline"] == "NO-GO"
    change, upper = float(worse["vs_baseline_change"]), float(worse["vs_baseline_upper"])
    margin = float(worse["vs_baseline_margin"])
    assert float(worse["vs_baseline_lower"]) < change < upper < -margin < 0  # NO-GO's reading
    assert float(worse["vs_baseline_p_nogo"]) <= 0.05
    assert worse["vs_baseline_repeats"] == "8"
    assert float(worse["vs_baseline_baseline_error_rate"]) == 0.0
    assert float(worse["vs_baseline_candidate_error_rate"]) == 0.0
    same = rows[("fmha_v2", "auto")]
    assert same["vs_baseline"] == "GO" and float(same["vs_baseline_lower"]) > -margin
    assert rows[("fa3", "auto")]["vs_baseline_change"] == ""  # the baseline compares with nothing


def test_read_summary_reads_a_version_1_file_with_nan(tmp_path: Path):
    from pipeline.report.write.summary_json import read_summary

    old = tmp_path / "summary.json"
    old.write_text('{"schema_version": 1, "cells": [{"numbers": {"p_go_adjusted": NaN}}]}')
    assert read_summary(old)["cells"][0]["numbers"]["p_go_adjusted"] is None
    assert read_summary(old)["speed"] == []  # before version 3: no speed list
    old.write_text('{"schema_version": 7}')
    with pytest.raises(ValueError, match="newer than this reader"):
        read_summary(old)
