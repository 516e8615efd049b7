"""A sweep's wall time per cell before and after ``server.prestart_next`` (issue 42 item 5).

Runs ``mtp-eval -m`` (``python -m pipeline``, Hydra's basic launcher: the cells one after another
in one process) over ``--cells`` cells on the simulated server with a start-up delay
(``server.simulated.startup_delay_s``) and a per-request latency (``server.simulated.latency_s``),
so that start-up and evals both take seconds, as on the H200 (70-93 s warm start; minutes of
evals). Twice: as today, and with ``server.prestart_next=true`` (the next cell's server started
during the current cell's evals; both at ``server.mem_fraction_static=0.45``, which the simulated
server only reports). Per cell: what the cell waited for its server (``ready - launch``), the
evals, the stop and the cell's wall; then the sweep's wall per cell, measured from outside, and
the bound from today's marks (each later cell's start-up hidden up to the evals and stop of the
cell before it).

Usage: ``python -m benchmarks.sweep_startup [--cells 3] [--startup-s 4] [--latency-s 1.5]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.client_throughput import publish
from benchmarks.live_h200.startup_sweeps import Sweep, read_cells, table
from benchmarks.simserver_fixture import ROOT

OUT = ROOT / "benchmarks" / "results" / "sweep_startup.md"
BACKENDS = ("fa3", "flashinfer", "triton", "fa3_repeat")
PRESTART = ["server.prestart_next=true", "server.mem_fraction_static=0.45"]


def run_sweep(
    folder: Path, cells: int, startup_s: float, latency_s: float, more: list[str]
) -> Sweep:
    """Run one ``mtp-eval -m`` sweep of ``cells`` cells (``more``: overrides); wall and marks.

    Raises:
        RuntimeError: a cell without an ``ok`` result (the sweep's output tail attached).
    """
    argv = [sys.executable, "-m", "pipeline", "-m", "backend=" + ",".join(BACKENDS[:cells])]
    argv += [f"server.simulated.startup_delay_s={startup_s}", "client.progress=false"]
    argv += [f"server.simulated.latency_s={latency_s}", "client.concurrency=8"]
    argv += [f"hydra.sweep.dir={folder}", *more]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    try:
        times = read_cells(folder)
    except ValueError as exc:
        raise RuntimeError(f"{exc}\n{done.stdout[-2000:]}{done.stderr[-2000:]}") from exc
    if len(times) != cells:
        raise RuntimeError(f"{len(times)} of {cells} cells wrote a result:\n{done.stderr[-3000:]}")
    return Sweep(wall, times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=3, choices=range(2, len(BACKENDS) + 1))
    parser.add_argument("--startup-s", type=float, default=4.0, help="simulated start-up")
    parser.add_argument("--latency-s", type=float, default=1.5, help="simulated per request")
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}")
    opts = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sweep-startup-") as tmp:
        setting = (opts.cells, opts.startup_s, opts.latency_s)
        before = run_sweep(Path(tmp) / "today", *setting, [])
        after = run_sweep(Path(tmp) / "prestart", *setting, PRESTART)
    text = [
        f"# A sweep's wall time per cell and its server start-up ({opts.cells} cells)",
        "",
        f"`mtp-eval -m`, simulated server: start-up {opts.startup_s:g} s, "
        f"{opts.latency_s:g} s per request, bundled 58-question sample, 1 repeat.",
        "",
        *table(before, after),
        "",
    ]
    publish(text, OUT, opts.write, started)


if __name__ == "__main__":
    main()
