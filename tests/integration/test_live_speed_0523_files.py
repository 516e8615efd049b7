"""The committed live speed comparison on SGLang 0.5.23 (issue 27) is what its files say.

The pipeline's own speed cells on the Llama-3.1-8B shape with its EAGLE3 draft (random weights,
bf16, CUDA graphs on): fa3 and fmha_v2 at both KV dtypes, an A/A, and fa3 and fmha_v2 again at
the pool SGLang sizes itself. The report rebuilt from the committed cells gives the committed
speed list and verdicts; every candidate's accuracy is paired with a baseline that ran its evals;
the README quotes the committed ratios.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from tests.helpers.cells import rebuild_committed_report
from tests.helpers.quoted import unquoted
from tests.helpers.speed_files import readme_rows, speed_view, verdicts

REPO = Path(__file__).resolve().parents[2]
SPEED = REPO / "benchmarks/results/live-h200/speed-pipeline-0.5.23"
PREFILL = {1024, 4096, 16384, 65536, 131072}

pytestmark = pytest.mark.integration


def _summary() -> dict:
    return json.loads((SPEED / "report/summary.json").read_text())


def _results() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(SPEED.glob("cells/*/*/result.json"))]


def test_the_report_rebuilt_from_committed_files_gives_the_committed_speed(tmp_path):
    run, rebuilt = rebuild_committed_report(SPEED, tmp_path)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]  # undecided: exit 2
    committed = _summary()
    assert speed_view(rebuilt) == speed_view(committed)
    assert rebuilt["speed_costs"] == committed["speed_costs"]
    assert verdicts(rebuilt) == verdicts(committed)


def test_every_cell_ran_alone_on_a_live_0_5_23_server_with_cuda_graphs_on():
    results = _results()
    assert len(results) == 7 and {r["status"] for r in results} == {"ok"}
    for r in results:
        assert r["observed"]["version"] == "0.5.23" and not r["simulated"]
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        gpu = r["speed"]["gpu_samples"]["gpus"]["0"]  # clocks and power beside the times
        assert gpu["sm_clock_mhz"]["samples"] > 0 and gpu["power_w"]["median"] > 0
    spans = sorted((r["timing"]["started_at"], r["timing"]["ended_at"]) for r in results)
    assert all(b[0] >= a[1] for a, b in pairwise(spans))  # one after another


def test_fa3_and_fmha_v2_at_both_kv_dtypes_five_lengths_decode_and_an_a_a():
    speed = _summary()["speed"]
    for variant in ("fa3", "fmha_v2"):
        for kv in ("auto", "fp8_e4m3"):
            mine = [e for e in speed if (e["variant"], e["kv_dtype"]) == (variant, kv)]
            assert {e["tokens"] for e in mine if e["phase"] == "prefill"} >= PREFILL
            assert {e["batch"] for e in mine if e["phase"] == "decode"} == {1, 8, 32}
            assert all(e["accept_length"] for e in mine if e["phase"] == "decode")
    aa = [e for e in speed if e["variant"] == "fa3_repeat"]
    assert len(aa) == 9 and all(abs(e["ratio"] - 1) < 0.02 for e in aa)
    for e in speed:
        if e["ratio"] is not None:  # each against the fa3 of its own KV dtype and pool
            base = next(b for b in speed if b["cell_id"] == e["baseline_id"])
            assert base["variant"] == "fa3" and base["kv_dtype"] == e["kv_dtype"]
            assert base["kv_pool_tokens"] == e["kv_pool_tokens"]


def test_every_accuracy_check_has_a_baseline_that_ran_its_evals():
    checks = [k for c in _summary()["cells"] for k in c["checks"]]
    accuracy = [k for k in checks if k["kind"] == "accuracy_vs_baseline"]
    assert len(accuracy) == 3 and "NO BASELINE" not in {k["verdict"] for k in accuracy}
    assert all("/sp-fa3/" in "/" + k["numbers"]["baseline_folder"] for k in accuracy)


def test_the_pool_does_not_move_either_variant_on_0_5_23():
    pool = _summary()["speed_costs"]["pool"]
    assert {(p["variant"], p["tokens"]) for p in pool} == {
        ("fa3", 1024), ("fa3", 4096), ("fmha_v2", 1024), ("fmha_v2", 4096)
    }  # fmt: skip
    assert not any(p["grows_with_pool"] for p in pool)


def test_the_readme_quotes_the_committed_ratios():
    rows = readme_rows(SPEED / "report/summary.json")
    assert len(rows) == 6
    for text in ("README.md", "benchmarks/live_h200/README.md"):
        missed = unquoted((REPO / text).read_text(), rows)
        assert missed == [], f"{text} differs from the committed speed report: {missed}"
