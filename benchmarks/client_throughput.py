"""Client throughput: our client vs a bare aiohttp loop, lm-eval and sgl-eval.

Every client runs as its own process against the same simulated SGLang server (fast mode: no
added latency unless asked, 16-token answers, no ledger), 2,000 GPQA-format prompts
(200 questions x 10 repeats) at concurrency 64, one warm-up round then three timed rounds in
rotating order, at server latency 0 and 50 ms. Reported per client (medians of the rounds):

- request phase req/s: from the first request to the last graded answer, timed in the worker;
- end to end req/s: from process start (interpreter, imports, data loading) to exit;
- client CPU ms/request: the worker's own CPU (all threads) over the request phase, and over
  its whole life (``wait4``), which unlike req/s does not depend on other load on the host.

What each worker does per request is what the tool does in use: ours runs
``pipeline.measuring.evaluation.run_eval`` (grading, one sample line per answer on disk);
lm-eval runs ``simple_evaluate`` with ``local-chat-completions`` on a task read from a local JSONL
(``TaskManager(include_defaults=False)``: no indexing of its built-in tasks); sgl-eval runs its
``gpqa`` benchmark with ``--from-dataset``; the bare client only sends and JSON-decodes.

Usage: ``python -m benchmarks.client_throughput [--requests 2000] [--rounds 3] [--write]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_workers import WORKERS
from benchmarks.simserver_fixture import ROOT, SimServer, write_gpqa_workload

CLIENTS = ("ours-client", "ours", "bare", "lm-eval", "sgl-eval")
OUT = ROOT / "benchmarks" / "results" / "client_throughput.md"


def run_worker(client: str, url: str, folder: Path, concurrency: int) -> dict[str, Any]:
    """One client process; its request-phase figures, wall time and CPU from wait4."""
    argv = [sys.executable, "-m", "benchmarks.bench_workers", client, url]  # PYTHONPATH: ROOT
    argv += [str(folder), str(concurrency)]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HOME": str(folder / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = proc.communicate(timeout=600)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{client} worker failed ({proc.returncode}):\n{err[-3000:]}")
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    report["e2e_s"] = wall
    return report


def measure(latency: float, opts: argparse.Namespace, folder: Path) -> dict[str, list[dict]]:
    """Warm-up plus ``opts.rounds`` timed rounds of every client against one server."""
    runs: dict[str, list[dict]] = {c: [] for c in opts.clients}
    with SimServer(folder, latency_s=latency, mean_tokens=16) as url:
        for round_ in range(opts.rounds + 1):
            order = list(opts.clients)
            order = order[round_ % len(order) :] + order[: round_ % len(order)]
            for client in order:
                before = _children_cpu()
                report = run_worker(client, url, folder, opts.concurrency)
                report["cpu_total_s"] = _children_cpu() - before
                if report["ok"] != opts.requests:
                    raise RuntimeError(f"{client}: {report['ok']} of {opts.requests} answered")
                if round_:  # round 0 warms caches (page cache, .pyc, HF dataset cache)
                    runs[client].append(report)
                print(
                    f"  {latency * 1e3:.0f} ms round {round_} {client}: "
                    f"{opts.requests / report['request_s']:.0f} req/s request phase, "
                    f"{opts.requests / report['e2e_s']:.0f} req/s e2e",
                    flush=True,
                )
    return runs


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def summary(runs: dict[str, list[dict]], n: int) -> dict[str, dict[str, float]]:
    """Medians per client: req/s (request phase, end to end) and CPU ms per request."""
    med = statistics.median
    return {
        c: {
            "request_rps": med(n / r["request_s"] for r in rs),
            "e2e_rps": med(n / r["e2e_s"] for r in rs),
            "cpu_request_ms": med(1e3 * r["cpu_request_s"] / n for r in rs),
            "cpu_total_ms": med(1e3 * r["cpu_total_s"] / n for r in rs),
        }
        for c, rs in runs.items()
    }


def paired_ratio(runs: dict[str, list[dict]], a: str, b: str, field: str) -> float | None:
    """Median over rounds of a's rate / b's rate in the same round (runs a few seconds apart),
    so that load from other work on the host, which drifts between rounds, cancels."""
    if a not in runs or b not in runs:
        return None
    return statistics.median(rb[field] / ra[field] for ra, rb in zip(runs[a], runs[b], strict=True))


def table(latency: float, runs: dict[str, list[dict]], n: int, concurrency: int) -> list[str]:
    """Markdown rows for one server latency; ratios against bare aiohttp, paired by round."""
    ideal = f" (ideal {concurrency / latency:.0f} req/s)" if latency else ""
    lines = [
        f"### Server latency {latency * 1e3:.0f} ms{ideal}",
        "",
        "| client | request phase req/s | x bare | end to end req/s | x bare | "
        "client CPU ms/req, request phase | client CPU ms/req, whole process |",
        "|---|---|---|---|---|---|---|",
    ]
    for client, v in summary(runs, n).items():
        rr, er = (paired_ratio(runs, client, "bare", f) for f in ("request_s", "e2e_s"))
        lines.append(
            f"| {client} | {v['request_rps']:.0f} | {_x(rr)} | {v['e2e_rps']:.0f} | "
            f"{_x(er)} | {v['cpu_request_ms']:.3f} | {v['cpu_total_ms']:.3f} |"
        )
    return lines


def _x(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}"


NOTES = (
    "Each client is its own process against one simulated SGLang server (fast mode: 16-token "
    "answers, no ledger), 200 GPQA-format questions x 10 repeats. `ours-client`: our "
    "ChatClient alone (payload, send, parse). `ours`: what a cell runs for an eval "
    "(`run_eval`: the client plus grading and one sample line on disk per answer, then "
    "`summarize`). `bare`: semaphore + gather over one aiohttp session, JSON-decode only. "
    "`lm-eval`: `simple_evaluate`, `local-chat-completions`, a task over a local JSONL, "
    "`TaskManager(include_defaults=False)`. `sgl-eval`: its `run gpqa --from-dataset`, "
    "in-process. Request phase: from the first request to the last answer (our eval and "
    "sgl-eval grade inside it, lm-eval after it). End to end: process start to exit, imports "
    "and data loading included. The machine (2 cores) was shared with other work while this "
    "ran, so req/s move from round to round: every `x` column and target is the median of "
    "per-round ratios (clients a few seconds apart); client CPU per request does not depend "
    "on that load.",
)
CHECKS = (
    ("request phase, our client >= 0.8x bare, 0 ms", 0.0, "ours-client", "bare", "request_s", 0.8),
    (
        "request phase, our client >= 0.97x bare, 50 ms",
        0.05,
        "ours-client",
        "bare",
        "request_s",
        0.97,
    ),
    ("request phase, our whole eval >= 0.8x bare, 0 ms", 0.0, "ours", "bare", "request_s", 0.8),
    ("request phase, our whole eval >= 0.97x bare, 50 ms", 0.05, "ours", "bare", "request_s", 0.97),
    ("end to end >= 2x lm-eval Python API, 0 ms", 0.0, "ours", "lm-eval", "e2e_s", 2.0),
    ("end to end >= 5x sgl-eval, 0 ms", 0.0, "ours", "sgl-eval", "e2e_s", 5.0),
    ("end to end >= 2x lm-eval Python API, 50 ms", 0.05, "ours", "lm-eval", "e2e_s", 2.0),
    ("end to end >= 5x sgl-eval, 50 ms", 0.05, "ours", "sgl-eval", "e2e_s", 5.0),
)


def targets(by_latency: dict[float, dict[str, list[dict]]]) -> list[str]:
    """The issue's targets, each with the measured (paired, median) ratio and met / missed."""
    rows = ["| target | measured | met |", "|---|---|---|"]
    for text, lat, ours, other, field, bound in CHECKS:
        ratio = paired_ratio(by_latency.get(lat, {}), ours, other, field)
        if ratio is not None:
            rows.append(f"| {text} | {ratio:.2f}x | {'yes' if ratio >= bound else '**NO**'} |")
    return rows


