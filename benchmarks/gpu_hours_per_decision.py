"""GPU-hours per GO/NO-GO decision, from the sign-off simulation.

Fixed error rates for every design: a false GO (true drop = the margin) at most 5%, and a GO
when nothing dropped at least 80% of the time (the power). For each design it finds the repeats
per question needed, by simulation on the GPQA-diamond-shaped benchmark of
``signoff_sim.simulation`` (198 questions, accuracy 0.72, one repeat's SD 1.5 points):

- paired fixed: the smallest k whose GO rate reaches 80%;
- paired sequential (rounds of r, O'Brien-Fleming looks): the shortest design whose GO rate
  reaches 80%; its cost is the *average* repeats it used;
- unpaired (each run's accuracy with its own clustered SE, as two separately reported scores):
  the smallest k, or never when its SE cannot fall below the level the margin needs;
- TensorRT-LLM's fixed threshold: its own sizing formula for a detectable drop equal to the
  margin (its rule controls neither error rate at the margin; see signoff_rules_comparison.md).

GPU-hours = repeats x 2 arms (baseline and candidate) x the hours one repeat of the benchmark
takes; ``--hours-per-repeat`` (default: 198 questions x 8,000 tokens at 3,000 tokens/s, an
illustrative reasoning model) scales them, the ratios do not depend on it.

Usage: ``python -m benchmarks.gpu_hours_per_decision [--reps 4000] [--write]``.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from benchmarks.client_throughput import publish
from benchmarks.signoff_sim.simulation import (
    PAIRED,
    UNPAIRED,
    Benchmark,
    Setup,
    gpqa_like,
    key,
    one_repeat_sd,
    sequential_key,
    simulate,
    with_drop,
)
from benchmarks.signoff_sim.threshold import trtllm_samples_for_theta
from benchmarks.simserver_fixture import ROOT
from pipeline.stats.noninferiority import GO
from pipeline.stats.sequential import SequentialDesign

OUT = ROOT / "benchmarks" / "results" / "gpu_hours_per_decision.md"
POWER, ALPHA = 0.8, 0.05


@dataclass(frozen=True)
class Needed:
    """Repeats a design needs for a decision at the fixed error rates (None: never)."""

    repeats: float | None
    power: float | None  # GO rate with no drop, at that many repeats
    false_go: float | None  # GO rate with a drop equal to the margin


def _go_rates(bench: Benchmark, setup: Setup, seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    none = simulate(bench.p, bench.p, setup, rng)
    at_margin = simulate(bench.p, with_drop(bench, setup.margin, "proportional"), setup, rng)
    return none, at_margin


def fixed(bench: Benchmark, margin: float, family: str, max_k: int, reps: int) -> Needed:
    """Smallest k of a fixed-repeat family with GO power >= 80%."""
    design = SequentialDesign(max_k, max_k, ALPHA, margin)
    setup = Setup(margin, ALPHA, (max_k,), design, max_k, reps, min(reps, 1000))
    none, at_margin = _go_rates(bench, setup, seed=11)
    for k in range(1, max_k + 1):
        if none[key(family, k)].rate(GO) >= POWER:
            return Needed(k, none[key(family, k)].rate(GO), at_margin[key(family, k)].rate(GO))
    return Needed(None, None, None)


def sequential(bench: Benchmark, margin: float, per_round: int, max_k: int, reps: int) -> Needed:
    """Shortest sequential design (rounds of ``per_round``) with GO power >= 80%."""
    for k_max in range(per_round, max_k + 1, per_round):
        design = SequentialDesign(k_max, per_round, ALPHA, margin)
        setup = Setup(margin, ALPHA, (k_max,), design, k_max, reps, min(reps, 1000))
        none, at_margin = _go_rates(bench, setup, seed=13)
        name = sequential_key(design)
        if none[name].rate(GO) >= POWER:
            return Needed(none[name].mean_repeats, none[name].rate(GO), at_margin[name].rate(GO))
    return Needed(None, None, None)


def over_repeats(bench: Benchmark, margin: float, max_k: int) -> Needed:
    """Unpaired over repeats: a two-sample t-test on the per-repeat accuracies of each arm.

    The question set is held fixed (so no question-sampling variance, as in the paired test);
    each arm's repeats scatter with one repeat's SD. Power from the noncentral t, exact under
    normal per-repeat accuracies; its false GO at the margin is alpha by construction.
    """
    sd = one_repeat_sd(bench.p)
    for k in range(2, max_k + 1):
        df, ncp = 2 * k - 2, margin / (sd * math.sqrt(2 / k))
        power = float(stats.nct.sf(stats.t.ppf(1 - ALPHA, df), df, ncp))
        if power >= POWER:
            return Needed(k, power, ALPHA)
    return Needed(None, None, None)


def unpaired_floor(bench: Benchmark) -> float:
    """The SE of the unpaired difference with infinitely many repeats (question sampling only)."""
    return float(math.sqrt(2 * np.var(bench.p) / len(bench.p)))


def table(bench: Benchmark, margin: float, reps: int, hours: float, max_k: int) -> list[str]:
    """One margin: every design's repeats, power, false GO, GPU-hours, and the ratio."""
    per_round = 2 if margin <= 0.05 else 1
    rows = {
        "paired fixed": fixed(bench, margin, PAIRED, max_k, reps),
        f"paired sequential, rounds of {per_round}": sequential(
            bench, margin, per_round, max_k, reps
        ),
        "unpaired (clustered SE per run)": fixed(bench, margin, UNPAIRED, max_k, reps),
        "unpaired over repeats (t-test on per-repeat accuracies, analytic)": over_repeats(
            bench, margin, max_k
        ),
    }
    trt = trtllm_samples_for_theta(margin) / len(bench.p)
    lines = [
        f"### Margin {100 * margin:g} points",
        "",
        "| design | repeats per question | GO with no drop | false GO at the margin | "
        "GPU-hours per decision |",
        "|---|---|---|---|---|",
    ]
    for name, n in rows.items():
        if n.repeats is None:
            lines.append(f"| {name} | never within {max_k} | - | - | - |")
            continue
        lines.append(
            f"| {name} | {n.repeats:.2f} | {n.power:.1%} | {n.false_go:.1%} | "
            f"{2 * n.repeats * hours:.2f} |"
        )
    lines.append(
        f"| TensorRT-LLM threshold, its sizing formula | {trt:.1f} | (formula) | "
        f"not controlled | {2 * trt * hours:.2f} |"
    )
    seq = rows[f"paired sequential, rounds of {per_round}"]
    for name in [k for k in rows if k.startswith("unpaired")]:
        unp = rows[name]
        if seq.repeats and unp.repeats:
            ratio = seq.repeats / unp.repeats
            verdict = "met" if ratio <= 0.25 else "**missed**"
            lines.append(f"\nSequential paired / {name}: {ratio:.2f} (target <= 0.25: {verdict}).")
        elif seq.repeats:
            lines.append(f"\nSequential paired / {name}: 0 ({name} never decides).")
    return lines


