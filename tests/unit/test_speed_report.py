"""The report's speed rows (pure): pairing with the baseline, ratios, intervals, tables, summary."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from pipeline.report.assemble.build import Report
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import load_tolerance
from pipeline.report.speed.ratios import ratio_interval, speed_rows
from pipeline.report.write.speed_tables import render_speed_csv, speed_entries, speed_sections
from pipeline.report.write.summary_json import read_summary
from pipeline.results.result_types import CellResult
from pipeline.results.speed_block import SpeedBlock
from tests.helpers.records import record, speed_block

MATCH = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


def point(times: list[float], phase: str = "prefill", batch: int = 1, tokens: int = 1024,
          rates: list[float] | None = None) -> dict:  # fmt: skip
    found = {"phase": phase, "batch": batch, "prompt_tokens": tokens,
             "new_tokens": 1 if phase == "prefill" else 256, "times_ms": times}  # fmt: skip
    if rates is not None:
        found.update(tokens_per_s=rates, accept_length=2.5)
    return found


def cell(variant: str, points: list[dict] | None, kv: str = "auto",
         runs: dict[str, str] | None = None) -> CellRecord:  # fmt: skip
    data: dict = {"status": "ok", "timing": {"ended_at": "2026-12-01T00:00:00"}}
    if runs is not None:
        data["runs"] = runs
    if points is not None:
        data["speed"] = speed_block(points)
    return record(f"{variant}/{kv}", data, variant=variant, kv=kv, simulated=True)


FA3 = [point([10.0, 10.2, 9.8, 10.1, 9.9]), point([9, 9, 9], "decode", 8, 512, [1000, 1010, 990])]
V2 = [point([20.0, 20.4, 19.6, 20.2, 19.8]), point([9, 9, 9], "decode", 8, 512, [900, 910, 890])]


def rows_by_variant(cells: list[CellRecord]) -> dict[tuple[str, str], object]:
    return {(r.cell.variant, r.point.phase): r for r in speed_rows(cells, cells, "fa3", MATCH)}


def test_a_variant_twice_as_slow_has_ratio_one_half_inside_its_interval() -> None:
    rows = rows_by_variant([cell("fa3", FA3), cell("fmha_v2", V2)])
    prefill = rows[("fmha_v2", "prefill")]
    assert prefill.ratio == pytest.approx(0.5) and prefill.baseline.variant == "fa3"
    low, high = prefill.ratio_ci
    assert low <= 0.5 <= high < 0.6
    assert (prefill.median_ms, prefill.spread_ms) == (20.0, (19.6, 20.4))
    decode = rows[("fmha_v2", "decode")]  # per decoded token: 900 / 1000 tokens/s
    assert decode.ratio == pytest.approx(0.9) and decode.tokens_per_s == 900
    assert (
        rows[("fa3", "prefill")].ratio is None and rows[("fa3", "prefill")].note == "the baseline"
    )


FA3_RUNS = {"prefill": "fa3", "decode": "fa3", "verify": "fa3", "draft": "fa3"}


@pytest.mark.parametrize(
    ("runs", "same_prefill", "same_decode"),
    [
        ({**FA3_RUNS, "prefill": "fmha_v2"}, False, True),  # 0.5.19's fmha_v2: FA3 decodes
        ({"prefill": "fmha_v2", "decode": "xqa", "verify": "xqa", "draft": "xqa"}, False, False),
        ({**FA3_RUNS, "decode": "flashinfer"}, True, False),  # prefill the baseline's own
        (FA3_RUNS, False, False),  # every phase the same: an A/A, said by restart noise
        (None, False, False),  # kernels not reported: nothing claimed
        ({"prefill": "fmha_v2", "decode": "fa3"}, False, False),  # verify, draft unknown
    ],
)  # fmt: skip
def test_a_phase_that_ran_the_baselines_kernels_is_marked_same_kernels(
    runs: dict[str, str] | None, same_prefill: bool, same_decode: bool
) -> None:
    rows = rows_by_variant([cell("fa3", FA3, runs=FA3_RUNS), cell("fmha_v2", V2, runs=runs)])
    assert rows[("fmha_v2", "prefill")].same_kernels is same_prefill
    assert rows[("fmha_v2", "decode")].same_kernels is same_decode
    assert rows[("fa3", "decode")].same_kernels is False  # the baseline itself


def test_a_same_kernels_ratio_is_marked_in_the_table_summary_and_csv() -> None:
    v2 = cell("fmha_v2", V2, runs={**FA3_RUNS, "prefill": "fmha_v2"})
    report = _report([cell("fa3", FA3, runs=FA3_RUNS), v2])
    (section,) = speed_sections(report)
    row = next(r for r in section.rows if "fmha_v2" in r[0])
    assert row[-1].endswith("(same kernels as the baseline)") and "same kernels" not in row[-2]
    assert "measures two server starts, not a kernel" in section.intro
    said = {(e["phase"], e["same_kernels_as_baseline"]) for e in speed_entries(report)
            if e["variant"] == "fmha_v2"}  # fmt: skip
    assert said == {("prefill", False), ("decode", True)}
    text = render_speed_csv(report) or ""
    marked = {r["phase"]: r["same_kernels_as_baseline"] for r in csv.DictReader(io.StringIO(text))
              if r["variant"] == "fmha_v2"}  # fmt: skip
    assert marked == {"prefill": "False", "decode": "True"}


@pytest.mark.parametrize(
    ("cells", "note"),
    [
        ([cell("fmha_v2", V2)], "no fa3 cell with the same"),
        ([cell("fa3", None), cell("fmha_v2", V2)], "the baseline has no speed at this shape"),
        ([cell("fa3", FA3[1:]), cell("fmha_v2", V2)], "the baseline has no speed at this shape"),
        ([cell("fa3", FA3, kv="fp8_e4m3"), cell("fmha_v2", V2)], "no fa3 cell with the same"),
    ],
)
def test_no_ratio_without_a_baseline_at_the_same_shape(cells: list[CellRecord], note: str) -> None:
    row = rows_by_variant(cells)[("fmha_v2", "prefill")]
    assert row.ratio is None and row.ratio_ci is None and note in row.note


def test_the_interval_is_a_bootstrap_over_both_sides() -> None:
    same = [10.0, 10.5, 9.5, 10.2, 9.8]
    low, high = ratio_interval(same, same)
    assert low < 1.0 < high
    assert ratio_interval(same, same) == (low, high)  # seeded: the report is reproducible
    assert ratio_interval([10.0] * 3, [20.0] * 3) == (0.5, 0.5)


def _report(cells: list[CellRecord]) -> Report:
    tol = load_tolerance("default")
    speed = speed_rows(cells, cells, tol.baseline, tol.match)
    return Report(cells, [], tol, ["x"], speed=speed)


def test_the_summary_lists_every_point_and_the_table_a_ratio_per_shape() -> None:
    cells = [cell("fa3", FA3), cell("fmha_v2", V2), cell("fa3_repeat", FA3)]
    report = _report(cells)
    entries = speed_entries(report)
    assert [(e["variant"], e["phase"]) for e in entries] == [
        ("fa3", "prefill"), ("fa3", "decode"), ("fa3_repeat", "prefill"),
        ("fa3_repeat", "decode"), ("fmha_v2", "prefill"), ("fmha_v2", "decode"),
    ]  # fmt: skip
    v2 = entries[4]
    assert (v2["tokens"], v2["batch"], v2["repeats"], v2["median_ms"]) == (1024, 1, 5, 20.0)
    assert v2["spread_ms"] == [19.6, 20.4] and v2["baseline"] == cells[0].label
    assert entries[2]["ratio"] == pytest.approx(1.0)  # the A/A, like any variant
    json.dumps(entries, allow_nan=False)  # strict JSON
    (section,) = speed_sections(report)
    assert section.headers == ["variant", "accuracy verdict", "prefill 1 x 1,024",
                               "decode 8 x 512 (+256)"]  # fmt: skip
    by_variant = {row[0].split("/")[1]: row for row in section.rows}
    assert by_variant["fa3"][2] == "10.0 ms"
    assert by_variant["fmha_v2"][2].startswith("0.500 [")


def test_a_point_without_repeats_has_no_median_and_no_ratio() -> None:
    empty = [point([]), FA3[1]]
    report = _report([cell("fa3", FA3), cell("fmha_v2", empty)])
    entry = next(e for e in speed_entries(report) if e["variant"] == "fmha_v2")
    assert (entry["median_ms"], entry["spread_ms"], entry["ratio"]) == (None, None, None)
    assert entry["note"] == "no repeat measured on one side"


def test_a_servers_copy_warning_is_said_beside_its_ratios() -> None:
    warned = cell("fmha_v2", V2)
    data = {**warned.result.raw, "cell": {"sglang_version": "0.5.23"}}
    data["speed"] = {
        **data["speed"],
        "log_warnings": [
            {"kind": "fmha_v2_kv_copy", "meaning": "it copied", "count": 3, "line": "fmha_v2 ..."}
        ],
    }
    warned.result = CellResult.from_json(data)
    fa3 = cell("fa3", FA3)
    fa3.result = CellResult.from_json({**fa3.result.raw, "cell": {"sglang_version": "0.5.23"}})
    report = _report([fa3, warned])
    (section,) = speed_sections(report)
    assert section.intro.endswith(
        f"Server log: {warned.label}: it copied (SGLang 0.5.23, logged 3 times: fmha_v2 ...)."
    )
    kinds = {e["variant"]: e["server_warnings"] for e in speed_entries(report)}
    assert kinds == {"fa3": [], "fmha_v2": ["fmha_v2_kv_copy"]}


def test_no_speed_no_section_and_no_speed_csv() -> None:
    report = _report([cell("fa3", None), cell("fmha_v2", None)])
    assert speed_sections(report) == [] and render_speed_csv(report) is None


def test_speed_csv_has_a_row_per_entry_with_the_interval_split() -> None:
    text = render_speed_csv(_report([cell("fa3", FA3), cell("fmha_v2", V2)]))
    assert text is not None
    rows = list(csv.DictReader(io.StringIO(text)))
    v2 = next(r for r in rows if r["variant"] == "fmha_v2" and r["phase"] == "prefill")
    assert (v2["median_ms"], v2["min_ms"], v2["max_ms"], v2["ratio"]) == ("20.0", "19.6", "20.4",
                                                                         "0.5")  # fmt: skip
    assert float(v2["ratio_low"]) <= 0.5 <= float(v2["ratio_high"])
    base = next(r for r in rows if r["variant"] == "fa3" and r["phase"] == "prefill")
    assert (base["ratio"], base["ratio_low"], base["note"]) == ("", "", "the baseline")


def test_read_summary_gives_older_files_an_empty_speed_list(tmp_path: Path) -> None:
    old = tmp_path / "summary.json"
    old.write_text(json.dumps({"schema_version": 2, "cells": []}))
    assert read_summary(old)["speed"] == []
    assert read_summary(old)["by_bin"] == read_summary(old)["frontier_by_length"] == []
    assert read_summary(old)["parity"] == []
    old.write_text(json.dumps({"schema_version": 7}))
    with pytest.raises(ValueError, match="newer than this reader"):
        read_summary(old)


@pytest.mark.parametrize(
    ("block", "times"),
    [
        (None, None),
        ("not a block", None),
        ({"points": [{"phase": "prefill", "times_ms": [1.0, "x", float("nan"), 2]}]}, (1.0, 2.0)),
        ({"points": "garbage"}, ()),
    ],
)
def test_a_speed_block_reads_what_is_a_number_and_nothing_else(block: object, times) -> None:
    found = SpeedBlock.from_json(block)
    if times is None:
        assert found is None
    else:
        assert found is not None
        assert tuple(p.times_ms for p in found.points) == ((times,) if times else ())
