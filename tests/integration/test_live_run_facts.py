"""What the committed live runs on SGLang 0.5.19, and the trained model's A/As, show beyond their
reports (which ``test_live_runs.py`` rebuilds from the index): the cells ran where and how the
write-ups say, the verdicts are the ones quoted, and each run's README quotes its tables as the
scripts print them from the committed files.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from backends.startup_failure import classify_startup_log
from pipeline.report.write.frontier_tables import factor_text
from tests.helpers.cells import REPO, unpack
from tests.helpers.live_runs import LIVE, assert_quoted, script, summary

pytestmark = pytest.mark.integration


def test_the_0_5_19_signoff_is_no_go_on_15_cells_and_its_readme_quotes_its_tables():
    assert summary("signoff")["verdict"] == "NO-GO" and len(summary("signoff")["cells"]) == 15
    out = script("signoff_table.py", str(LIVE / "signoff"))
    assert "| s-a4 | fmha_v2 | auto | 1e+06 | 0.531 (2) | 0.527 (2) | 0.976 (6) |" in out
    assert "| all 48 | 35.0% | 65.3% | 84.4% | 92.9% |" in out
    assert_quoted(out.splitlines(), "signoff")


# --- two GPUs -----------------------------------------------------------------------------------

TWO_GPU = LIVE / "two-gpu"


def _cells(root: Path) -> dict[str, dict]:
    return {str(p.parent.relative_to(root)): json.loads(p.read_text())
            for p in sorted(root.glob("g*/*/result.json"))}  # fmt: skip


def _flag(result: dict, flag: str) -> str:
    argv = result["provenance"]["server_argv"]
    return argv[argv.index(flag) + 1]


@pytest.fixture(scope="module")
def repeats8(tmp_path_factory) -> Path:
    """The first run, at 8 repeats (cells-repeats8/, report-repeats8/), kept as one archive."""
    return unpack(TWO_GPU / "repeats8.tar.xz", tmp_path_factory.mktemp("repeats8"))


def _folder(name: str, repeats8: Path) -> Path:
    return repeats8 / name if name.endswith("repeats8") else TWO_GPU / name


@pytest.mark.parametrize("folder", ["cells", "cells-repeats8"])
def test_every_two_gpu_cell_ran_ok_on_its_own_gpus_cross_checked(folder, repeats8):
    cells = {k: v for k, v in _cells(_folder(folder, repeats8)).items() if k.startswith("g-")}
    devices = {name.split("/")[0] + ":" + name.split("_")[-3]:
               r["provenance"]["server_env"].get("CUDA_VISIBLE_DEVICES")
               for name, r in cells.items()}  # fmt: skip
    assert devices == {
        "g-auto:fa3": "0", "g-auto:repeat": "1",  # server.gpus=auto, one GPU per parallel job
        "g-tp2:repeat": None,  # tp=2 on both GPUs of the host
        "g-nodes:repeat": "0",  # node 0; node 1 on GPU 1 (below)
    }  # fmt: skip
    for r in cells.values():
        accept = r["accept"]
        assert r["status"] == "ok" and not r["mismatches"]
        assert accept["cross_check"]["agrees"] and accept["metrics_cross_check"]["agrees"]
        assert accept["traffic"]["sent"] == accept["n_requests"] == accept["n_with_spec"]
    tp2 = next(r for name, r in cells.items() if name.startswith("g-tp2"))
    assert _flag(tp2, "--tp-size") == "2"
    nodes = next(r for name, r in cells.items() if name.startswith("g-nodes"))
    assert _flag(nodes, "--nnodes") == "2" and _flag(nodes, "--node-rank") == "0"


def test_node_1_was_recorded_failed_live_the_fault_the_pipeline_now_avoids(repeats8):
    """Node 1's SGLang died when node 0's server stopped, before node 0 wrote NODE0_DONE (then
    written after the stop): on record as failed although the cell was fine. The marker now comes
    before the stop; tests/slow/test_sweeps.py replays this with the simulated server."""
    for folder in ("cells", "cells-repeats8"):
        (path,) = _folder(folder, repeats8).glob("g-nodes/*/node-1/result.json")
        node1 = json.loads(path.read_text())
        assert (node1["status"], node1["exit_code"], node1["devices"]) == ("failed", -9, "1")
        assert "Connection reset by peer" in node1["log_tail"]


def test_two_gpus_go_at_24_repeats_undecided_on_arithmetic_only_at_8(repeats8):
    assert summary("two-gpu")["verdict"] == "GO" and len(summary("two-gpu")["cells"]) == 4
    early = json.loads((repeats8 / "report-repeats8/summary.json").read_text())
    undecided = {(c["folder"].split("/")[-2], k["eval"]) for c in early["cells"]
                 for k in c["checks"] if k["verdict"] == "INCONCLUSIVE"}  # fmt: skip
    assert early["verdict"] == "UNDECIDED"
    assert undecided == {("g-auto", "synth_arith"), ("g-nodes", "synth_arith")}


def test_fmha_v2_at_tp2_ran_trtllm_mha_prefill_and_is_go_against_fa3_at_tp2():
    assert summary("two-gpu", "report-fmha")["verdict"] == "GO"
    g2 = {name: r for name, r in _cells(TWO_GPU / "cells").items() if name.startswith("g2-")}
    assert len(g2) == 2
    for r in g2.values():
        accept = r["accept"]
        assert r["status"] == "ok" and _flag(r, "--tp-size") == "2"
        assert accept["cross_check"]["agrees"] and accept["metrics_cross_check"]["agrees"]
    v2 = g2["g2-v2/0_synth-llama_fmha_v2_auto_exact"]
    assert _flag(v2, "--prefill-attention-backend") == "trtllm_mha"


# --- production shapes --------------------------------------------------------------------------

SHAPES = LIVE / "shapes-0.5.23"
# cell folder -> (its shape folder, its MTP / NextN drafting as SGLang names it)
LAUNCHED = {
    "0_deepseek-v3-dummy_fa3_auto_exact": ("deepseek_v3", "EAGLE"),
    "1_qwen3-next-80b-a3b-dummy_fa3_auto_exact": ("qwen3_next_80b_a3b", "EAGLE"),
    "2_glm-4.6-dummy_fa3_auto_exact": ("glm_4_6", "EAGLE"),
    # the fourth, in the speed lease of 2026-12-02: the shipped float16 recipe as it is
    "0_llama-3.1-8b-eagle3-dummy_fa3_auto_exact": ("llama3_1_8b", "EAGLE3"),
}


@pytest.mark.parametrize("folder", list(LAUNCHED))
def test_the_shape_launched_on_the_real_engine(folder: str) -> None:
    shape, algorithm = LAUNCHED[folder]
    result = json.loads((SHAPES / "cells" / folder / "result.json").read_text())
    assert result["status"] == "ok" and not result["simulated"]
    assert result["cell"]["sglang_version"] == "0.5.23"
    argv = result["server"]["argv"]
    assert argv[argv.index("--model-path") + 1] == f"benchmarks/live_h200/shapes/{shape}"
    assert argv[argv.index("--load-format") + 1] == "dummy"
    assert result["requested"]["load_format"] == "dummy"
    assert {m["key"] for m in result["mismatches"]} <= {"gpu"}  # load_format among the agreed
    assert result["observed"]["speculative_algorithm"] == algorithm
    accept = result["accept"]
    assert accept["status"] == "ok" and accept["n_with_spec"] == accept["n_requests"] > 0
    assert accept["verify_ct"] > 0 and accept["num_proposed_drafts"] > 0
    if shape == "llama3_1_8b":  # conf/model/llama3_1_8b_eagle3.yaml, graphs captured
        assert argv[argv.index("--dtype") + 1] == "float16" and "--disable-cuda-graph" not in argv


def test_the_first_speed_cell_failed_on_the_drafts_dtype_and_says_so() -> None:
    # --dtype auto: the EAGLE3 draft's config says float16 under a bfloat16 target, and 0.5.23
    # fails its decode-graph capture; conf/experiment/speed_llama3_1_8b.yaml now says bfloat16.
    result = json.loads((SHAPES / "first-try-speed/result.json").read_text())
    assert result["status"] == "failed" and "--dtype" not in result["server"]["argv"]
    log = lzma.decompress((SHAPES / "first-try-speed/server.log.xz").read_bytes()).decode()
    tail = "\n".join(log.splitlines()[-50:])  # what the pipeline hands the classifier
    failure = classify_startup_log(tail, -9, timed_out=False)
    assert failure.kind == "crash"
    assert failure.message.startswith(
        "Exception: Capture cuda graph failed: expected mat1 and mat2"
    )
    experiment = (REPO / "conf/experiment/speed_llama3_1_8b.yaml").read_text()
    assert "extra_args: [--dtype, bfloat16]" in experiment


# --- issue 37's A/As ----------------------------------------------------------------------------


def _aa_checks(report: str) -> dict[str, dict]:
    (cand,) = [c for c in summary("dependence-0.5.23", report)["cells"]
               if c["variant"] == "fa3_repeat"]  # fmt: skip
    return {k["eval"]: k for k in cand["checks"] if k["kind"] == "accuracy_vs_baseline"}


def test_greedy_copies_count_once_and_too_few_questions_are_named():
    checks = _aa_checks("report-g0")
    verdicts = {e: k["verdict"] for e, k in checks.items()}
    assert verdicts == {"synth_mcq": "GO", "synth_arith": "GO", "synth_retrieval": "INCONCLUSIVE"}
    for name, questions in (("synth_arith", 200), ("synth_retrieval", 48)):
        n = checks[name]["numbers"]
        assert n["repeats_vary"] is False and n["icc"] == 1.0
        assert n["effective_answers"] == pytest.approx(questions)  # 8 repeats worth one each
        assert n["drop"] == 0.0  # the two starts answered every question alike
    arith, retrieval = checks["synth_arith"]["numbers"], checks["synth_retrieval"]["numbers"]
    assert arith["questions_needed"] <= 200 < 200 * 8  # enough questions, not enough answers
    why = retrieval["undecided_because"]
    assert "repeats are copies" in why and f"about {retrieval['questions_needed']} questions" in why
    assert retrieval["questions_needed"] > 48
    assert checks["synth_mcq"]["numbers"]["repeats_vary"] is True  # options shuffled per repeat


def test_the_sampled_a_a_is_go_with_repeats_worth_less_than_answers():
    checks = _aa_checks("report-t6")
    assert {k["verdict"] for k in checks.values()} == {"GO"}
    for k in checks.values():
        n = k["numbers"]
        assert n["repeats_vary"] is True and 0.2 < n["icc"] < 0.7
        assert n["effective_answers"] < n["answers_per_side"] / 2


# --- the skip-softmax frontier table ------------------------------------------------------------

TABLE = LIVE / "skip_frontier.md"


def test_the_committed_frontier_table_is_what_its_script_prints() -> None:
    assert script("skip_frontier_table.py") == TABLE.read_text(encoding="utf-8"), (
        "skip_frontier.md is stale: python benchmarks/live_h200/skip_frontier_table.py > "
        f"{TABLE.relative_to(REPO)}"
    )


def test_the_table_has_each_measured_factor_its_verdict_and_speed_where_it_was_measured() -> None:
    rows = [line.split(" | ") for line in TABLE.read_text().splitlines() if line.startswith("| 0.")]
    by_key = {(r[0].lstrip("| "), r[1], r[2]): r for r in rows}
    assert by_key[("0.5.19", "auto", "30000")][3:5] == ["65.3%", "GO"]
    assert by_key[("0.5.19", "auto", "1e+06")][3:5] == ["92.9%", "NO-GO"]
    assert by_key[("0.5.19", "fp8_e4m3", "10000")][3:5] == ["25.8%", "INCONCLUSIVE"]
    signoffs = [r for r in rows if r[1] != "bf16"]  # the sign-offs ran no speed phase
    assert all(r[-1] == "not measured yet |" for r in signoffs) and len(signoffs) == 11
    measured = {r[2]: r for r in rows if r[1] == "bf16"}  # the frontier run, against the A/A
    assert list(measured) == ["0 (exact, A/A)", "0 (exact)", "10000", "30000", "100000", "1e+06"]
    assert measured["1e+06"][3:5] == ["92.9%", "NO-GO"]
    assert measured["0 (exact)"][-1].startswith("1 x 16,384: reference 15.8 ms")
    assert "1 x 16,384: 0.983 (within the A/A)" in measured["10000"][-1]
    assert ("KV auto (factors 0 (exact), 10000, 30000, 100000, 1e+06): the largest factor whose "
            "verdict is GO: 30000." in TABLE.read_text())  # fmt: skip


def test_the_0_5_19_reports_frontier_agrees_with_the_table() -> None:
    rows = [line.split(" | ") for line in TABLE.read_text().splitlines()
            if line.startswith("| 0.5.19 |")]  # fmt: skip
    table = {(r[1], r[2]): r[4] for r in rows}
    frontiers = summary("signoff")["frontier"]
    found = {(f["kv_dtype"], factor_text(p["factor"])): p["accuracy_verdict"]
             for f in frontiers for p in f["points"]}  # fmt: skip
    assert found == table
    assert [f["largest_go_factor"] for f in frontiers] == [3e4, 0.0]


# --- logprob parity (issue 39 item 6) -------------------------------------------------------------


def test_the_parity_cost_is_what_the_benchmark_prints_from_the_committed_cells(tmp_path: Path):
    import subprocess
    import sys

    from benchmarks.live_h200 import live_index

    (report,) = [r for r in live_index.reports() if r.label == "parity-0.5.23/report"]
    inputs = live_index.lay_out(report, tmp_path)  # outputs/live/p-*, as the lease wrote them
    design = str(LIVE / "signoff-0.5.23" / "cells")
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.parity_cost", *inputs, "--design", design],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    printed = run.stdout.replace(design + "/", "")
    assert printed == (LIVE / "parity-0.5.23" / "cost.md").read_text()
    assert printed.rstrip().endswith("6.13% (meets the 10% target)")


def test_the_parity_run_ran_on_the_h100_it_names_and_its_a_a_is_bit_exact():
    found = summary("parity-0.5.23")
    assert {c["gpu"] for c in found["cells"]} == {"NVIDIA H100 80GB HBM3"}
    aa = [e for e in found["parity"] if e["variant"] == "fa3_repeat" and e["path"] == "prefill"]
    assert [(e["verdict"], e["divergence"]) for e in aa] == [("GO", 0.0)]
    prefill = [e for e in found["parity"] if e["path"] == "prefill"]
    skip = {e["skip_softmax"]["prefill"]: e["verdict"] for e in prefill
            if e["variant"] == "fmha_v2" and e["kv_dtype"] == "auto"}  # fmt: skip
    assert skip == {0.0: "INCONCLUSIVE", 1e4: "NO-GO", 3e4: "NO-GO", 1e5: "NO-GO", 1e6: "NO-GO"}


LONGCTX = "longctx-frontier-0.5.23"


def _gain(point: dict, tokens: int) -> float:
    return next(g["ratio"] for g in point["prefill_gain"] if g["tokens"] == tokens)


def test_the_long_context_frontier_readme_quotes_its_speed_report():
    """The README's 128k gains (against the PR's +12.9%) are the committed speed report's."""
    (frontier,) = summary(LONGCTX, "report-speed-with-1e5")["frontier"]
    assert frontier["gpu"] == "NVIDIA H100 80GB HBM3"
    points = {p["factor"]: p for p in frontier["points"]}
    readme = (LIVE / LONGCTX / "README.md").read_text()
    for factor, quoted in ((1e6, "**1.373 [1.365, 1.378]**"), (1e5, "1.307 [1.296, 1.314]")):
        assert f"{_gain(points[factor], 131072):.3f}" in quoted
        assert quoted in readme
    assert f"{100 * (_gain(points[1e6], 131072) - 1):.1f}% faster" in readme


