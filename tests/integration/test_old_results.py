"""A sweep written before ``result.json`` became typed is still read by the report, unchanged.

``tests/data/sweep-schema1-f95dc87/`` is a real sweep (fmha_v2 / fa3 / trtllm_mha on the simulated
server, 10 questions x 2 repeats) made by mtp-eval at commit f95dc87, the last commit before the
typed contract (``pipeline.result_types``); only the files the report reads were kept.
``tests/data/sweep-schema1-f95dc87.report/`` holds that commit's own report of it (paths and the
time replaced by placeholders). The installed ``mtp-eval-report`` of today must write the same.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, console_script

pytestmark = pytest.mark.integration
SWEEP = REPO / "tests" / "data" / "sweep-schema1-f95dc87"
EXPECTED = REPO / "tests" / "data" / "sweep-schema1-f95dc87.report"


def _normalised(text: str, sweep: Path) -> str:
    text = text.replace(str(sweep), "{INPUT}").replace(str(REPO / "conf"), "{CONF}")
    return re.sub(r"generated [0-9T:+-]+\.", "generated {TIME}.", text)


def test_report_of_an_old_sweep_is_what_the_old_code_wrote(tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(SWEEP, sweep)
    before = {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()}
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep), "--out", str(tmp_path / "report")],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr  # fa3 vs reference: undecided, as then
    for name in ("report.md", "cells.csv"):
        written = (tmp_path / "report" / name).read_text(encoding="utf-8")
        assert _normalised(written, sweep) == (EXPECTED / name).read_text(encoding="utf-8"), name
    assert {p: p.read_bytes() for p in sweep.rglob("*") if p.is_file()} == before  # read only
