"""The issue's "Show": the demo multirun on the simulated server, judged by mtp-eval-report.

A variant the simulated server treats like the baseline (triton) is GO, one it makes 6 points
worse (fmha_v2, whose prefill runs trtllm_mha) is NO-GO, the exit code is 1 and the HTML report
embeds its plots. Eight repeats of the 58 bundled questions give the paired test the power to
see 6 points against a 2-point margin (two repeats would be INCONCLUSIVE, and say so).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_demo_sweep_go_and_no_go(tmp_path: Path):
    sweep = tmp_path / "demo"
    run = subprocess.run(
        [sys.executable, "-m", "pipeline", "experiment=demo", f"hydra.sweep.dir={sweep}",
         "hydra.sweeper.params.kv_dtype=auto", 'hydra.sweeper.params.backend="fmha_v2,fa3,triton"',
         "evals.mcq_sample.repeats=8", "server.simulated.startup_delay_s=0.1",
         "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},"
         "accuracy_delta:-0.06}]"],
        cwd=REPO, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = subprocess.run([sys.executable, "-m", "pipeline.report.cli", str(sweep)], cwd=REPO,
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert report.returncode == 1, report.stdout + report.stderr
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    found = {c["variant"]: k["verdict"] for c in summary["cells"] for k in c["checks"]
             if k["kind"] == "accuracy_vs_baseline"}  # fmt: skip
    assert found == {"fmha_v2": "NO-GO", "triton": "GO"}
    assert summary["simulated"] is True
    html = (sweep / "report" / "report.html").read_text()
    assert html.count('<img src="data:image/png;base64,') == 4  # grid, accuracy, paired, accept
