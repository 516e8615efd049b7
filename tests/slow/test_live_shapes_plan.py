"""LIVE_PLAN=shapes of benchmarks/live_h200/live_signoff.sh, rehearsed on the simulated server.

The phase the H200 runs (every shipped production model on its cut shape with random weights,
then the report), with the sign-off's server settings, against ``LIVE_SERVER=simulated``.
"""

import json

import pytest

from tests.helpers.live_plan import run_live_plan

pytestmark = pytest.mark.slow


def test_the_shapes_phase_runs_every_production_config_and_reports(tmp_path):
    run = run_live_plan(tmp_path, "shapes", ["phase_shapes"], 600)
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
    # One fa3 cell per shape: nothing to pair or band, so the report judges nothing and exits 2
    # saying so (issue 36: a gate that judged nothing does not say GO).
    assert "report exit 2" in run.stdout
    written = (tmp_path / "repo" / "outputs" / "live" / "report" / "report.md").read_text()
    assert "nothing was judged" in written
    assert (tmp_path / "live" / "live-results.tgz").is_file()
