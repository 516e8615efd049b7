"""What the KV pool and the SGLang release cost a variant's speed (pure): rows, tables, summary."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.report.assemble.build import Report
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.tolerance import load_tolerance
from pipeline.report.speed.costs import pool_costs, release_costs
from pipeline.report.speed.ratios import kv_pool, speed_rows
from pipeline.report.write.cost_tables import (
    UNBANDED,
    cost_sections,
    pool_finding,
    release_finding,
)
from pipeline.report.write.speed_tables import speed_sections
from pipeline.report.write.summary_json import read_summary, render_summary
from tests.helpers.records import record, speed_block

MATCH = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


def cell(variant: str, release: str | None, pool: int | None, times: list[float],
         tokens: int = 1024, name: str = "") -> CellRecord:  # fmt: skip
    """An ok cell of ``variant`` on ``release`` with a KV pool of ``pool`` tokens, one shape."""
    point = {"phase": "prefill", "batch": 1, "prompt_tokens": tokens, "new_tokens": 1,
             "times_ms": times}  # fmt: skip
    data = {
        "status": "ok", "cell": {"sglang_version": release},
        "observed": {} if pool is None else {"max_total_num_tokens": pool,
                                              "mem_fraction_static": 0.85},
        "timing": {"ended_at": "2026-12-01T00:00:00"},
        "speed": speed_block([point], repeats=len(times)),
    }  # fmt: skip
    return record(name or f"{variant}/{release}/{pool}", data, variant=variant)


def around(ms: float) -> list[float]:
    return [ms * f for f in (0.99, 1.0, 1.01, 0.995, 1.005)]


# 0.5.19's fmha_v2 (whole-pool copy) and 0.5.23's, as measured on the H200 (speed-0.5.19.md and
# speed-0.5.23/speed.md), at two pools each.
CELLS = [
    cell("fa3", "0.5.19", 262144, around(24.0)),
    cell("fmha_v2", "0.5.19", 262144, around(30.0)),
    cell("fmha_v2", "0.5.19", 740000, around(53.0)),
    cell("fa3", "0.5.23", 262144, around(24.7)),
    cell("fmha_v2", "0.5.23", 262144, around(25.0)),
    cell("fmha_v2", "0.5.23", 740000, around(25.1)),
]


def test_a_speed_ratio_pairs_each_variant_with_the_baseline_of_its_own_release() -> None:
    for row in speed_rows(CELLS, CELLS, "fa3", MATCH):
        if row.cell.variant == "fmha_v2":
            assert row.baseline is not None
            assert row.baseline.result.cell.sglang_version == row.cell.result.cell.sglang_version


def test_without_a_baseline_of_its_release_a_variant_has_no_ratio_and_says_why() -> None:
    cells = [cell("fa3", "0.5.19", 262144, around(24.0)), cell("fmha_v2", "0.5.23", 262144,
                                                                around(25.0))]  # fmt: skip
    row = next(r for r in speed_rows(cells, cells, "fa3", MATCH) if r.cell.variant == "fmha_v2")
    assert row.ratio is None and "no baseline ran on SGLang 0.5.23" in row.note


def test_the_pool_costs_on_the_release_that_copies_it_and_not_on_the_one_that_does_not() -> None:
    found = {c.rows[0].cell.result.cell.sglang_version: c for c in
             pool_costs(speed_rows(CELLS, CELLS, "fa3", MATCH))}  # fmt: skip
    assert set(found) == {"0.5.19", "0.5.23"}  # fa3 ran at one pool only: no row
    old, new = found["0.5.19"], found["0.5.23"]
    assert old.ratio == pytest.approx(53.0 / 30.0) and old.grows
    grown = "grows with the pool: +23.0 ms from 262,144 to 740,000 tokens"
    assert pool_finding(old) == grown + UNBANDED
    assert not new.grows and pool_finding(new) == "no growth with the pool shown"
    assert [r.cell.result.observed["max_total_num_tokens"] for r in old.rows] == [262144, 740000]


@pytest.mark.parametrize(
    ("v2_old", "v2_new", "depends"),
    [
        (53.0, 25.0, True),   # 0.45x on 0.5.19, 0.99x on 0.5.23: the release moved it
        (25.0, 25.0, False),  # the same on both
    ],
)  # fmt: skip
def test_a_variant_whose_ratio_moved_between_releases_is_said_to_depend_on_it(
    v2_old: float, v2_new: float, depends: bool
) -> None:
    cells = [cell("fa3", "0.5.19", 262144, around(24.0)),
             cell("fmha_v2", "0.5.19", 262144, around(v2_old)),
             cell("fa3", "0.5.23", 262144, around(24.0)),
             cell("fmha_v2", "0.5.23", 262144, around(v2_new))]  # fmt: skip
    (found,) = release_costs(speed_rows(cells, cells, "fa3", MATCH))
    assert [r.cell.result.cell.sglang_version for r in found.rows] == ["0.5.19", "0.5.23"]
    assert found.depends is depends
    assert release_finding(found) == (
        "depends on the release" + UNBANDED if depends else "no release difference shown"
    )


def test_per_release_the_row_at_its_baselines_pool_is_compared() -> None:
    (found,) = release_costs(speed_rows(CELLS, CELLS, "fa3", MATCH))
    assert [r.cell.result.observed["max_total_num_tokens"] for r in found.rows] == [262144] * 2
    assert found.rows[0].ratio == pytest.approx(24.0 / 30.0) and found.depends


def test_a_pool_two_releases_share_gets_its_own_release_row() -> None:
    cells = [*CELLS, cell("fa3", "0.5.19", 740000, around(24.5)),
             cell("fa3", "0.5.23", 740000, around(24.6))]  # fmt: skip
    found = release_costs(speed_rows(cells, cells, "fa3", MATCH))
    assert [[kv_pool(r.cell) for r in f.rows] for f in found] == [[262144] * 2, [740000] * 2]
    assert [round(f.rows[0].ratio or 0, 3) for f in found] == [0.8, round(24.5 / 53.0, 3)]
    _, release = cost_sections(_report(cells))
    assert [row[2] for row in release.rows] == ["262,144", "740,000"]


@pytest.mark.parametrize(
    "cells",
    [
        [cell("fmha_v2", "0.5.19", None, around(30.0)),
         cell("fmha_v2", "0.5.19", None, around(53.0), name="b")],  # pools not reported
        [cell("fmha_v2", "0.5.19", 262144, around(30.0)),
         cell("fmha_v2", "0.5.23", 740000, around(25.0))],  # one pool per release
        [cell("fmha_v2", "0.5.19", 262144, around(30.0)),
         cell("fmha_v2", "0.5.19", 262144, around(30.0), tokens=4096)],  # one pool per shape
    ],
)  # fmt: skip
def test_no_pool_row_without_two_known_pools_of_one_release_and_shape(
    cells: list[CellRecord],
) -> None:
    assert pool_costs(speed_rows(cells, cells, "fa3", MATCH)) == []


def _report(cells: list[CellRecord]) -> Report:
    tol = load_tolerance("default")
    return Report(cells, [], tol, ["x"], speed=speed_rows(cells, cells, tol.baseline, tol.match))


def test_the_report_has_both_tables_and_summary_lists_and_one_speed_table_per_release(
    tmp_path: Path,
) -> None:
    report = _report(CELLS)
    titles = [s.title for s in speed_sections(report)]
    assert titles == [f"Speed: m on H200, SGLang {v}, KV auto, exact" for v in ("0.5.19", "0.5.23")]
    pool, release = cost_sections(report)
    assert pool.title == "Speed: what the KV pool costs" and len(pool.rows) == 2
    assert pool.rows[0][3] == "262,144 tokens: 30.0 ms; 740,000 tokens: 53.0 ms"
    assert release.rows == [["m/fmha_v2/auto/sp=None/sd=None", "prefill 1 x 1,024", "262,144",
                             "0.5.19: 0.800 [0.788, 0.812]; 0.5.23: 0.988 [0.973, 1.003]",
                             "depends on the release" + UNBANDED]]  # fmt: skip
    summary = json.loads(render_summary(report))
    costs = summary["speed_costs"]
    assert [p["grows_with_pool"] for p in costs["pool"]] == [True, False]
    assert costs["release"][0]["depends_on_release"] is True
    v2 = [e for e in summary["speed"] if e["variant"] == "fmha_v2"]
    assert {(e["sglang_version"], e["kv_pool_tokens"]) for e in v2} == {
        ("0.5.19", 262144),
        ("0.5.19", 740000),
        ("0.5.23", 262144),
        ("0.5.23", 740000),
    }
    assert all(e["mem_fraction_static"] == 0.85 for e in v2)
    old = tmp_path / "summary.json"
    old.write_text(json.dumps({"schema_version": 4, "speed": [], "frontier": []}))
    assert read_summary(old)["speed_costs"] == {"pool": [], "release": []}  # before version 5


def test_no_cost_table_when_every_variant_ran_at_one_pool_on_one_release() -> None:
    assert cost_sections(_report(CELLS[:2])) == []


def test_a_variant_pairs_with_the_baseline_of_its_own_pool_where_one_ran() -> None:
    cells = [cell("fa3", "0.5.19", 262144, around(24.0)), cell("fa3", "0.5.19", 740000,
             around(24.5)), cell("fmha_v2", "0.5.19", 262144, around(30.0)),
             cell("fmha_v2", "0.5.19", 740000, around(53.0))]  # fmt: skip
    for row in speed_rows(cells, cells, "fa3", MATCH):
        if row.cell.variant == "fmha_v2":
            assert row.baseline is not None
            assert row.baseline.result.observed == row.cell.result.observed


@pytest.mark.parametrize(
    ("band", "grows", "depends"), [(None, True, True), (1.3, False, False), (1.02, True, True)]
)
def test_a_cost_within_the_a_a_band_is_no_cost(band: float | None, grows: bool, depends: bool):
    """fmha_v2 10% slower at the larger pool, 10% slower against fa3 on one release only."""
    cells = [cell("fa3", "0.5.19", 262144, around(24.0)),
             cell("fmha_v2", "0.5.19", 262144, around(24.0)),
             cell("fmha_v2", "0.5.19", 740000, around(26.4)),
             cell("fa3", "0.5.23", 262144, around(24.0)),
             cell("fmha_v2", "0.5.23", 262144, around(26.4))]  # fmt: skip
    rows = [replace(r, aa_band=band) for r in speed_rows(cells, cells, "fa3", MATCH)]
    (pool,) = pool_costs(rows)
    assert pool.ratio == pytest.approx(1.1) and pool.grows is grows
    (release,) = release_costs(rows)
    assert release.depends is depends
    # only a cost no A/A measured carries the caveat
    caveat = grows and band is None
    assert pool_finding(pool).endswith(UNBANDED) is caveat
    assert release_finding(release).endswith(UNBANDED) is caveat
