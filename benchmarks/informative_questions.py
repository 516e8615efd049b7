"""What asking only the still-informative questions saves under the anytime design.

    python -m benchmarks.informative_questions [--reps 600] [--write]

One candidate against one baseline on the issue's 198-question set (``signoff_sim.release_sim``),
anytime e-processes up to 32 repeats (``pipeline.stats.anytime``), each plan of
``signoff_sim.informative``: every question every repeat, alike questions asked with probability
0.5 and weighted (valid), or alike questions skipped (not the whole set's test). ``--write``
writes benchmarks/results/informative_questions.md with the machine.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.client_throughput import publish
from benchmarks.signoff_sim.informative import Plan, stop_and_cost
from benchmarks.signoff_sim.release_sim import beta_questions, rate, with_drop
from benchmarks.signoff_simulation import options, pct
from benchmarks.simserver_fixture import ROOT
from pipeline.stats.nogo_split import nogo_shares

OUT = ROOT / "benchmarks" / "results" / "informative_questions.md"
K, MARGIN, ALPHA = 32, 0.02, 0.05
PLANS = (("every question", Plan("all")), ("alike asked at 0.5, weighted", Plan("weighted", 0.5)),
         ("alike skipped", Plan("skip")))  # fmt: skip
TRUTHS = (("clean: GO", 0.0, "diffuse", True),
          ("2 pts, diffuse: false GO", MARGIN, "diffuse", True),
          ("2 pts, uncertain: false GO", MARGIN, "uncertain", True),
          ("5 pts, diffuse: NO-GO (the mean test's share of alpha / 8)", 0.05, "diffuse",
           False))  # fmt: skip


def main() -> None:
    opts = options(__doc__, OUT)
    started = time.perf_counter()
    p = beta_questions()
    lines = [
        "# Asking only the still-informative questions (anytime design)",
        "",
        f"    python -m benchmarks.informative_questions --reps {opts.reps} --write",
        "",
        f"One candidate against one baseline (layout: 1 on one baseline), the issue's {len(p)} "
        f"questions, anytime e-processes to {K} repeats, margin {100 * MARGIN:g} pts, alpha "
        f"{ALPHA}, {opts.reps} replications per row, seed {opts.seed}, Wilson 95% intervals. "
        "Every question is asked at the first 2 repeats; from then on a question whose answers "
        "so far are all alike on both sides is asked with probability 0.5 and an asked pair "
        "weighted 1 / 0.5 (Horvitz-Thompson: the bet stays predictable and the e-process a "
        "supermartingale under each null), or skipped for good. Pairs per question count both "
        "sides alike (they run in lockstep); simulation only: the cell runner asks every "
        "question.",
        "",
        "| truth: decision | plan | rate | pairs per question until it stops |",
        "|---|---|---|---|",
    ]
    rng = np.random.default_rng(opts.seed)
    for label, drop, shape, go in TRUTHS:
        base = (rng.random((opts.reps, len(p), K)) < p[:, None]).astype(float)
        q = with_drop(p, drop, shape)
        cand = (rng.random((opts.reps, len(p), K)) < q[:, None]).astype(float)
        for name, plan in PLANS:
            # NO-GO: 8 candidates' Bonferroni share, of which the mean e-process gets its part
            # (pipeline/stats/nogo_split.py; the broken-prompt check has the rest).
            alpha = ALPHA if go else ALPHA / 8 * nogo_shares()[0]
            hit, cost = stop_and_cost(base, cand, plan, MARGIN, alpha, go, opts.seed)
            lines.append(f"| {label} | {name} | {pct(rate(hit, True))} | {cost.mean():.2f} |")
    publish(lines, OUT, opts.write, started)


if __name__ == "__main__":
    main()
