"""What the committed live runs on SGLang 0.5.23, and the speed runs of both releases, show beyond
their reports (which ``test_live_runs.py`` rebuilds from the index): each cell ran live, alone or
beside what the write-up says, with CUDA graphs on; the speed and frontier findings the READMEs
state; and each run's README quoting its rows as the scripts print them from the committed files.
"""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from pipeline.report.speed.restart_noise import AA, FASTER, SLOWER, WITHIN
from tests.helpers.cells import unpack
from tests.helpers.live_runs import LIVE, assert_quoted, readme_rows, script, summary
from tests.helpers.quoted import quotes

pytestmark = pytest.mark.integration


def results(run: str) -> list[dict]:
    """Every committed cell's result.json of a run."""
    return [json.loads(p.read_text()) for p in sorted((LIVE / run).glob("cells/*/*/result.json"))]


def one_after_another(cells: list[dict]) -> bool:
    spans = sorted((r["timing"]["started_at"], r["timing"]["ended_at"]) for r in cells)
    return all(b[0] >= a[1] for a, b in pairwise(spans))


def test_the_0_5_23_signoff_ran_live_with_graphs_on_every_variant_and_46_checks_go(tmp_path):
    cells = results("signoff-0.5.23")
    assert len(cells) == 10 and {r["status"] for r in cells} == {"ok"}
    for r in cells:
        assert r["observed"]["version"] == "0.5.23" and r["cell"]["server_version"] == "0.5.23"
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
    seen = {(r["cell"]["variant"], r["cell"]["kv_dtype"]) for r in cells}
    for backend in ("fa3", "fmha_v2", "fmha_v2_fi", "flashinfer"):
        assert {(backend, "auto"), (backend, "fp8_e4m3")} <= seen, backend
    assert ("fa3_repeat", "auto") in seen
    logs = sorted(
        unpack(LIVE / "signoff-0.5.23/server-logs.tar.xz", tmp_path).glob("*/*/server.log")
    )
    assert len(logs) == 10
    for log in logs:  # the server captured its graphs and served prefills from them
        text = log.read_text(errors="replace")
        assert "Capture target verify CUDA graph end" in text and "cuda graph: True" in text, log
    report = summary("signoff-0.5.23")
    assert report["verdict"] == "UNDECIDED" and len(report["cells"]) == 10
    go = [k for c in report["cells"] for k in c["checks"] if k["verdict"] == "GO"]
    # 24 accept-length checks and 14 accuracy checks GO (6 before issue 37 made the question the
    # unit of evidence: the looks' old per-repeat bets were conservative here), and issue 40's
    # accept length by context length on synth_retrieval's four length bins, one per candidate (8)
    assert len(go) == 46
    by_length = [k for k in go if k["kind"] == "accept_by_length"]
    assert len(by_length) == 8


