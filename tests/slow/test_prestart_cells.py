"""``server.prestart_next`` through ``mtp-eval -m``: a sweep's later cells wait less for their
server, each still verified; a cell that times speed refuses the setting before anything starts."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import psutil
import pytest

from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result
from tests.helpers.cells import console_script
from tests.helpers.proxied import FAST

pytestmark = pytest.mark.slow

STARTUP_S = 3.0
SLOW = [  # start-up and evals of seconds each, as on a GPU (minutes there)
    f"server.simulated.startup_delay_s={STARTUP_S}",
    "server.simulated.latency_s=0.5",
    "client.concurrency=8",
]
PRESTART = ["server.prestart_next=true", "server.mem_fraction_static=0.45"]


def sweep(folder: Path, *values: str) -> tuple[subprocess.CompletedProcess[str], float]:
    argv = [console_script("mtp-eval"), "-m", "backend=fa3,flashinfer,triton", *FAST, *SLOW]
    started = time.monotonic()
    done = subprocess.run(
        [*argv, *values, f"hydra.sweep.dir={folder}"],
        capture_output=True, text=True, timeout=240, check=False, cwd=folder.parent,
    )  # fmt: skip
    return done, time.monotonic() - started


def cells(folder: Path) -> list[CellResult]:
    found = [read_result(d) for d in sorted(folder.iterdir()) if (d / "result.json").exists()]
    return [r for r in found if r is not None]


def waited(result: CellResult) -> float:
    return result.marks["ready"] - result.marks["launch"]


def test_later_cells_wait_less_for_their_server_and_each_is_verified(tmp_path):
    plain, plain_s = sweep(tmp_path / "plain")
    ahead, ahead_s = sweep(tmp_path / "ahead", *PRESTART)
    assert plain.returncode == 0 and ahead.returncode == 0, ahead.stdout + ahead.stderr
    before, after = cells(tmp_path / "plain"), cells(tmp_path / "ahead")
    assert [r.status for r in before + after] == ["ok"] * 6
    assert all(waited(r) >= STARTUP_S for r in before)  # every cell pays its start-up
    assert waited(after[0]) >= STARTUP_S  # the first cell has no cell before it
    assert all(waited(r) < STARTUP_S - 1 for r in after[1:]), [waited(r) for r in after]
    # The sweep's wall time is benchmarks.sweep_startup's to measure: on a loaded CI machine the
    # two sweeps' totals moved by more than the start-up saved (20.34 s against 20.20 s).
    assert plain_s > 0 and ahead_s > 0
    for result, backend in zip(after[1:], ("flashinfer", "triton"), strict=True):
        assert any("started during the previous cell's evals" in w for w in result.warnings)
        # taken over, then held to the plan like any server: what it reports is its own cell's
        assert result.mismatches == () and result.observed["attention_backend"] == backend
        assert result.observed["mem_fraction_static"] == 0.45
    assert any("started on this GPU during this cell's evals" in w for w in after[0].warnings)
    strays = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(
        p.info["cmdline"] or [])]  # fmt: skip
    assert strays == []  # no server outlives the sweep


def test_a_cell_that_times_speed_refuses_it_before_anything_starts(tmp_path):
    done, _ = sweep(tmp_path / "s", *PRESTART, "speed.enabled=true")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "server.prestart_next=true shares the GPU" in done.stderr
    assert "this cell times speed (speed.enabled=true)" in done.stderr
    assert not (tmp_path / "s").exists()
