"""The committed skip-softmax frontier table is its script's output from the committed sign-offs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pipeline.report.write.frontier_tables import factor_text
from tests.helpers.cells import REPO, rebuild_committed_report

SCRIPT = REPO / "benchmarks" / "live_h200" / "skip_frontier_table.py"
TABLE = REPO / "benchmarks" / "results" / "live-h200" / "skip_frontier.md"


def test_the_committed_table_is_what_the_script_prints() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert run.stdout == TABLE.read_text(encoding="utf-8"), (
        "skip_frontier.md is stale: python benchmarks/live_h200/skip_frontier_table.py > "
        f"{TABLE.relative_to(REPO)}"
    )


def test_the_table_has_each_measured_factor_its_verdict_and_speed_where_it_was_measured() -> None:
    rows = [line.split(" | ") for line in TABLE.read_text().splitlines() if line.startswith("| 0.")]
    by_key = {(r[0].lstrip("| "), r[1], r[2]): r for r in rows}
    assert by_key[("0.5.19", "auto", "30000")][3:5] == ["65.3%", "GO"]
    assert by_key[("0.5.19", "auto", "1e+06")][3:5] == ["92.9%", "NO-GO"]
    assert by_key[("0.5.19", "fp8_e4m3", "10000")][3:5] == ["25.8%", "INCONCLUSIVE"]
    signoffs = [r for r in rows if r[1] != "bf16"]  # the sign-offs ran no speed phase
    assert all(r[-1] == "not measured yet |" for r in signoffs) and len(signoffs) == 11
    # The frontier run: every factor with its gains, each against the A/A.
    measured = {r[2]: r for r in rows if r[1] == "bf16"}
    assert list(measured) == ["0 (exact, A/A)", "0 (exact)", "10000", "30000", "100000", "1e+06"]
    assert measured["1e+06"][3:5] == ["92.9%", "NO-GO"]
    assert measured["0 (exact)"][-1].startswith("1 x 16,384: reference 15.8 ms")
    assert "1 x 16,384: 0.983 (within the A/A)" in measured["10000"][-1]
    assert (
        "KV auto (factors 0 (exact), 10000, 30000, 100000, 1e+06): the largest factor whose "
        "verdict is GO: 30000." in TABLE.read_text()
    )


def test_the_reports_frontier_rebuilt_from_the_committed_cells_agrees_with_the_table(
    tmp_path: Path,
) -> None:
    signoff = REPO / "benchmarks" / "results" / "live-h200" / "signoff"
    run, summary = rebuild_committed_report(signoff, tmp_path, lambda s: not s.startswith("r2-"))
    assert run.returncode == 1, run.stderr[-2000:]  # the committed verdict: NO-GO
    rows = [line.split(" | ") for line in TABLE.read_text().splitlines()
            if line.startswith("| 0.5.19 |")]  # fmt: skip
    table = {(r[1], r[2]): r[4] for r in rows}
    found = {(f["kv_dtype"], factor_text(p["factor"])): p["accuracy_verdict"]
             for f in summary["frontier"] for p in f["points"]}  # fmt: skip
    assert found == table
    assert [f["largest_go_factor"] for f in summary["frontier"]] == [3e4, 0.0]
