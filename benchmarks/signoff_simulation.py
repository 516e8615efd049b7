"""The release sign-off by simulation: a table per condition, Wilson intervals.

    python -m benchmarks.signoff_simulation [--reps 2000] [--write]

Every replication is decided by the report's own functions
(``benchmarks/signoff_sim/release_sim.py`` says which); ``--write`` writes
benchmarks/results/signoff_simulation.md with the machine.
The older comparison with TensorRT-LLM's rule is ``signoff_rules_comparison.py``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from benchmarks.client_throughput import publish
from benchmarks.signoff_sim.release_sim import GO, NO_GO, Condition, Outcome, beta_questions, rate
from benchmarks.signoff_sim.release_sim import run_condition as simulate
from benchmarks.simserver_fixture import ROOT
from pipeline.stats.nogo_split import BROKEN_SHARE
from pipeline.stats.sequential import SequentialDesign

OUT = ROOT / "benchmarks" / "results" / "signoff_simulation.md"
# The anytime-valid design cells run by default (statistic: eprocess): rounds of 2, planned to 32.
SEQ = SequentialDesign(32, 2, 0.05, 0.02, statistic="eprocess", broken_share=BROKEN_SHARE,
                       alpha_looks="doubling")  # fmt: skip
SHAPES = ("diffuse", "uncertain", "few break")
# (baseline, candidate) error rates and where the candidate's fall: "random" (each request
# alone) or "on wrong" (only on requests it got wrong: timeouts on runaway generations).
ERRORS = ((0.0, 0.0, "random"), (0.049, 0.0, "random"), (0.0, 0.049, "random"),
          (0.0, 0.049, "on wrong"))  # fmt: skip
MARGIN = 0.02
LAYOUTS = (1, 4)  # baselines the candidates share: one, or one per KV dtype (4 x 2)


def design_name(c: Condition) -> str:
    """Fixed K or the sequential design, in words."""
    if c.design is None:
        return f"fixed {c.repeats}"
    kind = "anytime" if c.design.statistic == "eprocess" else "group-sequential"
    return f"{kind} {c.design.repeats_per_round}..{c.design.max_repeats}"


def truth(c: Condition) -> str:
    """The first candidate's true drop and shape."""
    return "clean" if c.drop == 0 else f"{100 * c.drop:g} pts, {c.shape}"


def pct(r: tuple[float, float, float]) -> str:
    """A rate with its Wilson 95% interval."""
    return f"{100 * r[0]:.1f}% [{100 * r[1]:.1f}, {100 * r[2]:.1f}]"


def per_cell_conditions() -> Iterator[Condition]:
    """One candidate: every truth x every error condition x both designs."""
    truths = [(0.0, "diffuse"), *((MARGIN, s) for s in SHAPES), (0.03, "diffuse"),
              *((d, s) for d in (0.04, 0.05) for s in SHAPES)]  # fmt: skip
    for drop, shape in truths:
        for base_e, cand_e, mode in ERRORS:
            for design in (None, SEQ):
                yield Condition(drop, shape, base_e, cand_e, 1, design, error_mode=mode)


def release_conditions() -> Iterator[Condition]:
    """1, 4 and 8 candidates: all clean, or the first at the margin / 5 points, the rest clean.

    8 candidates in both layouts: sharing one baseline, and 4 baselines x 2 candidates.
    """
    truths = [(0.0, "diffuse")] + [(d, s) for d in (MARGIN, 0.05) for s in SHAPES]
    for m in (1, 4, 8):
        designs: list[tuple[SequentialDesign | None, int]] = [(None, 8), (SEQ, 0)]
        if m == 8:
            designs[1:1] = [(None, 16), (None, 24), (None, 32)]
        for layout in LAYOUTS if m == 8 else (1,):
            for drop, shape in truths:
                for design, k in designs:
                    yield Condition(drop, shape, 0.0, 0.0, m, design, k or 8, baselines=layout)


def layout_name(c: Condition) -> str:
    """The layout in words."""
    if c.baselines == 1:
        return f"{c.candidates} on one baseline"
    return f"{c.baselines} baselines x {c.candidates // c.baselines}"


def errors_name(c: Condition) -> str:
    """Error rates (and where the candidate's fall), in words."""
    mode = " on wrong answers" if c.error_mode == "on wrong" and c.cand_errors else ""
    return f"{100 * c.base_errors:g}% / {100 * c.cand_errors:g}%{mode}"