def test_the_long_context_frontier_cells_are_the_twelve_the_readme_names(tmp_path):
    """Every cell of the lease is in cell-files.tar.xz, ok, on the H100 its README names."""
    root = unpack(LIVE / LONGCTX / "cell-files.tar.xz", tmp_path)
    names = sorted(p.parent.name for p in root.glob("lf-*/*/result.json"))
    assert names == sorted(
        ["a-aa", "a-base", "s-aa", "s-fa3", "s-v2-0", "s-v2-1e5", "s-v2-1e6"]
        + [f"a-v2-{f}" for f in ("0", "1e4", "3e4", "1e5", "1e6")]
    )
    for result in root.glob("lf-*/*/result.json"):
        cell = json.loads(result.read_text())
        assert cell["status"] == "ok", result
        assert cell["cell"]["gpu"]["name"] == "NVIDIA H100 80GB HBM3", result


LONGCTX_H200 = "longctx-frontier-h200-0.5.23"


def test_the_h200_frontier_readme_quotes_its_parity_band_and_128k_gains():
    """The README's band (flashinfer's upper bound x 2), fmha_v2's parity GO and the 128k gains
    against the PR's +3.5% (fp8) are the committed reports'."""
    parity = {Path(c["folder"]).name: k for c in summary(LONGCTX_H200, "report-acc")["cells"]
              for k in c["checks"] if k["kind"] == "parity_vs_baseline"}  # fmt: skip
    readme = (LIVE / LONGCTX_H200 / "README.md").read_text()
    band = parity["a-v2-0"]["numbers"]
    assert band["reference_cell"].startswith("synth-longctx/flashinfer")
    assert band["band_source"] == "reference"
    quoted = f"{band['band']:.1e}".replace("e-0", "e-")  # the README writes 1.0e-4
    assert f"**{quoted}**" in readme and parity["a-v2-0"]["verdict"] == "GO"
    assert parity["a-v2-1e6"]["verdict"] == parity["a-fa3-f"]["verdict"] == "NO-GO"
    frontiers = {f["kv_dtype"]: f for f in summary(LONGCTX_H200, "report-speed")["frontier"]}
    assert {f["gpu"] for f in frontiers.values()} == {"NVIDIA H200"}
    fp8 = {p["factor"]: p for p in frontiers["fp8_e4m3"]["points"]}
    bf16 = {p["factor"]: p for p in frontiers["bf16"]["points"]}
    assert f"**{_gain(fp8[1e6], 131072):.3f}" in readme
    assert f"3e4 on bf16\n  {_gain(bf16[3e4], 131072):.3f}" in readme


