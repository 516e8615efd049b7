"""A cell's start-up path imports none of the heavy libraries (each costs a second or more before
the first request); checked in a fresh interpreter."""

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_cell_start_up_path_stays_light():
    heavy = [
        "torch",
        "flashinfer",
        "lm_eval",
        "datasets",
        "matplotlib",
        "scipy.stats",
        "transformers",
        "statsmodels",
        # the parity phase's statistics: loaded by a cell that runs the phase, not by every cell
        "pipeline.measuring.parity_run",
        "pipeline.stats.parity_verdict",
    ]
    code = (
        "import sys, pipeline.cli.app, pipeline.cell.job, pipeline.measuring.measure; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
