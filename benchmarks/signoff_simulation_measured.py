"""The release sign-off by simulation on question sets shaped as the live H200 measured them.

    python -m benchmarks.signoff_simulation_measured [--reps 2000] [--write]

``signoff_simulation.py`` draws 198 questions of mean 0.70 and one-repeat SD 1.5 pts (ICC 0.79).
The live sign-off (benchmarks/results/live-h200/aa_spread.md) measured noisier questions: per
eval its question count, mean accuracy and the binomial SD of one repeat (fa3, 24 repeats) give
a Beta question set through the same ``beta_questions``; this runs one candidate, clean / at the
margin / 5 pts worse (diffuse), fixed 8 repeats and the sequential design, through the report's
own decision code. Baseline and candidate are drawn independently, as in the main simulation
(live, synth_mcq's cells share its option order, which makes their paired SE smaller).
``--write`` writes benchmarks/results/signoff_simulation_measured.md with the machine.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from benchmarks.client_throughput import publish
from benchmarks.signoff_sim.release_sim import GO, NO_GO, QUESTIONS, Condition, beta_questions, rate
from benchmarks.signoff_sim.release_sim import run_condition as simulate
from benchmarks.signoff_simulation import MARGIN, SEQ, design_name, options, pct, truth
from benchmarks.simserver_fixture import ROOT

OUT = ROOT / "benchmarks" / "results" / "signoff_simulation_measured.md"
# (label, questions, mean accuracy, one repeat's binomial SD): aa_spread.json, fa3 (r2-base).
MEASURED = (
    ("issue 14's set", *QUESTIONS),
    ("synth_mcq (live)", 180, 0.820, 0.0242),
    ("synth_arith (live)", 200, 0.668, 0.0200),
    ("synth_retrieval (live)", 48, 0.964, 0.0172),
    ("a tiny eval", 2, 0.75, 0.2),
)


def conditions() -> Iterator[tuple[str, Condition]]:
    """Every question set x clean / margin / 5 pts (diffuse) x fixed 8 / 24 / sequential."""
    for label, n, mean, sd in MEASURED:
        for drop in (0.0, MARGIN, 0.05):
            for design, k in ((None, 8), (None, 24), (SEQ, 0)):
                yield label, Condition(drop, "diffuse", design=design, repeats=k or 8,
                                       questions=(n, mean, sd))  # fmt: skip


def question_set(n: int, mean: float, sd: float) -> str:
    """The set in words: size, mean, SD, ICC, share of uncertain questions."""
    p = beta_questions(n, mean, sd)
    icc = p.var() / (p.mean() * (1 - p.mean()))
    mid = np.mean((p > 0.15) & (p < 0.85))
    return (
        f"{n} q, mean {mean:.3f}, SD {100 * sd:.2f} pts, ICC {icc:.2f}, {100 * mid:.0f}% uncertain"
    )


def main() -> None:
    opts = options(__doc__, OUT)
    started = time.perf_counter()
    lines = [
        "# Release sign-off by simulation, on question sets shaped as measured live",
        "",
        f"    python -m benchmarks.signoff_simulation_measured --reps {opts.reps} --margin-reps "
        f"{opts.margin_reps} --write",
        "",
        f"One candidate against one baseline (layout: 1 on one baseline), margin "
        f"{100 * MARGIN:g} pts, one-sided alpha 0.05, {opts.reps} replications per row "
        f"({opts.margin_reps} at the margin, fixed designs: enough to tell 5% from 6.5%), seed "
        f"{opts.seed}, Wilson 95% intervals; no errors. Decided by the report's own functions "
        "(benchmarks/signoff_sim/release_sim.py): each test's SE read where its null holds "
        "(pipeline/stats/null_variance.py), at least 1 / (k n). The measured 24-repeat A/A is "
        "the fixed 24 rows.",
        "",
        "| question set | truth | design | GO | NO-GO | repeats per decision |",
        "|---|---|---|---|---|---|",
    ]
    for label, c in conditions():
        reps = opts.margin_reps if c.drop == MARGIN and c.design is None else opts.reps
        o = simulate(c, reps, opts.seed)
        lines.append(
            f"| {label}: {question_set(*c.questions)} | {truth(c)} | {design_name(c)} | "
            f"{pct(rate(o.first, GO))} | {pct(rate(o.first, NO_GO))} | {o.repeats.mean():.1f} |"
        )
    publish(lines, OUT, opts.write, started)


if __name__ == "__main__":
    main()