def _grid_0_5_19() -> list[str]:
    """The 0.5.19 ratio rows, from the transcribed medians (fa3 ms / fmha_v2 ms)."""
    ratios: dict[str, list[str]] = {}
    for line in (LIVE / "speed-0.5.19.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0] in ("bf16", "fp8_e4m3") and " x " not in cells[1]:
            fa3, v2 = (float(c.replace(",", "")) for c in cells[2:])
            ratios.setdefault(cells[0], []).append(f"{fa3 / v2:.2f}")
    return [f"| {kv} | 0.5.19 | " + " | ".join(r) + " |" for kv, r in ratios.items()]


def test_the_0_5_23_write_ups_quote_the_committed_tables():
    assert_quoted(script("signoff_table.py", str(LIVE / "signoff-0.5.23")).splitlines(),
                  "signoff-0.5.23")  # fmt: skip
    speed = str(LIVE / "speed-0.5.23/speed.jsonl")
    assert_quoted(script("speed_table.py", speed).splitlines(), "speed-0.5.23")
    grid = script("speed_table.py", speed, "--grid", "0.5.23").splitlines()
    assert len(grid) == 2 and len(_grid_0_5_19()) == 2
    assert_quoted([*grid, *_grid_0_5_19()], "speed-0.5.23")


def test_every_0_5_23_speed_cell_ran_alone_live_with_graphs_on_and_its_clocks_sampled():
    cells = results("speed-pipeline-0.5.23")
    assert len(cells) == 7 and {r["status"] for r in cells} == {"ok"}
    for r in cells:
        assert r["observed"]["version"] == "0.5.23" and not r["simulated"]
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        gpu = r["speed"]["gpu_samples"]["gpus"]["0"]  # clocks and power beside the times
        assert gpu["sm_clock_mhz"]["samples"] > 0 and gpu["power_w"]["median"] > 0
    assert one_after_another(cells)


def test_0_5_23_speed_has_both_variants_kv_dtypes_lengths_decode_an_a_a_and_its_baselines():
    speed = summary("speed-pipeline-0.5.23")["speed"]
    for variant in ("fa3", "fmha_v2"):
        for kv in ("auto", "fp8_e4m3"):
            mine = [e for e in speed if (e["variant"], e["kv_dtype"]) == (variant, kv)]
            assert {e["tokens"] for e in mine if e["phase"] == "prefill"} >= {
                1024, 4096, 16384, 65536, 131072}  # fmt: skip
            assert {e["batch"] for e in mine if e["phase"] == "decode"} == {1, 8, 32}
            assert all(e["accept_length"] for e in mine if e["phase"] == "decode")
    aa = [e for e in speed if e["variant"] == "fa3_repeat"]
    assert len(aa) == 9 and all(abs(e["ratio"] - 1) < 0.02 for e in aa)
    for e in speed:
        if e["ratio"] is not None:  # each against the fa3 of its own KV dtype and pool
            base = next(b for b in speed if b["cell_id"] == e["baseline_id"])
            assert base["variant"] == "fa3" and base["kv_dtype"] == e["kv_dtype"]
            assert base["kv_pool_tokens"] == e["kv_pool_tokens"]
    checks = [k for c in summary("speed-pipeline-0.5.23")["cells"] for k in c["checks"]]
    accuracy = [k for k in checks if k["kind"] == "accuracy_vs_baseline"]
    assert len(accuracy) == 3 and "NO BASELINE" not in {k["verdict"] for k in accuracy}
    assert all("/sp-fa3/" in "/" + k["numbers"]["baseline_folder"] for k in accuracy)
    pool = summary("speed-pipeline-0.5.23")["speed_costs"]["pool"]  # no cost grows with the pool
    assert {(p["variant"], p["tokens"]) for p in pool} == {
        ("fa3", 1024), ("fa3", 4096), ("fmha_v2", 1024), ("fmha_v2", 4096)}  # fmt: skip
    assert not any(p["grows_with_pool"] for p in pool)


def test_every_0_5_19_speed_cell_ran_live_with_graphs_on_fmha_v2_prefilling_only():
    cells = results("speed-pipeline-0.5.19")
    assert len(cells) == 6 and {r["status"] for r in cells} == {"ok"}
    for r in cells:
        assert r["observed"]["version"] == "0.5.19" and not r["simulated"]
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        assert r["speed"]["gpu_samples"]["gpus"]["0"]["power_w"]["median"] > 0
    assert one_after_another(cells)
    v2 = [r for r in cells if r["cell"]["variant"] == "fmha_v2"]  # decode with FA3, as fa3 does
    ran = {("decode", "fa3"), ("draft", "fa3"), ("prefill", "fmha_v2"), ("verify", "fa3")}
    assert all(set(r["runs"].items()) == ran for r in v2) and len(v2) == 3


def test_on_0_5_19_fmha_v2s_prefill_grows_with_the_pool_and_trails_fa3_at_short_lengths():
    report = summary("speed-pipeline-0.5.19")
    grows = {(p["variant"], p["tokens"]): p["grows_with_pool"]
             for p in report["speed_costs"]["pool"]}  # fmt: skip
    assert grows[("fmha_v2", 1024)] and grows[("fmha_v2", 4096)]  # the whole-pool copy
    prefills = [e for e in report["speed"] if (e["variant"], e["phase"]) == ("fmha_v2", "prefill")]
    ratio = {(e["kv_dtype"], e["kv_pool_tokens"], e["batch"], e["tokens"]): e["ratio"]
             for e in prefills}  # fmt: skip
    assert ratio[("auto", 262144, 1, 1024)] < 0.7
    assert ratio[("auto", 805376, 1, 1024)] < ratio[("auto", 262144, 1, 1024)]
    assert ratio[("fp8_e4m3", 262144, 1, 131072)] > 1.05  # fp8 KV: faster at 128k
    # its decode ran FA3's kernels: the report marks those ratios, and only those
    marked = {(e["phase"], e["same_kernels_as_baseline"]) for e in report["speed"]
              if e["variant"] == "fmha_v2"}  # fmt: skip
    assert marked == {("prefill", False), ("decode", True)}


def test_the_release_report_shows_the_0_5_19_copy_gone_in_0_5_23():
    moved = {(r["kv_dtype"], r["kv_pool_tokens"], r["phase"], r["batch"], r["tokens"]): r
             for r in summary("speed-releases")["speed_costs"]["release"]}  # fmt: skip
    for pool in (262144, 805376):  # bf16 at 1k, at both pools
        row = moved[("auto", pool, "prefill", 1, 1024)]
        old, new = (x["ratio"] for x in row["by_release"])
        assert row["depends_on_release"] and old < 0.7 < 0.9 < new


@pytest.mark.parametrize(("run", "rows", "quoted_in"), [
    ("speed-pipeline-0.5.23", 6, ["speed-pipeline-0.5.23"]),
    ("speed-pipeline-0.5.19", 5, ["speed-pipeline-0.5.19", "speed-releases"]),
])  # fmt: skip
def test_the_speed_readmes_quote_the_committed_ratios(run: str, rows: int, quoted_in: list[str]):
    printed = readme_rows(LIVE / run / "report/summary.json")
    assert len(printed) == rows  # header, rule, then a row per KV dtype and pool
    for folder in quoted_in:
        assert_quoted(printed, folder)


# --- the skip-softmax frontier, live ------------------------------------------------------------


def test_every_frontier_cell_ran_live_on_0_5_23_with_graphs_on_the_evals_own_prompts():
    cells = results("frontier-0.5.23")
    assert len(cells) == 8 and {r["status"] for r in cells} == {"ok"}
    v2 = sorted(r["cell"]["skip_softmax"]["prefill"] for r in cells
                if r["cell"]["variant"] == "fmha_v2")  # fmt: skip
    assert v2 == [0.0, 0.0, 1e4, 3e4, 1e5, 1e6]  # factor 0 twice: the A/A
    for r in cells:
        assert r["observed"]["version"] == "0.5.23" and not r["simulated"]
        assert r["cell"]["kv_dtype"] == "bf16"
        assert set(r["evals"]) == {"synth_mcq", "synth_arith", "synth_retrieval"}
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        assert r["speed"]["prompts"]["source"] == "eval:synth_retrieval"
    assert one_after_another(cells)
    # Every fmha_v2 cell started from the warm-up's JIT cache: nothing compiled, ready in 69-84 s.
    warm = [r["server"] for r in cells if r["cell"]["variant"] == "fmha_v2"]
    assert all(s["jit_cache"]["new_files"] == 0 and s["ready_s"] < 90 for s in warm)


def test_restarts_move_prefill_more_than_one_cells_interval_and_no_gain_is_beyond_them():
    (frontier,) = summary("frontier-0.5.23")["frontier"]
    again = next(p for p in frontier["points"]
                 if p["factor"] == 0 and p["cell"] != frontier["reference"])  # fmt: skip
    # The same engine started twice: at 16k tokens the bootstrap interval of one start excludes 1.
    # That pair is the A/A that sets the band, so it is shown as the A/A, not judged against it.
    g16 = next(g for g in again["prefill_gain"] if (g["batch"], g["tokens"]) == (1, 16384))
    assert g16["ratio_ci95"][1] < 1.0 and g16["beyond_aa"] == AA
    assert max(g["aa_band"] for g in again["prefill_gain"]) > 1.25
    said = {g["beyond_aa"] for p in frontier["points"] for g in p["prefill_gain"]}
    assert FASTER not in said and said <= {WITHIN, SLOWER, AA, None}
    by_factor = {p["factor"]: p for p in frontier["points"]}
    assert by_factor[1e6]["accuracy_verdict"] == "NO-GO"
    assert by_factor[1e6]["eval_verdicts"]["synth_mcq"] == "NO-GO"
    # With the question as the unit (issue 37), the A/A's repeat of factor 0 is GO on every eval;
    # every factor above it stays INCONCLUSIVE on synth_mcq at 8 repeats.
    assert frontier["largest_go_factor"] == 0.0
    assert [p["skipped_fraction"] for p in frontier["points"]] == [
        0.0, 0.0, 0.34995, 0.65338, 0.84407, 0.92898]  # fmt: skip


def test_the_frontier_readme_quotes_the_committed_table_and_drops():
    readme = (LIVE / "frontier-0.5.23/README.md").read_text()
    table = (LIVE / "skip_frontier.md").read_text().splitlines()
    quoted = [line.strip() for line in readme.splitlines()
              if line.strip().startswith("| 0.5.23 | bf16 |")]  # fmt: skip
    assert len(quoted) == 6 and all(any(quotes(t, line) for t in table) for line in quoted)
    (cell,) = [c for c in summary("frontier-0.5.23")["cells"]
               if c["skip_softmax"]["prefill"] == 1e6]  # fmt: skip
    drops = {k["eval"]: k["numbers"]["drop"] for k in cell["checks"]
             if k["kind"] == "accuracy_vs_baseline"}  # fmt: skip
    said = f"mcq -{100 * drops['synth_mcq']:.1f} points, arith -{100 * drops['synth_arith']:.1f}"
    assert quotes(" ".join(readme.split()), said)
