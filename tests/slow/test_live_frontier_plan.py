"""LIVE_PLAN=frontier of benchmarks/live_h200/live_signoff.sh, rehearsed on the simulated server.

The phase the H200 runs (fa3, then fmha_v2 at each factor of the 0.5.19 sign-off, at bf16 KV, each
cell with the sign-off's evals and a speed phase on the retrieval eval's prompts, one after
another, then the report with the HF-measured skipped shares), against ``LIVE_SERVER=simulated``
with two repeats per eval.
"""

import json
import shutil
from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from tests.helpers.cells import REPO
from tests.helpers.live_plan import run_live_plan

pytestmark = pytest.mark.slow

CHECKS = Path("benchmarks") / "results" / "live-h200" / "signoff" / "checks"
# The trained model's tokenizer: the speed phase tokenizes the retrieval eval's prompts with it.
TARGET = Path("benchmarks") / "results" / "live-h200" / "trained-model" / "target"


def test_the_frontier_phase_runs_every_factor_with_speed_and_reports_the_frontier(tmp_path):
    repo, live = tmp_path / "repo", tmp_path / "live"
    shutil.copytree(REPO / CHECKS, repo / CHECKS)  # what the tick's copy of the repo holds
    shutil.copytree(REPO / TARGET, repo / TARGET, ignore=shutil.ignore_patterns("*.safetensors"))
    run = run_live_plan(tmp_path, "frontier", ["phase_frontier"], 900, LIVE_REPEATS="2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = repo / "outputs" / "live"
    cells = sorted(out.glob("frontier-*/*/result.json"))
    results = [json.loads(p.read_text()) for p in cells]
    assert [(r["cell"]["variant"], r["cell"]["skip_softmax"]["prefill"]) for r in results] == [
        ("fa3_repeat", None), ("fa3", None),  # frontier-aa (an A/A), frontier-base
        ("fmha_v2", 0.0), ("fmha_v2", 10000.0), ("fmha_v2", 30000.0),
        ("fmha_v2", 100000.0), ("fmha_v2", 1000000.0), ("fmha_v2", 0.0),  # -v2, -v2-again
    ]  # fmt: skip
    for result in results:
        assert result["status"] == "ok", result.get("error")
        assert result["cell"]["kv_dtype"] == "bf16" and result["cell"]["sglang_version"] == "0.5.23"
        assert set(result["evals"]) == {"synth_mcq", "synth_arith", "synth_retrieval"}
        shapes = {(p["batch"], p["prompt_tokens"]) for p in result["speed"]["points"]
                  if p["phase"] == "prefill"}  # fmt: skip
        assert shapes == {(1, 1024), (1, 4096), (1, 16384), (8, 1024)}
        # Real attention: the retrieval eval's prompts, every shape filled, none tiled.
        prompts = result["speed"]["prompts"]
        assert prompts["source"] == "eval:synth_retrieval" and prompts["distinct"] == 48
        assert result["speed"]["notes"] == [] and "token_ids" not in result["speed"]
    (frontier,) = read_summary(out / "report" / "summary.json")["frontier"]
    assert [p["skipped_fraction"] for p in frontier["points"]] == [
        0.0, 0.0, 0.34995, 0.65338, 0.84407, 0.92898]  # fmt: skip
    assert all(g["ratio"] is not None for p in frontier["points"] for g in p["prefill_gain"])
    # Every gain is read against the two A/As (the simulated server's A/A is exact: band 1).
    assert all(g["aa_band"] is not None for p in frontier["points"] for g in p["prefill_gain"])
    assert frontier["skipped_fraction_source"].endswith("signoff/checks/skip_fraction.json")
    assert "report exit 2" in run.stdout  # two repeats decide nothing: every verdict undecided
    assert (live / "live-results.tgz").is_file()
