"""Views of a committed live speed report's ``summary.json`` that a rebuilt report must match."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def speed_view(summary: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each speed entry's cell, shape, median and ratio to its baseline, sorted."""
    keys = ("cell_id", "phase", "batch", "tokens", "median_ms", "ratio", "baseline_id")
    return sorted(tuple(e[k] for k in keys) for e in summary["speed"])


def verdicts(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each cell's checks as (cell, check title, verdict)."""
    return [(c["id"], k["title"], k["verdict"]) for c in summary["cells"] for k in c["checks"]]


def readme_rows(summary: Path) -> list[str]:
    """The Markdown rows ``pipeline_speed_rows.py`` prints for the README from ``summary``."""
    script = "benchmarks.live_h200.pipeline_speed_rows"
    return subprocess.run([sys.executable, "-m", script, str(summary)], cwd=REPO,
                          capture_output=True, text=True, timeout=60,
                          check=True).stdout.splitlines()  # fmt: skip
