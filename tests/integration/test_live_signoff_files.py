"""The committed live sign-off is what its files say: the report rebuilt from the
committed cells and samples gives the committed verdicts, and the write-up's tables come from them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cells import rebuild_committed_report
from tests.helpers.quoted import unquoted

REPO = Path(__file__).resolve().parents[2]
SIGNOFF = REPO / "benchmarks/results/live-h200/signoff"

pytestmark = pytest.mark.integration


def _verdicts(summary: dict) -> dict[str, str]:
    return {c["folder"].split("/live/")[-1]: c["verdict"] for c in summary["cells"]}


def test_the_report_rebuilt_from_committed_files_gives_the_committed_verdicts(tmp_path):
    run, rebuilt = rebuild_committed_report(SIGNOFF, tmp_path, lambda s: not s.startswith("r2-"))
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]  # a NO-GO: exit 1
    committed = json.loads((SIGNOFF / "report/summary.json").read_text())
    assert _verdicts(rebuilt) == _verdicts(committed)
    assert committed["verdict"] == "NO-GO" and len(committed["cells"]) == 15


def test_the_write_up_tables_print_from_the_committed_files():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.live_h200.signoff_table", str(SIGNOFF)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "| s-a4 | fmha_v2 | auto | 1e+06 | 0.531 (2) | 0.527 (2) | 0.976 (6) |" in out
    assert "| all 48 | 35.0% | 65.3% | 84.4% | 92.9% |" in out
    missed = unquoted((REPO / "benchmarks/live_h200/README.md").read_text(), out.splitlines())
    assert missed == [], f"the live README differs from signoff_table.py: {missed}"
