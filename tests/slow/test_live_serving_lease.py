"""A LIVE_PLAN=serving lease on the trained long-context model, rehearsed on the simulated 0.5.23.

What issue 42's first serving lease runs: the 8B shape's steps skipped (its fmha_v2 XQA is not in
the carried JIT cache), SGLang's import timing first, then fmha_v2 with and without speculation
while FA3 still travels (``LIVE_SIM_FA3=0`` stands for it: SGLang 0.5.23 loads flash_ops only in
the FA3 backend), fa3's cells and bench_serving's fa3 server (a serving cell on it first) only
once it is there, one at a time, then the report over what ended.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from tests.helpers.live_plan import longctx_model_chunks, run_live_plan, step_rc, tick_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

NO_FA3 = ("importtime", "lc-on-v2", "lc-off-v2")
FA3 = ("lc-on", "lc-off", "lc-bench")
ENV = {"LIVE_SERVING_SKIP": "sv-on-a sv-off-a sv-aa sv-bench sv-on-f sv-off-f",
       "LIVE_SERVING_OVERRIDES": "serving.concurrency=[1,4] serving.buckets=[512] "
       "serving.output_tokens=16 serving.requests=4 serving.warmup=1",
       "LIVE_SERVING_LC_SOURCE": "2048", "LIVE_SERVING_LC_PROMPTS": "8"}  # fmt: skip


# Two minutes of ticks: run before the lease (`python -m tests.tiers rehearsal -k serving`), not
# on every CI run.
@pytest.mark.rehearsal
def test_fmha_v2_serves_while_fa3_travels_then_fa3_and_the_bench(tmp_path: Path) -> None:
    chunks = longctx_model_chunks(tmp_path)
    env = {**ENV, "LIVE_HF_PYTHON": sys.executable, "MTP_CHUNKS": str(chunks)}
    live, out = tmp_path / "live", tmp_path / "repo" / "outputs" / "live"
    tick_until(tmp_path, "serving", NO_FA3, LIVE_SIM_FA3="0", **env)
    assert [step_rc(live, n) for n in NO_FA3] == ["0"] * 3
    assert not any((live / "state" / f"{n}.started").exists() for n in FA3)  # FA3 not there
    tick_until(tmp_path, "serving", (*FA3, "report"), **env)
    assert [step_rc(live, n) for n in FA3] == ["0"] * 3
    ticks = (live / "logs" / "ticks.log").read_text()
    starts = [ticks.index(f"started {n} ") for n in (*NO_FA3, *FA3)]
    assert starts == sorted(starts)
    assert "started sv-" not in ticks  # the 8B shape's steps were skipped, not run
    serving = read_summary(out / "serving-report" / "summary.json")["serving"]
    speedups = {e["variant"] for e in serving if e["spec_speedup"] is not None}
    # on and off paired across the sweeps; fa3_repeat's off cell is the bench's, on its server
    assert speedups == {"fa3", "fmha_v2", "fa3_repeat"}
    aa = {e["speculation"] for e in serving if e["variant"] == "fa3_repeat" and e["aa_band"]}
    assert aa == {True, False}  # the A/A with speculation (lc-on) and without (lc-bench's cell)


def test_a_name_not_in_the_plan_stops_the_tick(tmp_path: Path) -> None:
    run = run_live_plan(tmp_path, "serving", ["tick", "0"], 60, LIVE_SERVING_ORDER="lc-on lc-up")
    assert run.returncode == 2
    assert "LIVE_SERVING_ORDER names lc-up" in run.stderr
