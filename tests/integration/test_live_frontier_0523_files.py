"""The committed live skip-softmax frontier on SGLang 0.5.23 (issue 27, item 3), as its files say.

The trained model on the H200: fa3, then fmha_v2 at bf16 KV at five prefill factors, each cell with
the sign-off's three evals and a speed phase on the retrieval eval's own prompts, and two A/As
(fa3_repeat, and fmha_v2 at factor 0 started again). The report rebuilt from the committed cells
gives the committed frontier; the A/A shows restarts moving this model's prefill more than one
cell's bootstrap interval says, and the report calls no skip-softmax gain beyond it.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest

from pipeline.report.speed.restart_noise import FASTER, SLOWER, WITHIN
from tests.helpers.cells import REPO, rebuild_committed_report

RUN = REPO / "benchmarks/results/live-h200/frontier-0.5.23"
SHARES = REPO / "benchmarks/results/live-h200/signoff/checks/skip_fraction.json"
FACTORS = [0.0, 0.0, 1e4, 3e4, 1e5, 1e6]  # factor 0 twice: the A/A
OPTIONS = ["--baseline-dir", "frontier-base", "--skip-fractions", str(SHARES),
           "--frontier-per-eval"]  # fmt: skip

pytestmark = pytest.mark.integration


def _summary() -> dict:
    return json.loads((RUN / "report/summary.json").read_text())


def _results() -> dict[str, dict]:
    return {
        f"{p.parent.parent.name}/{p.parent.name}": json.loads(p.read_text())
        for p in sorted(RUN.glob("cells/*/*/result.json"))
    }


def _points(summary: dict) -> list[tuple]:
    (frontier,) = summary["frontier"]
    return [(p["factor"], p["accuracy_verdict"], p["skipped_fraction"],
             [(g["tokens"], g["ratio"], g["aa_band"], g["beyond_aa"]) for g in p["prefill_gain"]])
            for p in frontier["points"]]  # fmt: skip


def test_the_report_rebuilt_from_committed_files_gives_the_committed_frontier(tmp_path: Path):
    run, rebuilt = rebuild_committed_report(RUN, tmp_path, options=OPTIONS)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]  # 1e6 is NO-GO
    assert _points(rebuilt) == _points(_summary())
    keys = ("cell_id", "batch", "tokens", "ratio", "aa_band", "beyond_aa")
    assert [[e[k] for k in keys] for e in rebuilt["speed"]] == [
        [e[k] for k in keys] for e in _summary()["speed"]
    ]


def test_every_cell_ran_live_on_0_5_23_with_graphs_on_the_evals_own_prompts():
    results = _results()
    assert len(results) == 8 and {r["status"] for r in results.values()} == {"ok"}
    v2 = sorted(r["cell"]["skip_softmax"]["prefill"] for r in results.values()
                if r["cell"]["variant"] == "fmha_v2")  # fmt: skip
    assert v2 == FACTORS
    for r in results.values():
        assert r["observed"]["version"] == "0.5.23" and not r["simulated"]
        assert r["cell"]["kv_dtype"] == "bf16" and set(r["evals"]) == {
            "synth_mcq", "synth_arith", "synth_retrieval"}  # fmt: skip
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        assert r["speed"]["prompts"]["source"] == "eval:synth_retrieval"
    spans = sorted((r["timing"]["started_at"], r["timing"]["ended_at"]) for r in results.values())
    assert all(b[0] >= a[1] for a, b in pairwise(spans))  # one after another
    # Every fmha_v2 cell started from the warm-up's JIT cache: nothing compiled, ready in 69-84 s.
    warm = [r["server"] for r in results.values() if r["cell"]["variant"] == "fmha_v2"]
    assert all(s["jit_cache"]["new_files"] == 0 and s["ready_s"] < 90 for s in warm)


def test_restarts_move_prefill_more_than_one_cells_interval_says():
    (frontier,) = _summary()["frontier"]
    again = next(
        p for p in frontier["points"] if p["factor"] == 0 and p["cell"] != frontier["reference"]
    )
    # The same engine started twice: at 16k tokens the bootstrap interval of one start excludes 1.
    g16 = next(g for g in again["prefill_gain"] if (g["batch"], g["tokens"]) == (1, 16384))
    assert g16["ratio_ci95"][1] < 1.0 and g16["beyond_aa"] == WITHIN
    assert max(g["aa_band"] for g in again["prefill_gain"]) > 1.25


def test_no_skip_softmax_gain_is_beyond_the_a_a_and_the_largest_factor_costs_accuracy():
    (frontier,) = _summary()["frontier"]
    said = {g["beyond_aa"] for p in frontier["points"] for g in p["prefill_gain"]}
    assert FASTER not in said and said <= {WITHIN, SLOWER, None}
    by_factor = {p["factor"]: p for p in frontier["points"]}
    assert by_factor[1e6]["accuracy_verdict"] == "NO-GO"
    assert by_factor[1e6]["eval_verdicts"]["synth_mcq"] == "NO-GO"
    # With the question as the unit (issue 37), the exact A/A's repeat of factor 0 is GO on every
    # eval; every factor above it stays INCONCLUSIVE on synth_mcq at 8 repeats.
    assert frontier["largest_go_factor"] == 0.0
    assert [p["skipped_fraction"] for p in frontier["points"]] == [
        0.0, 0.0, 0.34995, 0.65338, 0.84407, 0.92898]  # fmt: skip


def test_the_readme_quotes_the_committed_frontier():
    readme = (REPO / "README.md").read_text()
    table = (REPO / "benchmarks/results/live-h200/skip_frontier.md").read_text().splitlines()
    quoted = [line.strip() for line in readme.splitlines() if line.strip().startswith(
        "| 0.5.23 | bf16 |")]  # fmt: skip
    assert len(quoted) == 6 and all(line in table for line in quoted)
    (cell,) = [c for c in _summary()["cells"] if c["skip_softmax"]["prefill"] == 1e6]
    drops = {k["eval"]: k["numbers"]["drop"] for k in cell["checks"]
             if k["kind"] == "accuracy_vs_baseline"}  # fmt: skip
    assert (
        f"mcq -{100 * drops['synth_mcq']:.1f} points, arith -{100 * drops['synth_arith']:.1f}"
        in " ".join(readme.split())
    )