def machine() -> str:
    """The host the numbers came from (the same 2-core kind as CI; shared with other work)."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.node() or 'unknown host'}: {platform.platform()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average at the end {load}"
    )


def publish(lines: list[str], out: Path, write: bool, started: float) -> None:
    """Print a results table with the host and run time under it; write it to ``out`` if asked."""
    text = [*lines, f"Ran in {time.perf_counter() - started:.0f} s on {machine()}."]
    print("\n".join(text))
    if write:
        out.write_text("\n".join(text) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="a multiple of 200")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latencies", default="0,0.05", help="seconds, comma-separated")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}")
    opts = parser.parse_args()
    opts.clients = [c for c in opts.clients.split(",") if c]
    unknown = sorted(set(opts.clients) - set(WORKERS))
    if unknown:
        parser.error(f"--clients: unknown {unknown}; known: {sorted(WORKERS)}")
    started = time.perf_counter()
    by_latency: dict[float, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="client-bench-") as tmp:
        folder = Path(tmp)
        write_gpqa_workload(folder, questions=200, repeats=opts.requests // 200)
        for latency in (float(x) for x in opts.latencies.split(",")):
            by_latency[latency] = measure(latency, opts, folder)
    lines = [
        f"# Client throughput: {opts.requests} chat requests at concurrency "
        f"{opts.concurrency}, medians of {opts.rounds} rounds",
        "",
        *NOTES,
        "",
        *[
            row
            for lat, runs in by_latency.items()
            for row in (*table(lat, runs, opts.requests, opts.concurrency), "")
        ],
        "## Targets (issue 9)",
        "",
        *targets(by_latency),
        "",
    ]
    publish(lines, OUT, opts.write, started)


if __name__ == "__main__":
    main()
