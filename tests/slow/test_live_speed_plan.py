"""LIVE_PLAN=speed of benchmarks/live_h200/live_signoff.sh, rehearsed on the simulated server.

The ticks the H200 runs: fmha_v2's JIT warm-ups as bare servers with the speed cell's argv, the
fa3 speed cells, then fmha_v2's, then the A/A cell, then the shipped float16 Llama-3.1-8B EAGLE3
shape cell (its own sweep), then fa3 and fmha_v2 again at the pool SGLang sizes itself (no
--max-total-tokens), then the report, whose ``summary.json`` has a speed entry
per variant, KV dtype and shape, each candidate with its ratio to fa3, and what the pool costs.
"""

import json
from itertools import pairwise

import pytest

from tests.helpers.live_plan import run_live_plan

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("release", ["0.5.23", "0.5.19"])
def test_the_speed_plan_runs_every_cell_alone_and_reports_speed(tmp_path, release):
    overrides = "speed.repeats=1 speed.prefill_tokens=[1024,4096] speed.decode_batches=[2] "
    # both releases with CUDA graphs on, as on the H200 (setup_on_gpu.sh guards 0.5.19's deep_gemm)
    overrides += "speed.decode_new_tokens=16"
    # the latency table whose 0.5.19 fmha_v2 copies the pool (simulated; the default has none)
    overrides += " server.simulated.timing_model=h200_8b_shape server.simulated.timing_jitter=0.03"
    # 0.5.19's rehearsal drops the A/A and the shape cell, as its lease did (LIVE_SPEED_SKIP)
    skip = {"0.5.19": "sp-aa sp-shape", "0.5.23": ""}[release]
    aa = [] if "sp-aa" in skip else ["sp-aa"]
    run = run_live_plan(tmp_path, "speed", ["tick", "500"], 700, LIVE_SGLANG=release,
                        LIVE_SPEED_OVERRIDES=overrides, LIVE_SPEED_SKIP=skip)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    live = tmp_path / "repo" / "outputs" / "live"
    cells = {
        p.parent.parent.name + "/" + p.parent.name.split("_", 1)[1]: json.loads(p.read_text())
        for p in live.glob("sp-*/*/result.json")
    }
    assert sorted(cells) == [
        f"{a}/llama-3.1-8b-eagle3-dummy-bf16_fa3_repeat_auto_exact" for a in aa
    ] + [
        "sp-fa3/llama-3.1-8b-eagle3-dummy-bf16_fa3_auto_exact",
        "sp-fa3/llama-3.1-8b-eagle3-dummy-bf16_fa3_fp8_e4m3_exact",
        "sp-pool/llama-3.1-8b-eagle3-dummy-bf16_fa3_auto_exact",
        "sp-pool/llama-3.1-8b-eagle3-dummy-bf16_fmha_v2_auto_exact",
        "sp-v2/llama-3.1-8b-eagle3-dummy-bf16_fmha_v2_auto_exact",
        "sp-v2/llama-3.1-8b-eagle3-dummy-bf16_fmha_v2_fp8_e4m3_exact",
    ]
    for result in cells.values():
        assert result["status"] == "ok", result.get("error")
        assert "--dtype" in result["server"]["argv"] and result["speed"]["points"]
    by_start = sorted(cells, key=lambda k: cells[k]["timing"]["started_at"])
    assert [k.split("/")[0] for k in by_start] == (
        ["sp-fa3"] * 2 + ["sp-v2"] * 2 + aa + ["sp-pool"] * 2
    )
    shape = [json.loads(p.read_text()) for p in live.glob("shapes/*/result.json")]
    assert [r["status"] for r in shape] == ([] if skip else ["ok"])
    if shape:
        assert "float16" in shape[0]["server"]["argv"]  # the shipped recipe, as it is
        cells["shapes/llama"] = shape[0]
        by_start = sorted(cells, key=lambda k: cells[k]["timing"]["started_at"])
        assert by_start[5] == "shapes/llama"  # between the A/A and the pool cells
    times = [cells[k]["timing"] for k in by_start]
    assert all(b["started_at"] >= a["ended_at"] for a, b in pairwise(times))  # alone
    for kv in ("auto", "fp8_e4m3"):
        assert (tmp_path / "live" / f"ready-sp-fmha_v2-{kv}.txt").is_file()
    summary = json.loads((live / "speed-report" / "summary.json").read_text())
    speed = summary["speed"]
    shapes = {(e["phase"], e["batch"], e["tokens"]) for e in speed}
    assert shapes == {("prefill", 1, 1024), ("prefill", 1, 4096), ("prefill", 8, 1024),
                      ("decode", 2, 512)}  # fmt: skip
    candidates = {(e["variant"], e["kv_dtype"]) for e in speed if e["ratio"] is not None}
    assert candidates == {("fmha_v2", "auto"), ("fmha_v2", "fp8_e4m3")} | {
        ("fa3_repeat", "auto") for _ in aa
    }
    assert all("fa3/" in e["baseline"] for e in speed if e["ratio"] is not None)
    # The pool cells: SGLang's own pool, larger than the others' 262,144 tokens; prefill only.
    pools = {(e["variant"], e["kv_pool_tokens"]) for e in speed if e["kv_dtype"] == "auto"}
    assert {p for v, p in pools if v == "fmha_v2"} == {262144, max(p for _, p in pools)} != {262144}
    grows = {(p["variant"], p["tokens"]): p["grows_with_pool"]
             for p in summary["speed_costs"]["pool"]}  # fmt: skip
    copies = release == "0.5.19"  # the simulated 0.5.23 reads the pages in place
    assert grows == {("fa3", 1024): False, ("fa3", 4096): False,
                     ("fmha_v2", 1024): copies, ("fmha_v2", 4096): copies}  # fmt: skip
