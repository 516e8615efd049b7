"""LIVE_PLAN=shapes of benchmarks/live_h200/live_signoff.sh, rehearsed on the simulated server.

The phase the H200 runs (every shipped production model on its cut shape with random weights,
then the report), with the sign-off's server settings, against ``LIVE_SERVER=simulated``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cells import REPO

pytestmark = pytest.mark.slow

SCRIPT = REPO / "benchmarks" / "live_h200" / "live_signoff.sh"


def test_the_shapes_phase_runs_every_production_config_and_reports(tmp_path):
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # python3
        "LIVE": str(tmp_path / "live"),
        "MTP_REPO": str(tmp_path / "repo"),  # the phase's working folder (outputs land there)
        "LIVE_PLAN": "shapes",
        "LIVE_SERVER": "simulated",
        "LIVE_SGLANG": "0.5.23",
    }
    (tmp_path / "repo").mkdir()
    (tmp_path / "live").mkdir()  # the tick makes it before any phase
    run = subprocess.run(
        ["bash", str(SCRIPT), "phase_shapes"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    cells = sorted((tmp_path / "repo" / "outputs" / "live" / "shapes").glob("*/result.json"))
    results = [json.loads(p.read_text()) for p in cells]
    assert [r["cell"]["model"] for r in results] == [
        "deepseek-v3-dummy", "qwen3-next-80b-a3b-dummy", "glm-4.6-dummy",
        "llama-3.1-8b-eagle3-dummy",
    ]  # fmt: skip
    for result in results:
        assert result["status"] == "ok", result.get("error")
        assert "--load-format" in result["server"]["argv"]
        assert result["requested"]["load_format"] == "dummy"
        assert result["accept"], "speculative statistics cross-checked per cell"
    assert "report exit 0" in run.stdout
    assert (tmp_path / "live" / "live-results.tgz").is_file()
