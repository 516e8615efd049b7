"""The report-timing benchmark of issue 40's sweep, run small so it cannot rot.

``benchmarks/report_sweep_time.py`` at two lengths and three questions per task and length: the
sweep it writes is read by the installed report as a real one (every candidate judged by length
against its own KV dtype's baseline, no warning), and the figures it prints add up.
"""

import json
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO

pytestmark = pytest.mark.slow


def test_the_report_timing_runs_on_a_small_sweep(tmp_path):
    argv = ["--lengths", "4096,8192", "--samples", "3", "--runs", "1", "--work", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.report_sweep_time", *argv],
        cwd=REPO, text=True, capture_output=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(proc.stdout.splitlines()[-1])
    assert figures["lines"] == 12 * 6 * 2 * 3  # 10 candidates + 2 baselines, 6 evals, 2 lengths
    assert figures["cells"] == 10 and figures["exit_code"] in (0, 1)
    assert figures["frontier_points"] == 10 * 2  # every candidate has a verdict at each length
    assert figures["by_bin"] == 10 * 6 * 2  # accuracy and accept by length, per eval
    assert len(figures["wall_s"]) == 1 and figures["wall_s"][0] > 0
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["warnings"] == []
    kinds = {k["kind"] for c in summary["cells"] for k in c["checks"]}
    assert {"accuracy_vs_baseline", "accuracy_by_length"} <= kinds
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Skip-softmax frontier by context length: fmha_v2" in md
    assert md.count("| skip-softmax | <=4k | 4k-8k |") == 2  # a table per KV dtype
    assert "mtp-eval-report on issue 40" in proc.stdout
