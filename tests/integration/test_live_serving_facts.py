"""What the two committed serving leases (issue 42) show beyond their reports, checked against the
committed files: each figure the second lease's README quotes is the one its report, its cells or
its cross-check hold, so a README and its numbers cannot drift apart.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.helpers.cells import unpack
from tests.helpers.live_runs import LIVE, summary

pytestmark = pytest.mark.integration

FIRST, SECOND = "serving-trained-h100-0.5.23", "serving-lease2-h100-0.5.23"
Level = tuple[str, str, bool, int, int]  # model, variant, speculation, bucket, concurrency


def _levels(run: str) -> dict[Level, dict[str, str]]:
    with (LIVE / run / "report" / "serving.csv").open() as f:
        return {(r["model"], r["variant"], r["speculation"] == "True", int(r["bucket"]),
                 int(r["concurrency"])): r for r in csv.DictReader(f)}  # fmt: skip


def _readme() -> str:
    return (LIVE / SECOND / "README.md").read_text()


def _tps(row: dict[str, str]) -> float:
    return float(row["output_tokens_per_s"])


def test_fa3_s_speculation_speed_ups_are_the_reports() -> None:
    levels = _levels(SECOND)
    for bucket in (1024, 8192, 32768):
        ups = [float(levels["synth-longctx", "fa3", True, bucket, c]["spec_speedup"])
               for c in (1, 4, 16)]  # fmt: skip
        row = f"| {bucket:,} | " + " | ".join(f"{u:.3f}" for u in ups) + " |"
        assert row in _readme(), row


def test_the_repeat_differs_from_the_first_start_and_the_report_takes_no_a_a_from_it(
    tmp_path: Path,
) -> None:
    levels = _levels(SECOND)
    ratios = [float(r["ratio"]) for k, r in levels.items() if k[1] == "fa3_repeat"]
    assert (round(min(ratios), 2), round(max(ratios), 2)) == (0.73, 1.70)
    assert "**0.73-1.70x**" in _readme()
    assert all(e["aa_band"] is None for e in summary(SECOND)["serving"])
    # why: the two servers' KV pools (the report pairs only equal pools)
    cells = unpack(LIVE / SECOND / "cell-files.tar.xz", tmp_path)
    pools = [json.loads(p.read_text())["observed"]["max_total_num_tokens"]
             for p in sorted(cells.glob("lc-on/*/result.json"))]  # fmt: skip
    assert pools == [5_541_472, 7_756_288]
    assert all(f"{n:,}" in _readme() for n in pools)


def test_fa3_without_speculation_read_slower_than_in_the_first_lease_at_every_level() -> None:
    first, second = _levels(FIRST), _levels(SECOND)
    off = [k for k in second if k[:3] == ("synth-longctx", "fa3", False)]
    assert len(off) == 9
    ratios = [_tps(second[k]) / _tps(first[k]) for k in off]
    assert (round(min(ratios), 2), round(max(ratios), 2)) == (0.67, 0.86)
    assert "**0.67-0.86x**" in _readme()


def test_the_bench_serving_cross_check_is_the_committed_one() -> None:
    check = json.loads((LIVE / SECOND / "lc-bench-crosscheck.json").read_text())
    by = {r["figure"]: r for r in check["rows"]}
    assert (check["bucket"], check["concurrency"]) == (8192, 16)
    tps = by["output tokens/s"]
    assert (
        f"| output tokens/s | {tps['phase']:,.0f} | {tps['bench']:,.0f} | {tps['ratio']:.3f} |"
        in (_readme())
    )
    assert by["requests"]["phase"] == by["requests"]["bench"] == 32


def test_the_8b_rows_are_the_reports_and_fmha_v2_s_steps_cost_more() -> None:
    levels = _levels(SECOND)
    model = "llama-3.1-8b-eagle3-dummy-bf16"
    for c in (1, 4, 16):
        fa3, v2 = levels[model, "fa3", True, 1024, c], levels[model, "fmha_v2", True, 1024, c]
        row = (f"| {c} | {_tps(fa3):.0f} | {float(v2['ratio']):.3f} | "
               f"{float(fa3['itl_p50_ms']):.2f} / {float(v2['itl_p50_ms']):.2f} |")  # fmt: skip
        assert row in _readme(), row
        assert float(v2["itl_p50_ms"]) > float(fa3["itl_p50_ms"])
        assert float(v2["accept_length"]) == pytest.approx(1.0, abs=0.01)  # dummy weights
