"""``make demo`` installs only what the demo needs and says so; ``make test`` installs dev.

``make -n`` prints the recipes a fresh checkout would run (a venv that does not exist yet), so
this checks the real Makefile without installing anything.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import REPO

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
]


def planned(target: str, tmp_path) -> list[str]:
    run = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'fresh-venv'}"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return run.stdout.splitlines()


def test_demo_installs_the_base_only_and_says_what(tmp_path):
    lines = planned("demo", tmp_path)
    installs = [line for line in lines if "pip install" in line and "--upgrade pip" not in line]
    assert installs and all(line.rstrip().endswith("-e .") for line in installs), installs
    assert not any("[dev]" in line or "torch" in line.split("echo")[0] for line in installs)
    said = " ".join(line for line in lines if line.startswith("echo"))
    assert "base dependencies only" in said and "no torch" in said
    first_echo = next(i for i, line in enumerate(lines) if line.startswith("echo"))
    assert first_echo < lines.index(installs[0])  # said before pip runs


def test_test_target_still_installs_the_dev_extra(tmp_path):
    lines = planned("test", tmp_path)
    assert any("pip install" in line and "'.[dev]'" in line for line in lines), lines
