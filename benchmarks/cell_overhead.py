"""Pipeline overhead per cell, measured from outside the job.

Runs ``python -m pipeline`` (one cell, simulated server, bundled sample eval) three times per
configuration and reads, per run:

- job start: when this script started the process (interpreter start and imports included);
- first request / last response: the first and last line of the simulated server's ledger;
- result.json: its modification time (``run_cell`` writes it last, right after mark ``end``);
- the server's own start-up and stop from ``timing.marks_s`` (ready - launch, stopped -
  evals_done), which are excluded as the issue asks.

So ``to first request = (first request - job start) - (ready - launch)`` and ``after last
response = (result.json - last response) - (stopped - evals_done)``. ``timing.pipeline_overhead``
(the job's own figure, which starts its clock inside ``run_cell``) is shown beside it. Then it
times the suspects one by one in fresh interpreters: imports, the git provenance subprocess,
package metadata, dataset loading.

Usage: ``python -m benchmarks.cell_overhead [--rounds 3] [--write]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.client_throughput import publish
from benchmarks.simserver_fixture import ROOT

OUT = ROOT / "benchmarks" / "results" / "cell_overhead.md"
CONFIGS = {
    "gpu=auto (the default: detect)": [],
    "gpu=h200 (no detection)": ["gpu=h200"],
}
SUSPECTS = {
    "python -c pass (interpreter)": "pass",
    "import pipeline.cli.app (Hydra app module)": "import pipeline.cli.app",
    "import pipeline.cell.job (everything a cell imports)": "import pipeline.cell.job",
    "import torch (backends.gpu's fallback without nvidia-smi)": "import torch",
    "import scipy.stats (evals.metrics, at import time)": "import scipy.stats",
    "import evals.client": "import evals.client",
    "import tqdm": "import tqdm",
    "git provenance (two git subprocesses)": (
        "from pipeline.cell.provenance import git_state; git_state()"
    ),
    "package versions (metadata)": (
        "from pipeline.cell.provenance import package_versions; package_versions()"
    ),
    "load the bundled eval (make_eval + prompts)": (
        "from evals.base import make_eval; from evals.eval_conf import EvalConf, DatasetConf; "
        "make_eval('s', EvalConf(kind='gpqa', dataset=DatasetConf())).prompts()"
    ),
}


def one_cell(folder: Path, overrides: list[str]) -> dict[str, float]:
    """One job; the overhead figures in seconds."""
    from pipeline.results.cell_paths import result_path
    from pipeline.results.store import read_result

    out = folder / f"cell-{time.monotonic_ns()}"
    argv = [sys.executable, "-m", "pipeline", f"output_dir={out}", "client.progress=false"]
    argv += ["hydra.run.dir=" + str(out / "hydra"), *overrides]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.time()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    exited = time.time()
    result = read_result(out)
    if result is None:
        raise RuntimeError(f"no result.json:\n{done.stderr[-3000:]}")
    if result.status != "ok":
        raise RuntimeError(f"cell {result.status}: {result.error}")
    marks, written = result.marks, result_path(out).stat().st_mtime
    ledger = [json.loads(x) for x in (out / "simulated_ledger.jsonl").read_text().splitlines()]
    first, last = min(r["time"] for r in ledger), max(r["time"] for r in ledger)
    run_cell_start = written - marks["end"]
    return {
        "before_run_cell": run_cell_start - start,
        "to_first_request": (first - start) - (marks["ready"] - marks["launch"]),
        "after_last_response": (written - last) - (marks["stopped"] - marks["evals_done"]),
        "job_reported_before": result.overhead["to_first_request_s"],
        "server_start": marks["ready"] - marks["launch"],
        "server_stop": marks["stopped"] - marks["evals_done"],
        "evals": marks["evals_done"] - marks["verified"],
        "exit_after_result": exited - written,
        "wall": exited - start,
    }


def suspect_times(rounds: int) -> list[str]:
    """Median wall time of each suspect in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = ["| step (fresh interpreter) | wall s, median |", "|---|---|"]
    for label, code in SUSPECTS.items():
        walls = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
            walls.append(time.perf_counter() - t0)
        rows.append(f"| {label} | {statistics.median(walls):.2f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}")
    opts = parser.parse_args()
    started = time.perf_counter()
    keys = (
        "to_first_request",
        "after_last_response",
        "job_reported_before",
        "before_run_cell",
        "server_start",
        "server_stop",
        "evals",
        "exit_after_result",
        "wall",
    )
    lines = [
        "| configuration | to first request (server start-up excluded) | after last "
        "response to result.json (server stop excluded) | the job's own to_first_request_s | "
        "before run_cell (interpreter, imports, Hydra) | server start-up | server stop | "
        "evals | exit after result.json | job wall |",
        "|---" * 10 + "|",
    ]
    with tempfile.TemporaryDirectory(prefix="cell-overhead-") as tmp:
        for label, overrides in CONFIGS.items():
            one_cell(Path(tmp), overrides)  # warm-up: page cache, .pyc
            runs = [one_cell(Path(tmp), overrides) for _ in range(opts.rounds)]
            med = {k: statistics.median(r[k] for r in runs) for k in keys}
            lines.append(f"| {label} | " + " | ".join(f"{med[k]:.2f}" for k in keys) + " |")
    text = [
        f"# Pipeline overhead per cell (seconds, medians of {opts.rounds} runs after a warm-up)",
        "",
        "One cell: `python -m pipeline` (simulated server, bundled 58-question sample, "
        "1 repeat). Target: at most 2 s before the first request and after the last "
        "response, the server's own start-up and stop excluded.",
        "",
        *lines,
        "",
        "## Where the time before the first request goes",
        "",
        *suspect_times(opts.rounds),
        "",
    ]
    publish(text, OUT, opts.write, started)


if __name__ == "__main__":
    main()
