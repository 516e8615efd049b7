"""``mtp-eval-report``'s wall time on issue 40's sweep: 6 lengths x 5 skip factors x 2 KV dtypes.

Issue 40 asks what the report costs on the long-context sign-off's sweep. This writes that
sweep to disk as ``mtp-eval -m`` leaves it, two sweep folders: the baseline (fa3, each KV dtype)
and the candidate (fmha_v2 at each prefill skip-softmax factor and KV dtype), each with Hydra's
``multirun.yaml`` and its jobs' folders. Every cell runs the six long-context evals
(``conf/evals/longctx.yaml``) at every length; the questions, their ``meta`` (length bin, counted
``prompt_tokens``, depths) and the repeat-0 ``question`` text are the real eval's
(``evals.longctx``, lengths counted by synth_llama's byte tokenizer), each line written as the
cell's runner writes it (``pipeline.measuring.evaluation.with_meta``), the eval blocks by the
cell's own ``evals.metrics.summarize`` / ``accept_stats.summarize_accept``. Answers are drawn:
a question's chance of a right answer is its own, lowered by a factor in proportion to the
factor and the length (the largest factor at 128k: 30 points), so the by-length checks and the
frontier per length have something to judge. Then the installed ``mtp-eval-report`` runs
``--runs`` times on the candidates' folder, the baselines' named by ``--baseline-dir``; its wall
time, peak memory and what it judged are printed and, with ``--write``, written to
``benchmarks/results/report_sweep_time.md``.

Usage (from the repo root): ``python -m benchmarks.report_sweep_time [--samples 20] [--repeats 1]
[--runs 3] [--write]``; ``tests/slow/test_report_sweep_time.py`` runs it small.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.report_sweep_cells import Sweep, write_sweeps

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks/results/report_sweep_time.md"
LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)  # one length bin each (pipeline.stats.by_bin)
FACTORS = (0, 3000, 10000, 30000, 100000)
KV_DTYPES = ("auto", "fp8_e4m3")


@dataclass(frozen=True)
class Timing:
    """The report's runs on one sweep: wall seconds each, peak memory, what it judged."""

    wall_s: list[float]
    peak_rss_mib: float
    exit_code: int
    cells: int
    checks: int
    by_bin: int
    frontier_points: int


def report_script() -> str:
    """The installed ``mtp-eval-report`` beside this Python (the venv's console script)."""
    return str(Path(sys.executable).parent / "mtp-eval-report")


def time_report(base: Path, cand: Path, out: Path, runs: int) -> Timing:
    """Run the installed report ``runs`` times on the candidates, the baselines beside it."""
    walls, codes = [], set()
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [report_script(), str(cand), "--baseline-dir", str(base), "--out", str(out)],
            capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        walls.append(time.perf_counter() - start)
        codes.add(done.returncode)
        if done.returncode not in (0, 1):  # 0 GO, 1 NO-GO; anything else did not judge
            raise RuntimeError(f"mtp-eval-report exited {done.returncode}: {done.stderr[-2000:]}")
    if len(codes) != 1:
        raise RuntimeError(f"mtp-eval-report's exit code moved between runs: {sorted(codes)}")
    summary = json.loads((out / "summary.json").read_text())
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # Linux: KiB
    return Timing(walls, peak_kib / 1024, codes.pop(), *judged(summary))


def judged(summary: dict[str, Any]) -> tuple[int, int, int, int]:
    """Cells, checks, by-bin entries and frontier-per-length points of a ``summary.json``."""
    cells = summary["cells"]
    checks = sum(len(c["checks"]) for c in cells)
    points = sum(len(e["verdicts"]) for e in summary["frontier_by_length"])  # a cell's bins
    return len(cells), checks, len(summary["by_bin"]), points


def markdown(sweep: Sweep, written_s: float, size_mib: float, t: Timing, command: str) -> str:
    """The results file: how it ran, then one table."""
    lines = sweep.lines()
    return "\n".join([
        "# mtp-eval-report on issue 40's long-context sweep",
        "",
        f"`{command}`, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores shared with other "
        f"work, Python {sys.version.split()[0]}: {len(sweep.lengths)} lengths x "
        f"{len(sweep.factors)} skip-softmax factors x {len(sweep.kv_dtypes)} KV dtypes "
        f"(fmha_v2 against fa3 per KV dtype: {sweep.cells()} cells), the six long-context "
        f"evals in every cell, {sweep.samples} questions per task and length, "
        f"{sweep.repeats} repeat(s): {lines:,} sample lines, {size_mib:.0f} MiB on disk, "
        f"written in {written_s:.1f} s. The report ran {len(t.wall_s)} times "
        "(`mtp-eval-report CAND --baseline-dir BASE --out OUT`, every format it writes).",
        "",
        "| report wall s (median, min, max) | ms per sample line | peak RSS MiB | exit | cells "
        "| checks | by-bin checks | frontier verdicts (cell x length) |",
        "|---|---|---|---|---|---|---|---|",
        f"| {statistics.median(t.wall_s):.1f}, {min(t.wall_s):.1f}, {max(t.wall_s):.1f} "
        f"| {1000 * statistics.median(t.wall_s) / lines:.3f} | {t.peak_rss_mib:.0f} "
        f"| {t.exit_code} | {t.cells} | {t.checks} | {t.by_bin} | {t.frontier_points} |",
        "",
    ])  # fmt: skip


def folder_mib(root: Path) -> float:
    """The size of every file under ``root``, in MiB."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    parser.add_argument("--factors", default=",".join(map(str, FACTORS)))
    parser.add_argument("--samples", type=int, default=20, help="questions per task and length")
    parser.add_argument("--repeats", type=int, default=1, help="repeats per question")
    parser.add_argument("--runs", type=int, default=3, help="report runs timed")
    parser.add_argument("--work", type=Path, help="where the sweep goes (default: a temp dir)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULT.name}")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Write the sweep, time the report on it, print the figures (``--write``: the file too)."""
    args = parse(argv)
    with tempfile.TemporaryDirectory(prefix="report-sweep-") as tmp:
        run(args, args.work or Path(tmp), " ".join(sys.argv[1:] if argv is None else argv))


def run(args: argparse.Namespace, work: Path, shown: str) -> None:
    """The sweep under ``work``, the report timed on it, the figures printed (and written)."""
    os.environ["MTP_EVAL_CACHE"] = str(work / "cache")  # the questions generated once here
    sweep = Sweep(tuple(int(n) for n in args.lengths.split(",")),
                  tuple(int(f) for f in args.factors.split(",")), KV_DTYPES,
                  args.samples, args.repeats)  # fmt: skip
    start = time.perf_counter()
    dirs = write_sweeps(work / "sweep", sweep)
    written = time.perf_counter() - start
    timing = time_report(*dirs, work / "report", args.runs)
    text = markdown(sweep, written, folder_mib(work / "sweep"), timing,
                    f"python -m benchmarks.report_sweep_time {shown}".strip())  # fmt: skip
    print(text)
    figures = {"wall_s": timing.wall_s, "exit_code": timing.exit_code, "cells": timing.cells,
               "by_bin": timing.by_bin, "frontier_points": timing.frontier_points,
               "lines": sweep.lines()}  # fmt: skip
    print(json.dumps(figures))
    if args.write:
        RESULT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