def test_the_h200_frontier_cells_are_the_ones_its_readme_names(tmp_path):
    """Eighteen cells ok on the H200, and s-v2f-1e4 cut by the budget: samples kept, no result."""
    root = unpack(LIVE / LONGCTX_H200 / "cell-files.tar.xz", tmp_path)
    names = sorted(p.parent.name for p in root.glob("lf-*/*/result.json"))
    assert names == sorted(
        ["a-aa", "a-base", "a-fi", "a-fa3-f", "a-v2-0", "a-v2-1e6", "s-fa3", "s-fa3-f", "s-v2-0",
         "s-v2-1e4", "s-v2-3e4", "s-v2f-0", "s-v2f-1e6"]
        + [f"a-v2f-{f}" for f in ("0", "1e4", "3e4", "1e5", "1e6")]
    )  # fmt: skip
    for result in root.glob("lf-*/*/result.json"):
        cell = json.loads(result.read_text())
        assert cell["status"] == "ok" and cell["cell"]["gpu"]["name"] == "NVIDIA H200", result
    cut = root / "lf-speed" / "s-v2f-1e4"
    assert not (cut / "result.json").exists() and list((cut / "samples").iterdir())


LONGCTX_SPEED = "longctx-frontier-speed-h100-0.5.23"


def test_the_speed_lease_readme_quotes_its_a_a_band_and_gains():
    """fp8's A/A band per length and the 1e4 / 3e4 gains at 128k are the committed report's."""
    (frontier,) = summary(LONGCTX_SPEED, "report-speed")["frontier"]
    assert (frontier["gpu"], frontier["kv_dtype"]) == ("NVIDIA H100 80GB HBM3", "fp8_e4m3")
    readme = (LIVE / LONGCTX_SPEED / "README.md").read_text()
    exact = frontier["points"][0]["prefill_gain"]
    bands = [f"{g['aa_band']:.2f}x at {g['tokens'] // 1024}k" for g in exact]
    assert bands == ["1.57x at 16k", "1.51x at 32k", "1.29x at 64k", "1.04x at 128k"]
    assert "1.57x at 16k, 1.51x at 32k, 1.29x at 64k and\n  1.04x at 128k" in readme
    points = {p["factor"]: p for p in frontier["points"][2:]}
    for factor, word in ((1e4, "1e4"), (3e4, "3e4")):
        assert f"{word} {_gain(points[factor], 131072):.3f} [" in readme
        assert {g["beyond_aa"] for g in points[factor]["prefill_gain"]} == {"within the A/A"}


def test_the_speed_lease_ran_four_fp8_cells_that_stopped_without_the_crash_sleep(tmp_path):
    """Four fmha_v2 fp8 cells ok on the H100, each server stopped in under 3 s (diagnostics off)."""
    root = unpack(LIVE / LONGCTX_SPEED / "cell-files.tar.xz", tmp_path)
    cells = {p.parent.name: json.loads(p.read_text()) for p in root.glob("lf-speed/*/result.json")}
    assert sorted(cells) == ["s-v2f-0", "s-v2f-0b", "s-v2f-1e4", "s-v2f-3e4"]
    for cell in cells.values():
        assert cell["status"] == "ok" and cell["cell"]["kv_dtype"] == "fp8_e4m3"
        assert cell["cell"]["gpu"]["name"] == "NVIDIA H100 80GB HBM3"
        assert cell["provenance"]["server_env"]["SGLANG_PYSPY_DUMP_BEFORE_CRASH"] == "0"
        assert cell["timing"]["pipeline_overhead"]["server_stop_s"] < 3
