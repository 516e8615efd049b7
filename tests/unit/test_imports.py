"""Import hygiene: our generic package names resolve to this project, and a cell's start-up path
imports none of the heavy libraries (each costs a second or more before the first request)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", ["pipeline", "backends", "evals"])
def test_generic_package_names_are_ours(package):
    module = __import__(package)
    assert Path(module.__file__).resolve().parent == REPO / package


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
    ]
    code = (
        "import sys, pipeline.cli, pipeline.cell, pipeline.measure; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"