def run_all(opts: argparse.Namespace) -> dict[Condition, Outcome]:
    """Every condition (over ``opts.jobs`` processes); its outcomes depend on its seed only.

    A fixed design at the margin gets ``margin_reps`` replications (the false-GO rows: enough to
    tell 5% from 6.5%), an anytime one ``seq_margin_reps`` (its rates sit far below 5%), every
    8-candidate sequential row ``release_reps`` (CPU: each is 8 cells x up to 16 looks).
    """
    todo = list(dict.fromkeys([*per_cell_conditions(), *release_conditions()]))
    sizes = [replications(c, opts) for c in todo]
    seed, jobs = opts.seed, opts.jobs
    with multiprocessing.Pool(jobs) as pool:
        found = pool.starmap(_one, [(c, n, seed) for c, n in zip(todo, sizes, strict=True)])
    return dict(zip(todo, found, strict=True))


def _one(c: Condition, n: int, seed: int) -> Outcome:
    out = simulate(c, n, seed)
    print(f"{where(c)}: {n} replications", file=sys.stderr, flush=True)
    return out


def replications(c: Condition, opts: argparse.Namespace) -> int:
    """How many replications condition ``c`` gets (see ``run_all``)."""
    if c.candidates == 8 and c.design:
        return int(opts.release_reps)
    if c.drop == MARGIN:
        return int(opts.seq_margin_reps if c.design else opts.margin_reps)
    return int(opts.reps)


