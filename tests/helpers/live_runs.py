"""Reading the committed live runs (``benchmarks/results/live-h200/``) in their tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.cells import REPO

LIVE = REPO / "benchmarks/results/live-h200"


def summary(run: str, report: str = "report") -> dict[str, Any]:
    """A committed report's summary.json."""
    return json.loads((LIVE / run / report / "summary.json").read_text())


def script(name: str, *args: str) -> str:
    """The standard output of one of the live write-ups' table scripts."""
    argv = [sys.executable, str(REPO / "benchmarks/live_h200" / name), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout


def assert_quoted(rows: list[str], run: str) -> None:
    """Every Markdown row a script printed is in the run's README, as printed."""
    readme = (LIVE / run / "README.md").read_text()
    for line in rows:
        if line.startswith("| ") and "---" not in line:
            assert line in readme, f"{run}/README.md differs from the committed files: {line}"


def readme_rows(summary_path: Path) -> list[str]:
    """The Markdown rows ``pipeline_speed_rows.py`` prints for a README from a speed report."""
    return script("pipeline_speed_rows.py", str(summary_path)).splitlines()
