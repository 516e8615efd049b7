"""LIVE_PLAN=train-longctx rehearsed on a CPU: one tick trains a tiny synth_longctx (target and
draft), writes HF's greedy reference, then evaluates it with HF beside serving the folders on the
simulated SGLang 0.5.23 with fa3 and fmha_v2 (the synth_longctx cell's flags, EAGLE3 on the
trained draft) and the greedy check against each, then archives the model folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers.live_plan import run_live_plan

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal, pytest.mark.timeout(900)]

TRAIN_ARGS = ("--preset cpu --steps 2 --tokens 512 --workers 0 --log-every 1 --draft-steps 2 "
              "--draft-len 512 --eval-samples 1 --eval-lengths 1024")  # fmt: skip


def test_train_longctx_plan_trains_evaluates_and_checks_the_served_model(tmp_path: Path) -> None:
    run = run_live_plan(tmp_path, "train-longctx", ["tick", "800"], 840,
                        LIVE_HF_PYTHON=sys.executable, LIVE_TRAIN_ARGS=TRAIN_ARGS,
                        LIVE_GREEDY_ARGS="--lengths 1024 2048 --per-length 1",
                        LIVE_LC_CELL_LENGTHS="[1024]", LIVE_LC_CELL_SAMPLES="1")  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    live = tmp_path / "live"
    for phase in ("train", "jit", "hfeval", "lccell", "report"):
        assert (live / "state" / f"{phase}.rc").read_text().strip() == "0", phase
    # The simulated server is no HF model: its greedy ids differ, which the serve phase reports.
    assert (live / "state" / "serve.rc").read_text().strip() == "1"
    model = tmp_path / "repo" / "outputs" / "live" / "longctx-model"
    recipe = json.loads((model / "recipe.json").read_text())
    assert recipe["command"].startswith("python -m benchmarks.live_h200.train_longctx ")
    assert "draft/model.safetensors" in recipe["sha256"]
    assert recipe["command"].endswith("--stages target,draft")  # the eval stage ran on its own
    assert (
        json.loads((model / "metrics.json").read_text())["summary"]["per_length"]["1024"]["n"] == 6
    )
    hf = json.loads((model / "hf-longctx.json").read_text())
    assert [i["question_id"].split("@")[1] for i in hf["items"]] == ["1024#0", "2048#0"]
    for backend in ("fa3", "fmha_v2"):
        found = json.loads((model / f"greedy-longctx-{backend}.json").read_text())
        assert found["n"] == 2 and found["label"] == f"longctx-{backend}"
    # The bare servers ran the synth_longctx cell's argv on the trained folders.
    argv = (live / "logs" / "serve.log").read_text()
    assert "--speculative-algorithm EAGLE3" in argv and f"{live}/longctx/draft" in argv
    assert "--context-length 135168" in argv and "--attention-backend trtllm_mha" in argv
    # fmha_v2's JIT warm-up served the untrained twin during training, before serve started.
    jit_log = (live / "logs" / "jit.log").read_text()
    assert f"{live}/longctx-jit/target" in jit_log and "--attention-backend trtllm_mha" in jit_log
    assert (live / "ready-longctx-jit-fmha_v2.txt").is_file()
    ticks = (live / "logs" / "ticks.log").read_text()
    assert ticks.index("started jit") < ticks.index("started serve")
    assert (live / "live-results.tgz").is_file()
    # The trained pair in a pipeline cell, after serve's servers and before the archive.
    assert (
        ticks.index("started serve") < ticks.index("started lccell") < ticks.index("started report")
    )
    cell = json.loads((tmp_path / "repo/outputs/live/lc-cell/result.json").read_text())
    assert cell["status"] == "ok" and f"{live}/longctx/draft" in cell["server"]["argv"]
    # The weights' chunks, each under the 16 MiB a device call returns, checked by their manifest.
    parts = live / "model-parts"
    assert (parts / "longctx-model.tar.manifest").is_file()
    assert all(p.stat().st_size <= 15 * 2**20 for p in parts.glob("longctx-model.tar.part-*"))
