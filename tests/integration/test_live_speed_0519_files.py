"""The committed live speed comparison on SGLang 0.5.19, and both releases side by side (issue 27).

The pipeline's own speed cells on the Llama-3.1-8B shape, as on 0.5.23 (the test beside this one)
but on 0.5.19 with CUDA graphs on (``setup_on_gpu.sh`` guards the bundle's missing deep_gemm):
fa3 and fmha_v2 at both KV dtypes, then both again at the pool SGLang sizes itself; no A/A (the
lease ran short). The release report is ``mtp-eval-report`` over both releases' committed cells:
rebuilt here, it gives the committed release rows; the READMEs quote the 0.5.19 ratios.
"""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

from tests.helpers.cells import rebuild_committed_report, run_script, unpack
from tests.helpers.quoted import unquoted
from tests.helpers.speed_files import readme_rows, speed_view, verdicts

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "benchmarks/results/live-h200"
SPEED = {"0.5.19": LIVE / "speed-pipeline-0.5.19", "0.5.23": LIVE / "speed-pipeline-0.5.23"}
RELEASES = LIVE / "speed-releases"
# the committed release report's inputs, in its order (README section 11)
SWEEPS = ["0.5.19/sp-fa3", "0.5.19/sp-v2", "0.5.19/sp-pool",
          "0.5.23/sp-fa3", "0.5.23/sp-v2", "0.5.23/sp-pool", "0.5.23/sp-aa"]  # fmt: skip

pytestmark = pytest.mark.integration


def _summary(folder: Path) -> dict:
    return json.loads((folder / "report/summary.json").read_text())


def test_the_0_5_19_report_rebuilt_from_committed_files_gives_the_committed_speed(tmp_path):
    run, rebuilt = rebuild_committed_report(SPEED["0.5.19"], tmp_path)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]  # undecided: exit 2
    committed = _summary(SPEED["0.5.19"])
    assert speed_view(rebuilt) == speed_view(committed)
    assert rebuilt["speed_costs"] == committed["speed_costs"]
    assert verdicts(rebuilt) == verdicts(committed)


def test_every_0_5_19_cell_ran_on_a_live_server_with_cuda_graphs_on_one_after_another():
    paths = sorted(SPEED["0.5.19"].glob("cells/*/*/result.json"))
    results = [json.loads(p.read_text()) for p in paths]
    assert len(results) == 6 and {r["status"] for r in results} == {"ok"}
    for r in results:
        assert r["observed"]["version"] == "0.5.19" and not r["simulated"]
        assert "--disable-cuda-graph" not in r["provenance"]["server_argv"]
        assert r["speed"]["gpu_samples"]["gpus"]["0"]["power_w"]["median"] > 0
    spans = sorted((r["timing"]["started_at"], r["timing"]["ended_at"]) for r in results)
    assert all(b[0] >= a[1] for a, b in pairwise(spans))  # one after another
    # 0.5.19's fmha_v2 is a prefill kernel only: its cells decode with FA3, as the baseline does
    v2 = [r for r in results if r["cell"]["variant"] == "fmha_v2"]
    assert {tuple(sorted(r["runs"].items())) for r in v2} == {
        (("decode", "fa3"), ("draft", "fa3"), ("prefill", "fmha_v2"), ("verify", "fa3"))
    }


def test_on_0_5_19_fmha_v2s_prefill_grows_with_the_pool_and_trails_fa3_at_short_lengths():
    summary = _summary(SPEED["0.5.19"])
    pool = summary["speed_costs"]["pool"]
    grows = {(p["variant"], p["tokens"]): p["grows_with_pool"] for p in pool}
    assert grows[("fmha_v2", 1024)] and grows[("fmha_v2", 4096)]  # the whole-pool copy
    ratio = {
        (e["kv_dtype"], e["kv_pool_tokens"], e["batch"], e["tokens"]): e["ratio"]
        for e in summary["speed"]
        if e["variant"] == "fmha_v2" and e["phase"] == "prefill"
    }
    assert ratio[("auto", 262144, 1, 1024)] < 0.7
    assert ratio[("auto", 805376, 1, 1024)] < ratio[("auto", 262144, 1, 1024)]
    assert ratio[("fp8_e4m3", 262144, 1, 131072)] > 1.05  # fp8 KV: faster at 128k
    # its decode ran FA3's kernels: the report marks those ratios, and only those
    marked = {(e["phase"], e["same_kernels_as_baseline"]) for e in summary["speed"]
              if e["variant"] == "fmha_v2"}  # fmt: skip
    assert marked == {("prefill", False), ("decode", True)}


def _release_cells(work: Path) -> Path:
    live = work / "live"
    for release, folder in SPEED.items():
        shutil.copytree(folder / "cells", live / release)
        unpack(folder / "samples.tar.xz", live / release)
    return live


def test_the_release_report_rebuilt_from_both_releases_cells_gives_the_committed_rows(tmp_path):
    live = _release_cells(tmp_path)
    out = tmp_path / "report"
    run = run_script("mtp-eval-report", *SWEEPS, "--out", str(out), timeout=300, cwd=live)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    rebuilt, committed = json.loads((out / "summary.json").read_text()), _summary(RELEASES)
    assert rebuilt["speed_costs"] == committed["speed_costs"]
    assert speed_view(rebuilt) == speed_view(committed)
    moved = {(r["kv_dtype"], r["kv_pool_tokens"], r["phase"], r["batch"], r["tokens"]): r
             for r in committed["speed_costs"]["release"]}  # fmt: skip
    for pool in (262144, 805376):  # bf16 at 1k, at both pools: 0.5.19's copy, gone in 0.5.23
        row = moved[("auto", pool, "prefill", 1, 1024)]
        old, new = (x["ratio"] for x in row["by_release"])
        assert row["depends_on_release"] and old < 0.7 < 0.9 < new


def test_the_readmes_quote_the_committed_0_5_19_ratios():
    # 0.5.23's rows are checked beside its own files (test_live_speed_0523_files)
    rows = readme_rows(SPEED["0.5.19"] / "report/summary.json")
    assert len(rows) == 5  # header, rule, bf16 at two pools, fp8
    for text in ("README.md", "benchmarks/live_h200/README.md"):
        missed = unquoted((REPO / text).read_text(), rows)
        assert missed == [], f"{text} differs from the 0.5.19 speed report: {missed}"
