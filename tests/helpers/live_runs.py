"""Reading the committed live runs (``benchmarks/results/live-h200/``) in their tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.cells import REPO
from tests.helpers.quoted import unquoted

LIVE = REPO / "benchmarks/results/live-h200"


def summary(run: str, report: str = "report") -> dict[str, Any]:
    """A committed report's summary.json."""
    return json.loads((LIVE / run / report / "summary.json").read_text())


def script(name: str, *args: str) -> str:
    """The standard output of one of the live write-ups' table scripts."""
    module = "benchmarks.live_h200." + name.removesuffix(".py")
    argv = [sys.executable, "-m", module, *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True,
                          cwd=REPO).stdout  # fmt: skip


def assert_quoted(rows: list[str], run: str) -> None:
    """Every Markdown row a script printed is quoted in the run's README: its facts, in order."""
    readme = (LIVE / run / "README.md").read_text()
    missing = unquoted(readme, rows)
    assert missing == [], f"{run}/README.md differs from the committed files: {missing}"


def readme_rows(summary_path: Path) -> list[str]:
    """The Markdown rows ``pipeline_speed_rows.py`` prints for a README from a speed report."""
    return script("pipeline_speed_rows.py", str(summary_path)).splitlines()