def per_cell_table(res: dict[Condition, Outcome]) -> list[str]:
    """GO / NO-GO / INCONCLUSIVE of one candidate, by truth, errors and design."""
    lines = ["| truth | errors (baseline / candidate) | design | GO | NO-GO | INCONCLUSIVE | "
             "repeats per decision |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in per_cell_conditions():
        o = res[c]
        inc = rate(np.where((o.first != GO) & (o.first != NO_GO), "I", "x"), "I")
        lines.append(
            f"| {truth(c)} | {errors_name(c)} | "
            f"{design_name(c)} | {pct(rate(o.first, GO))} | {pct(rate(o.first, NO_GO))} | "
            f"{pct(inc)} | {o.repeats.mean():.1f} |"
        )
    return lines


def release_table(res: dict[Condition, Outcome]) -> list[str]:
    """The release verdict with 1, 4 and 8 candidates."""
    lines = ["| layout | first candidate | design | release GO | release NO-GO | first "
             "candidate GO | repeats per release decision (all cells) |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in release_conditions():
        o = res[c]
        lines.append(
            f"| {layout_name(c)} | {truth(c)} | {design_name(c)} | {pct(rate(o.release, GO))} | "
            f"{pct(rate(o.release, NO_GO))} | {pct(rate(o.first, GO))} | {o.repeats.mean():.1f} |"
        )
    return lines


def _worst(res: dict[Condition, Outcome], conds: list[Condition], field: str, value: str | bool,
           high: bool) -> tuple[tuple[float, float, float], Condition]:  # fmt: skip
    scored = [(rate(getattr(res[c], field), value), c) for c in conds]
    return max(scored, key=lambda s: s[0][0]) if high else min(scored, key=lambda s: s[0][0])


def where(c: Condition) -> str:
    """A condition in words."""
    return f"{truth(c)}, {layout_name(c)}, {design_name(c)}, errors {errors_name(c)}"


def requirements(res: dict[Condition, Outcome]) -> list[str]:
    """The targets, each with the worst condition, its Wilson interval, and whether its point
    estimate meets the bound (an interval that only reaches it is not "met")."""
    cells, rel = list(per_cell_conditions()), list(release_conditions())
    seq8 = [c for c in rel if c.candidates == 8 and c.design]
    rows = [
        ("false GO per cell, drop at the margin, every shape / errors / design", "<= 5%",
         _worst(res, [c for c in cells if c.drop == MARGIN], "first", GO, True), 0.05, "le"),
        ("GO per cell, true 3-pt drop, 4.9% candidate errors on wrong answers (fixed 8 / "
         "sequential, worst)", "<= 5%",
         _worst(res, [c for c in cells if c.drop == 0.03 and c.cand_errors], "first", GO, True),
         0.05, "le"),
        ("false GO per release, one candidate at the margin, every layout / design", "<= 5%",
         _worst(res, [c for c in rel if c.drop == MARGIN], "release", GO, True), 0.05, "le"),
        ("NO-GO per cell at its own boundary (a mean drop at the margin: diffuse or uncertain; "
         "few break is a real break), every errors / design: mean test and broken-prompt check "
         "together", "<= 5%", _worst(res, [c for c in cells if c.drop == MARGIN and c.shape !=
                                          "few break"], "first", NO_GO, True), 0.05, "le"),
        ("the broken-prompt check alone FAILs 5 pts on ~10 questions (few break), every errors,"
         " fixed design (anytime cells: NO-GO 100%, most stopped by the mean e-process first)",
         ">= 95%", _worst(res, [c for c in cells if c.drop == 0.05 and c.shape == "few break"
                                and c.design is None], "broke", True, False), 0.95, "ge"),
        ("false NO-GO per cell, clean, every errors / design", "<= 5%",
         _worst(res, [c for c in cells if c.drop == 0], "first", NO_GO, True), 0.05, "le"),
        ("false NO-GO per release, all clean, every layout / design", "<= 5%",
         _worst(res, [c for c in rel if c.drop == 0], "release", NO_GO, True), 0.05, "le"),
        ("release GO, 8 clean candidates, sequential, every layout", ">= 95%",
         _worst(res, [c for c in seq8 if c.drop == 0], "release", GO, False), 0.95, "ge"),
        ("release NO-GO, 8 candidates, one 5 pts worse, every shape and layout, sequential",
         ">= 90%", _worst(res, [c for c in seq8 if c.drop == 0.05], "release", NO_GO, False),
         0.90, "ge"),
        ("release GO, 8 candidates, one 5 pts worse, sequential (worst)", "0%",
         _worst(res, [c for c in seq8 if c.drop == 0.05], "release", GO, True), 0.0, "le"),
        ("NO-GO per cell at 5 pts, every shape / design, no errors or errors at random",
         ">= 80%", _worst(res, [c for c in cells if c.drop == 0.05 and c.error_mode == "random"],
                          "first", NO_GO, False), 0.80, "ge"),
    ]  # fmt: skip
    lines = ["| target | bound | worst condition | its rate [Wilson 95%] | met (point estimate) |",
             "|---|---|---|---|---|"]  # fmt: skip
    for text, bound, (r, c), limit, op in rows:
        met = r[0] <= limit if op == "le" else r[0] >= limit
        lines.append(f"| {text} | {bound} | {where(c)} | {pct(r)} | "
                     f"{'yes' if met else '**NO**'} |")  # fmt: skip
    return [*lines, stopped_no_go(res, seq8), *efficiency(res)]


def stopped_no_go(res: dict[Condition, Outcome], seq8: list[Condition]) -> str:
    """Of the first candidates that stopped NO-GO at a look, the share the report calls NO-GO."""
    stopped = reported = 0
    for c in seq8:
        hit = res[c].alone == NO_GO
        stopped, reported = (
            stopped + int(hit.sum()),
            reported + int((res[c].first[hit] == NO_GO).sum()),
        )
    share = rate(np.array([NO_GO] * reported + ["x"] * (stopped - reported)), NO_GO)
    return (f"| a candidate that stopped NO-GO is reported NO-GO (8 candidates, sequential, every "
            f"truth / layout; {stopped} stops) | 100% | all | {pct(share)} | "
            f"{'yes' if reported == stopped else '**NO**'} |")  # fmt: skip


def efficiency(res: dict[Condition, Outcome]) -> list[str]:
    """Sequential repeats per release decision against the fixed design of at least its power.

    Per layout, with the baselines run first (every baseline all its repeats) and beside their
    candidates (each stops with its last paired candidate; the verdicts are the same runs').
    """
    out = []
    for layout in LAYOUTS:
        clean = [c for c in release_conditions()
                 if c.candidates == 8 and c.drop == 0 and c.baselines == layout]  # fmt: skip
        seq = next(c for c in clean if c.design)
        power = rate(res[seq].release, GO)[0]
        fixed = [c for c in clean if not c.design and rate(res[c].release, GO)[0] >= power]
        f = min(fixed, key=lambda c: c.repeats) if fixed else None
        for mode in ("first", "beside"):
            out.append(_efficiency_row(res, seq, f, mode))
    return out


def _efficiency_row(
    res: dict[Condition, Outcome], seq: Condition, f: Condition | None, mode: str
) -> str:
    used = (res[seq].repeats if mode == "first" else res[seq].beside).mean()
    ratio, met = "no fixed design here reaches it", "**NO**"
    if f is not None:
        r = used / res[f].repeats.mean()
        ratio = (f"{used:.1f} vs {res[f].repeats.mean():.1f} repeats (fixed {f.repeats}, "
                 f"release GO {pct(rate(res[f].release, GO))}): {r:.2f}x")  # fmt: skip
        met = "yes" if r <= 0.5 else "**NO**"
    one = seq.baselines == 1
    how = (("the baseline runs all its" if one else "the baselines run all their")
           + " repeats first") if mode == "first" else (
           ("the baseline stops with its" if one else "each baseline stops with its")
           + " last candidate")  # fmt: skip
    return (f"| repeats per release decision, 8 clean candidates, {layout_name(seq)}, "
            f"{how} (sequential.baseline_runs={mode}): sequential (release GO "
            f"{pct(rate(res[seq].release, GO))}) vs the fixed design of at least its power "
            f"| <= 0.5x | {ratio} | | {met} |")  # fmt: skip


def options(doc: str, out: Path) -> argparse.Namespace:
    """``--reps``, ``--seed`` and ``--write`` of a sign-off simulation writing ``out``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--margin-reps", type=int, default=5000, help="one candidate at the margin")
    parser.add_argument("--release-reps", type=int, default=500, help="8 candidates, sequential")
    parser.add_argument("--seq-margin-reps", type=int, default=2000, help="sequential, margin")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2, help="processes (at most the cores)")
    parser.add_argument("--write", action="store_true", help=f"also write {out}")
    return parser.parse_args()


def main() -> None:
    opts = options(__doc__, OUT)
    started = time.perf_counter()
    res = run_all(opts)
    p = beta_questions()
    lines = [
        "# Release sign-off by simulation",
        "",
        f"    python -m benchmarks.signoff_simulation --reps {opts.reps} --margin-reps "
        f"{opts.margin_reps} --seq-margin-reps {opts.seq_margin_reps} --release-reps "
        f"{opts.release_reps} --jobs {opts.jobs} --write",
        "",
        f"- Questions: {len(p)}, success probabilities the mid-quantiles of a Beta law, mean "
        f"{p.mean():.3f}, one repeat's accuracy SD "
        f"{100 * np.sqrt(np.sum(p * (1 - p))) / len(p):.2f} pts; "
        f"{int(((p > 0.15) & (p < 0.85)).sum())} uncertain (0.15 < p < 0.85). Margin 2 pts,"
        f" one-sided alpha 0.05, {opts.reps} replications per condition ({opts.margin_reps} for "
        f"fixed designs at the margin, {opts.seq_margin_reps} for anytime ones but 8 candidates"
        f"; {opts.release_reps} for 8 "
        f"candidates, sequential: the CPU this shared 2-core machine had, {opts.jobs} "
        f"processes), seed {opts.seed}; rates with Wilson 95% intervals.",
        "- Layouts: one candidate against its baseline; 1, 4 or 8 candidates sharing one "
        "baseline; and the release sign-off's real layout, a baseline per KV dtype: 4 baselines "
        "x 2 candidates (each baseline drawn independently, the first candidate on the first).",
        "- Shapes of a drop: diffuse (every question loses in proportion), uncertain (only the "
        "uncertain questions lose), few break (nearly-always-right questions go to always wrong "
        "until the drop is lost: about 10 questions at 5 pts). Errors: each request errors "
        "independently at the rate shown, or (on wrong answers) the candidate's fall only on "
        "requests it got wrong, at the same overall rate; GO must hold with the candidate's "
        "errored pairs counted wrong, NO-GO with them counted right.",
        f"- Designs: fixed K repeats (paired t on question means, the SE read where each null "
        f"holds: pipeline/stats/null_variance.py); anytime: the default sequential design "
        f"(pipeline/stats/anytime.py), the question-level paired check at every look (after "
        f"every {SEQ.repeats_per_round} repeats, planned to {SEQ.max_repeats}), alpha spent at "
        "the looks whose repeats double (pipeline/stats/look_schedule.py: GO by look, NO-GO's "
        "mean check mostly at the plan's end, the broken check once at 8 repeats); valid "
        "wherever it stops and if extended. Its baselines either run all "
        f"{SEQ.max_repeats} first (sequential.baseline_runs=first) or beside their candidates, "
        "each stopping on the round its last paired candidate stopped at (beside, "
        "pipeline/measuring/sequential_beside.py: the same runs, the same verdicts; only the "
        "baselines' repeats differ, and the release table and per-cell rows count them run "
        "first). "
        "GO is read at alpha per cell, NO-GO at alpha / (candidates) at every look and in the "
        "report alike (Bonferroni over the family, fixed before the first look). A cell's "
        "NO-GO alpha is split between its two NO-GO checks (pipeline/stats/nogo_split.py, every "
        f"design): {1 - BROKEN_SHARE:g} to the mean test, {BROKEN_SHARE:g} to the broken-prompt "
        "check (anytime: alpha / (j (j + 1)) of that at look j). Repeats per decision count "
        "every cell, baselines included.",
        "- Decided by the report's own functions (benchmarks/signoff_sim/release_sim.py names "
        "them): answered pairs, missing answers at their worst, the broken-prompt check, GO "
        "per cell (intersection-union), NO-GO alarms Holm-corrected across cells (fixed "
        "designs), release GO only if every candidate is GO; an anytime candidate stops when "
        "sequential_run.look (anytime.anytime_verdict) says so, and the report decides it with "
        "the same function on the same pairs. A target is met when its point estimate meets "
        "the bound.",
        "",
        "## Targets",
        "",
        *requirements(res),
        "",
        "## The release: 1, 4 and 8 candidates, both layouts (the first as stated, the rest clean)",
        "",
        *release_table(res),
        "",
        "## One candidate: every truth, error rate and design",
        "",
        *per_cell_table(res),
        "",
    ]
    publish(lines, OUT, opts.write, started)


if __name__ == "__main__":
    main()