def unpaired_scan(bench: Benchmark, margins: list[float], reps: int, max_k: int) -> list[str]:
    """Repeats of the clustered-SE unpaired design vs paired sequential, at wider margins."""
    lines = [
        "| margin, points | unpaired (clustered SE per run): repeats (GO rate) | paired "
        "sequential, rounds of 1: mean repeats (GO rate) | sequential / unpaired | "
        "target <= 0.25 |",
        "|---|---|---|---|---|",
    ]
    for m in margins:
        unp, seq = fixed(bench, m, UNPAIRED, max_k, reps), sequential(bench, m, 1, max_k, reps)
        if unp.repeats is None or seq.repeats is None:
            lines.append(f"| {100 * m:g} | never within {max_k} | - | - | - |")
            continue
        ratio = seq.repeats / unp.repeats
        lines.append(
            f"| {100 * m:g} | {unp.repeats:.0f} ({unp.power:.1%}) | {seq.repeats:.2f} "
            f"({seq.power:.1%}) | {ratio:.2f} | {'met' if ratio <= 0.25 else 'missed'} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--hours-per-repeat", type=float, default=198 * 8000 / 3000 / 3600)
    parser.add_argument("--margins", default="0.02", help="fractions, comma-separated")
    parser.add_argument("--scan", default="0.07,0.075,0.08,0.09,0.10", help="unpaired scan")
    parser.add_argument("--max-repeats", type=int, default=32)
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}")
    opts = parser.parse_args()
    started = time.perf_counter()
    bench = gpqa_like()
    floor = unpaired_floor(bench)
    body = []
    for margin in (float(x) for x in opts.margins.split(",")):
        body += [*table(bench, margin, opts.reps, opts.hours_per_repeat, opts.max_repeats), ""]
    scan = [float(x) for x in opts.scan.split(",")]
    body += [
        "### Where the clustered-SE unpaired design can decide",
        "",
        *unpaired_scan(bench, scan, opts.reps, opts.max_repeats),
        "",
    ]
    text = [
        "# Repeats and GPU-hours per GO/NO-GO decision",
        "",
        f"Fixed error rates: false GO <= {ALPHA:.0%} at a drop equal to the margin, GO with "
        f"no drop >= {POWER:.0%}. {opts.reps} simulated replications per point (Monte Carlo "
        f"SE of an 80% rate: {100 * math.sqrt(0.16 / opts.reps):.1f} points). GPU-hours: "
        f"repeats x 2 arms x {opts.hours_per_repeat:.3f} h per repeat (198 questions x "
        "8,000 tokens at 3,000 tokens/s, illustrative; the ratios do not depend on it).",
        "",
        "The unpaired design (each run's accuracy with its own clustered SE, as two separately "
        "reported scores) cannot decide at a 2-point margin: that SE keeps the "
        f"question-sampling part, so the SE of the difference never falls below "
        f"{100 * floor:.2f} points however many repeats run, and a GO needs the margin to "
        f"exceed 1.645 x {100 * floor:.2f} = {100 * 1.6449 * floor:.1f} points. The last "
        "table compares the designs at margins where it can decide.",
        "",
        *body,
    ]
    publish(text, OUT, opts.write, started)


if __name__ == "__main__":
    main()
