"""The skip-softmax frontier as measured so far, from the committed live runs.

    cd benchmarks && python live_h200/skip_frontier_table.py > results/live-h200/skip_frontier.md

Per SGLang release, KV dtype and prefill factor of fmha_v2: the accuracy verdict against fa3 (the
worst accuracy check over the evals, and per eval, from each run's committed summary.json), the
share of key tiles skipped (``signoff/checks/skip_fraction.json``: HF on the trained model's long
prompts), and the prefill speed gain over the factor-0 cell. The sign-offs ran no speed phase; the
frontier run (``LIVE_PLAN=frontier``, ``frontier-0.5.23/``) did: its gains are the factor-0 cell's
median prefill time over the factor's at 16,384 tokens and at 8 x 1,024, each marked against the
A/A (two starts of one engine configuration: its ratios reached 1.106 and 1.137 there).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pipeline.report.judge.verdicts import GO, worst
from pipeline.report.speed.frontier import worst_per_eval
from pipeline.report.speed.skip_fractions import read_skip_fractions, skipped_fraction
from pipeline.report.write.frontier_tables import factor_text, share_text
from pipeline.report.write.summary_json import read_summary

REPO = Path(__file__).resolve().parents[2]

LIVE = REPO / "benchmarks" / "results" / "live-h200"
SIGNOFFS = (("0.5.19", LIVE / "signoff"), ("0.5.23", LIVE / "signoff-0.5.23"))
FRONTIER = ("0.5.23", LIVE / "frontier-0.5.23")  # the run with a speed phase per factor
GAIN_SHAPES = ((1, 16384), (8, 1024))  # the gains the table quotes (the report has all four)
SHARES = LIVE / "signoff" / "checks" / "skip_fraction.json"
EVALS = ("synth_mcq", "synth_arith", "synth_retrieval")
VARIANT = "fmha_v2"
NOT_YET = "not measured yet"


def frontier_rows(release: str, summary: dict[str, Any], shares: Any) -> list[list[str]]:
    """One row per (KV dtype, factor) of the variant's cells in one sign-off's summary."""
    rows = []
    cells = [c for c in summary["cells"] if c["variant"] == VARIANT and c["status"] == "ok"]
    for c in sorted(cells, key=lambda c: (c["kv_dtype"], c["skip_softmax"]["prefill"] or 0)):
        factor = float(c["skip_softmax"]["prefill"] or 0.0)
        per_eval = worst_per_eval((k["eval"], k["kind"], k["verdict"]) for k in c["checks"])
        rows.append([release, c["kv_dtype"], factor_text(factor),
                     share_text(skipped_fraction(shares, c["kv_dtype"], factor)),
                     worst(per_eval.values()), *(per_eval.get(e, "-") for e in EVALS),
                     NOT_YET])  # fmt: skip
    return rows


def quoted_gains(gains: list[dict[str, Any]]) -> str:
    """``1 x 16,384: 0.983 (within the A/A); 8 x 1,024: ...`` of one frontier point."""
    said = []
    for g in gains:
        if (g["batch"], g["tokens"]) not in GAIN_SHAPES:
            continue
        shape = f"{g['batch']} x {g['tokens']:,}"
        if g["ratio"] is None or g["ratio_ci95"] is None:
            said.append(f"{shape}: reference {g['median_ms']:.1f} ms")
        else:
            said.append(f"{shape}: {g['ratio']:.3f} ({g['beyond_aa'] or 'no A/A'})")
    return "; ".join(said) or NOT_YET


def measured_rows(release: str, summary: dict[str, Any]) -> list[list[str]]:
    """One row per factor of the frontier run's report (its ``frontier`` list), gains included."""
    rows = []
    for front in summary["frontier"]:
        for p in front["points"]:
            factor = factor_text(p["factor"])
            if p["cell"] != front["reference"] and p["factor"] == 0:
                factor = "0 (exact, A/A)"  # the factor-0 cell started again
            rows.append([release, front["kv_dtype"], factor, share_text(p["skipped_fraction"]),
                         p["accuracy_verdict"], *(p["eval_verdicts"].get(e, "-") for e in EVALS),
                         quoted_gains(p["prefill_gain"])])  # fmt: skip
    return rows


def takeaways(rows: list[list[str]]) -> list[str]:
    """Per release and KV dtype with two factors or more: the largest factor whose verdict is GO."""
    lines = []
    for key in sorted({(r[0], r[1]) for r in rows}):
        mine = [r for r in rows if (r[0], r[1]) == key]
        go = [r[2] for r in mine if r[4] == GO]
        if len({r[2] for r in mine}) < 2:
            continue
        said = f"the largest factor whose verdict is GO: {go[-1]}" if go else "no factor is GO"
        if go and go[-1] == factor_text(0.0):
            said = "only exact softmax is GO"
        factors = ", ".join(r[2] for r in mine)
        lines.append(f"- SGLang {key[0]}, KV {key[1]} (factors {factors}): {said}.")
    return lines


def render(signoffs: tuple[tuple[str, Path], ...] = SIGNOFFS, shares_path: Path = SHARES) -> str:
    """The whole markdown file."""
    shares = read_skip_fractions(shares_path)
    summaries = [
        (release, read_summary(root / "report/summary.json")) for release, root in signoffs
    ]
    rows = [row for release, data in summaries for row in frontier_rows(release, data, shares)]
    release, root = FRONTIER
    rows += measured_rows(release, read_summary(root / "report/summary.json"))
    headers = ["SGLang", "KV", "factor", "tiles skipped (HF)", "accuracy verdict", *EVALS,
               "prefill gain vs factor 0"]  # fmt: skip
    lines = ["# Skip-softmax frontier on the H200 (trained synth-llama model)", "",
             (__doc__ or "").split("\n\n")[2].replace("\n", " ").strip(), "",
             "Generated by `benchmarks/live_h200/skip_frontier_table.py` (a test compares this "
             "file with its output). The verdicts are each sign-off's own (its report/report.md "
             "says how many repeats decided them); the shares are per KV tile (128 keys at "
             "16-bit KV, 256 at fp8). This model's prefill is 8-22 ms of scheduler time up to "
             "16,384 tokens, overhead more than attention: no gain here is beyond the A/A but "
             "slowdowns of single cells, which the factor that skips more does not share "
             "(benchmarks/results/live-h200/frontier-0.5.23/README.md). The prefill gain "
             "compares FlashInfer 0.7.2's fmha_v2 prefill at each factor with the same build at "
             "factor 0 (SGLang 0.5.23, torch 2.11); fa3 (sglang-kernel 0.4.5's FA3 build, not "
             "the 0.4.10 0.5.23 pins) is the accuracy baseline only.", "",
             *takeaways(rows), "",
             "| " + " | ".join(headers) + " |", "|---" * len(headers) + "|",
             *("| " + " | ".join(r) + " |" for r in rows)]  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
