"""A speed-only lease of LIVE_PLAN=longctx-frontier, rehearsed on the simulated SGLang 0.5.23.

What the third lease of issue 41 runs: no accuracy cell (``LIVE_LF_SKIP='a-*'``), no tile count,
the carried JIT cache, fmha_v2's cells first in the order ``LIVE_LF_ORDER`` gives, and FA3 carried
last: fmha_v2 never loads flash_ops on 0.5.23, so its cells must run while FA3 still travels
(``LIVE_SIM_FA3=0`` stands for it), and fa3's only once it is there. The ticks are polled as the
lease polls them; the report then pairs each ratio with an A/A band (fa3's and fmha_v2's own).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.live_plan import longctx_model_chunks, run_live_plan, step_rc, tick_until
from tests.slow.test_live_longctx_frontier_plan import OVERRIDES

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

FMHA = ("s-v2f-0", "s-v2-0b", "s-v2-0", "s-v2-1e6")  # LIVE_LF_ORDER
FA3 = ("s-fa3", "s-aa")
ENV = {"LIVE_LF_LENGTHS": "4096", "LIVE_LF_SPEED_PROMPTS": "2", "LIVE_LF_OVERRIDES": OVERRIDES,
       "LIVE_LF_SKIP": "a-* s-v2*-[13]e[45] s-v2f-1e6 s-fa3-f", "LIVE_LF_ORDER": " ".join(FMHA),
       "LIVE_LF_TILES": "0", "LIVE_LF_JIT": "0"}  # fmt: skip


def test_fmha_v2_cells_run_first_and_while_fa3_travels(tmp_path: Path) -> None:
    chunks = longctx_model_chunks(tmp_path)
    env = {**ENV, "LIVE_HF_PYTHON": sys.executable, "MTP_CHUNKS": str(chunks),
           "MTP_EVAL_CACHE": str(tmp_path / "cache")}  # fmt: skip
    live, out = tmp_path / "live", tmp_path / "repo" / "outputs" / "live"
    tick_until(tmp_path, "longctx-frontier", FMHA, LIVE_SIM_FA3="0", **env)
    assert all(step_rc(live, n) == "0" for n in FMHA), [(n, step_rc(live, n)) for n in FMHA]
    assert not any((live / "state" / f"{n}.started").exists() for n in FA3)  # FA3 not there
    # FA3 arrived: fa3's cells, then the report
    tick_until(tmp_path, "longctx-frontier", (*FA3, "report"), **env)
    ticks = (live / "logs" / "ticks.log").read_text()
    starts = [ticks.index(f"started {n} ") for n in (*FMHA, *FA3)]
    assert starts == sorted(starts)  # the order asked for, then the plan's own
    assert "started a-base" not in ticks and "started tiles" not in ticks
    result = json.loads((out / "lf-speed" / "s-v2-0" / "result.json").read_text())
    server_env = result["provenance"]["server_env"]  # the stop's 5-s diagnostics sleep is off
    assert server_env["SGLANG_PYSPY_DUMP_BEFORE_CRASH"] == "0"
    assert server_env["SGLANG_CUDA_COREDUMP_BEFORE_CRASH"] == "0"
    summary = json.loads((out / "lf-report-speed" / "summary.json").read_text())
    frontiers = {f["kv_dtype"]: f for f in summary["frontier"]}
    assert [p["factor"] for p in frontiers["bf16"]["points"]] == [0.0, 0.0, 1e6]  # with its A/A
    assert all(g["aa_band"] is not None for f in frontiers.values() for p in f["points"]
               for g in p["prefill_gain"])  # fmt: skip


def test_a_name_not_in_the_plan_stops_the_tick(tmp_path: Path) -> None:
    run = run_live_plan(tmp_path, "longctx-frontier", ["tick", "0"], 60,
                        LIVE_LF_ORDER="s-v2-0 s-v2-1e7")  # fmt: skip
    assert run.returncode == 2
    assert "LIVE_LF_ORDER names s-v2-1e7" in run.stderr
