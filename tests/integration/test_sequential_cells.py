"""Sequential early stopping in real cells: the baseline runs every repeat, a candidate stops as
soon as its paired look decides, and the report reads it at that look's level."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO

pytestmark = pytest.mark.integration


def test_candidates_stop_early_and_the_report_agrees(tmp_path):
    sweep = tmp_path / "seq"
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "-m", "backend=fa3,triton,fmha_v2",
         "sequential.enabled=true", "sequential.max_repeats=16", "sequential.repeats_per_round=2",
         "client.progress=false", "server.simulated.startup_delay_s=0.1",
         "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},"
         "accuracy_delta:-0.2}]", f"hydra.sweep.dir={sweep}"],
        cwd=REPO, text=True, capture_output=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = {json.loads(p.read_text())["cell"]["variant"]: json.loads(p.read_text())
             for p in sweep.glob("*/result.json")}  # fmt: skip
    base = cells["fa3"]["evals"]["mcq_sample"]
    assert base["sequential"]["role"] == "baseline" and base["n_repeats"] == 16
    same = cells["triton"]["evals"]["mcq_sample"]  # answers exactly like fa3 in the simulation
    # Identical answers are not certain after one round of 2 repeats: the anytime design's
    # wealth grows with every identical pair and it stops GO once they are enough (8 repeats on
    # these 58 questions), before the last round.
    assert same["sequential"]["decision"] == "GO" and same["sequential"]["look"] < 8
    assert same["n_repeats"] == 2 * same["sequential"]["look"]
    worse = cells["fmha_v2"]["evals"]["mcq_sample"]
    assert worse["sequential"]["decision"] == "NO-GO"
    # The family NO-GO's alpha is split over: the sweep's 2 candidates x the cell's evals,
    # from multirun.yaml before the first look; the anytime design (e-processes).
    n_evals = len(cells["fmha_v2"]["evals"])
    assert worse["sequential"]["family"] == same["sequential"]["family"] == 2 * n_evals
    assert worse["sequential"]["statistic"] == "eprocess"
    assert worse["n_repeats"] == 2 * worse["sequential"]["look"]
    report = subprocess.run([sys.executable, "-m", "pipeline.report.cli", str(sweep)], cwd=REPO,
                            text=True, capture_output=True, timeout=120)  # fmt: skip
    assert report.returncode == 1, report.stdout + report.stderr
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    verdicts = {c["variant"]: k["verdict"] for c in summary["cells"] for k in c["checks"]
                if k["kind"] == "accuracy_vs_baseline"}  # fmt: skip
    assert verdicts == {"triton": "GO", "fmha_v2": "NO-GO"}
