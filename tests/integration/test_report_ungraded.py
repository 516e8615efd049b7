"""An ungraded eval (MT-Bench-style, for accept rates) gets accept checks but no accuracy check."""

import json
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO

pytestmark = pytest.mark.integration


def test_ungraded_eval_is_judged_on_accept_length_only(tmp_path):
    sweep = tmp_path / "mtb"
    subprocess.run([sys.executable, "-m", "pipeline", "-m", "backend=fa3,fmha_v2",
                    "evals=[mtbench_sample]", "client.progress=false",
                    f"hydra.sweep.dir={sweep}"], cwd=REPO, check=True, capture_output=True,
                   timeout=240)  # fmt: skip
    subprocess.run([sys.executable, "-m", "pipeline.report.cli", str(sweep)], cwd=REPO,
                   capture_output=True, timeout=120, check=False)  # fmt: skip
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    kinds = {k["kind"] for c in summary["cells"] if c["variant"] == "fmha_v2" for k in c["checks"]}
    assert "accept_vs_baseline" in kinds and "accuracy_vs_baseline" not in kinds
