"""The KV pool's and the release's cost, through ``mtp-eval -m`` and ``mtp-eval-report``.

fa3 and fmha_v2 on the simulated SGLang 0.5.19 (whose fmha_v2 copies the layer's whole KV pool on
every prefill) and 0.5.23 (which does not), each at two ``--mem-fraction-static`` values: the
report must find the copy's growth with the pool on 0.5.19 only, pair each variant with the fa3
of its own release, and say that fmha_v2's speed depends on the release.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from tests.helpers.cells import run_script

SWEEP = [
    "backend=fa3,fmha_v2", "server.simulated.sglang_version=0.5.19,0.5.23",
    "server.mem_fraction_static=0.2,0.85", "evals=[]", "speed.enabled=true",
    "speed.prefill_tokens=[1024]", "speed.prefill_batches=[]", "speed.decode_batches=[]",
    "speed.repeats=5", "server.simulated.timing_model=h200_8b_shape",
    "server.simulated.timing_jitter=0.03", "server.simulated.startup_delay_s=0.1",
]  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The eight cells' report folder."""
    sweep = tmp_path_factory.mktemp("costs") / "sweep"
    run = run_script("mtp-eval", "-m", *SWEEP, f"hydra.sweep.dir={sweep}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    made = run_script("mtp-eval-report", str(sweep), timeout=120)
    # Speed-only cells and no speed band in the policy: nothing judged, so not GO (issue 36).
    assert made.returncode == 2, made.stdout[-2000:] + made.stderr[-2000:]
    return sweep / "report"


def test_each_cell_records_the_pool_its_server_sized(report: Path) -> None:
    summary = read_summary(report / "summary.json")
    pools = {(e["variant"], e["sglang_version"], e["mem_fraction_static"], e["kv_pool_tokens"])
             for e in summary["speed"]}  # fmt: skip
    assert len(pools) == 8
    small = {p[3] for p in pools if p[2] == 0.2}
    large = {p[3] for p in pools if p[2] == 0.85}
    assert len(small) == len(large) == 1 and min(large) > 4 * max(small)


def test_fmha_v2s_time_grows_with_the_pool_on_the_release_that_copies_it_only(
    report: Path,
) -> None:
    costs = read_summary(report / "summary.json")["speed_costs"]
    grows = {(p["variant"], p["sglang_version"]): p["grows_with_pool"] for p in costs["pool"]}
    assert grows == {("fa3", "0.5.19"): False, ("fa3", "0.5.23"): False,
                     ("fmha_v2", "0.5.19"): True, ("fmha_v2", "0.5.23"): False}  # fmt: skip
    md = (report / "report.md").read_text()
    assert "## Speed: what the KV pool costs" in md and "grows with the pool: +" in md


def test_each_ratio_is_to_the_fa3_of_its_own_release_and_the_release_moves_fmha_v2(
    report: Path,
) -> None:
    summary = read_summary(report / "summary.json")
    for entry in summary["speed"]:
        if entry["variant"] == "fmha_v2":
            assert entry["baseline"] is not None and entry["ratio"] is not None
            base = next(e for e in summary["speed"] if e["cell_id"] == entry["baseline_id"])
            assert base["sglang_version"] == entry["sglang_version"]
            assert base["kv_pool_tokens"] == entry["kv_pool_tokens"]
    # fmha_v2 at 1k (fa3 is the baseline), a row per pool both releases ran at, smaller first
    small, large = summary["speed_costs"]["release"]
    for moved in (small, large):
        assert moved["variant"] == "fmha_v2" and moved["depends_on_release"] is True
        assert [r["sglang_version"] for r in moved["by_release"]] == ["0.5.19", "0.5.23"]
        assert {r["kv_pool_tokens"] for r in moved["by_release"]} == {moved["kv_pool_tokens"]}
        old, new = (r["ratio"] for r in moved["by_release"])
        assert old < 0.9 < new  # the copy slows 0.5.19's fmha_v2; 0.5.23's is fa3's equal
    assert small["kv_pool_tokens"] < large["kv_pool_tokens"]
    assert large["by_release"][0]["ratio"] < small["by_release"][0]["ratio"]  # the copy grows
    md = (report / "report.md").read_text()
    assert "## Speed: what the release changes" in md
    assert "| depends on the release (no A/A at this shape" in md
    assert "SGLang 0.5.19, KV auto, exact" in md and "SGLang 0.5.23, KV auto, exact" in md
