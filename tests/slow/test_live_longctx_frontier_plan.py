"""LIVE_PLAN=longctx-frontier rehearsed on the simulated SGLang 0.5.23 (issue 41 items 2 and 3).

One tick runs the whole plan on a fake long-context model (an untrained tiny synth_longctx: the
simulated server loads no weights, HF's tile count reads them) carried as ``chunks.py`` chunks:
the weights assembled, fmha_v2's JIT warm-ups as bare servers, HF's skipped share per length,
then the cells in the plan's order (fa3 speed and accuracy first, fmha_v2 once its warm-up ended),
speed cells one at a time, accuracy cells side by side re-scoring a-base's parity sequences, and
the two reports. Lengths of 4k and 8k tokens keep it short; the plan's structure is the lease's.
fmha_v2 at factor 1e6 perturbs the logits and prefills faster (simulated effects matched on the
factor's variable), so the reports must tell it from the rest.
"""

from __future__ import annotations

import itertools
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.live_plan import longctx_model_chunks, run_live_plan

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal, pytest.mark.timeout(600)]

ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
EFFECT = f"{{match:{{{ENV}:1000000}},logit_sigma:0.5,accuracy_delta:-0.5}}"
# h200_synth_llama: fmha_v2's prefill saves more with a larger factor and a longer prompt.
OVERRIDES = ("parity.new_tokens=16 server.simulated.timing_model=h200_synth_llama "
             f"server.simulated.effects=[{EFFECT}]")  # fmt: skip
LENGTHS = (4096, 8192)  # two of the report's length bins (<=4k, 4k-8k)
FACTORS = {"0": 0.0, "1e4": 1e4, "3e4": 3e4, "1e5": 1e5, "1e6": 1e6}
DROPPED = ("s-v2-3e4", "s-v2f-3e4")  # LIVE_LF_SKIP='s-v2*-3e4'
KV = {"": "bf16", "f": "fp8_e4m3"}


def _cells() -> dict[str, tuple[str, str, float]]:
    """Every cell of the plan: name -> (variant, KV dtype, prefill factor as result.json has it)."""
    cells = {"s-fa3": ("fa3", "bf16", 0.0), "a-base": ("fa3", "bf16", 0.0),
             "s-fa3-f": ("fa3", "fp8_e4m3", 0.0), "a-fa3-f": ("fa3", "fp8_e4m3", 0.0),
             "s-aa": ("fa3_repeat", "bf16", 0.0), "a-aa": ("fa3_repeat", "bf16", 0.0),
             "a-fi": ("flashinfer", "bf16", 0.0),
             "s-v2-0b": ("fmha_v2", "bf16", 0.0),
             "s-v2f-0b": ("fmha_v2", "fp8_e4m3", 0.0)}  # fmt: skip
    for tag, kv in KV.items():
        for name, factor in FACTORS.items():
            for kind in "as":
                cells[f"{kind}-v2{tag}-{name}"] = ("fmha_v2", kv, factor)
    return {k: v for k, v in cells.items() if k not in DROPPED}


def _spans(live: Path) -> dict[str, tuple[float, float]]:
    rows = (live / "logs" / "lf-cells.log").read_text().splitlines()
    return {r.split()[0]: (float(r.split()[1]), float(r.split()[2])) for r in rows}


def _check_order(live: Path, cells: dict[str, Any]) -> None:
    spans = _spans(live)
    assert set(spans) == set(cells)
    speed = sorted((span, name) for name, span in spans.items() if name.startswith("s-"))
    for (before, _), (after, name) in itertools.pairwise(speed):
        assert before[1] <= after[0], name  # one speed cell at a time
    for name, (start, end) in spans.items():
        if name.startswith("a-"):  # and no accuracy cell beside one
            assert all(e <= start or end <= s for (s, e), _ in speed), name
    ticks = (live / "logs" / "ticks.log").read_text()
    # The plan's order where readiness does not decide it: fa3 first (after HF's tile count),
    # fmha_v2 at factors 0 and 1e6 before its accuracy cells, the middle factors' speed last.
    # fmha_v2's own speed A/A (s-v2-0b) before the accuracy cells: a lease cut short keeps it.
    for chain in (("tiles", "s-fa3", "a-base"), ("jit-bf16", "s-v2-0", "s-v2-1e6", "a-v2-0"),
                  ("jit-fp8_e4m3", "s-v2f-0", "s-v2f-1e6", "s-v2-0b", "s-v2f-0b", "a-v2f-0"),
                  ("a-v2-1e5", "s-v2-1e4", "s-v2-1e5")):  # fmt: skip
        starts = [ticks.index(f"started {name} ") for name in chain]
        assert starts == sorted(starts), chain


def _results(out: Path) -> dict[str, dict[str, Any]]:
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("lf-*/*/result.json")}


def _check_cells(out: Path, cells: dict[str, tuple[str, str, float]]) -> None:
    results = _results(out)
    assert set(results) == set(cells)
    base = out / "lf-acc" / "a-base"
    for name, (variant, kv, factor) in cells.items():
        result = results[name]
        assert result["status"] == "ok", (name, result.get("error"))
        cell = result["cell"]
        assert (cell["variant"], cell["kv_dtype"], cell["skip_softmax"]["prefill"] or 0.0) == (
            variant, kv, factor), name  # fmt: skip
        assert cell["sglang_version"] == "0.5.23"
        if name.startswith("s-"):  # the prefill at each length, on the eval's own prompts
            points = {(p["phase"], p["batch"], p["prompt_tokens"]) for p in result["speed"][
                "points"]}  # fmt: skip
            assert points == {("prefill", 1, n) for n in LENGTHS}, name
            assert result["speed"]["prompts"]["source"] == "eval:longctx_niah_single"
            assert set(result["evals"]) == {"longctx_niah_single"}
        else:
            assert set(result["evals"]) == {"longctx_niah_single", "longctx_niah_multikey"}
            assert result.get("speed") is None
        if name.startswith("a-") and name != "a-base":  # a-base's ids, re-scored
            summary = json.loads((out / "lf-acc" / name / "parity" / "summary.json").read_text())
            assert Path(summary["sequences_from"]).resolve() == base.resolve(), name
            assert summary["sequences"] == 4


def _checks(summary: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """``kind``'s check per cell, keyed by the cell's folder name."""
    return {Path(c["folder"]).name: k for c in summary["cells"] for k in c["checks"]
            if k["kind"] == kind}  # fmt: skip


def _check_accuracy_report(out: Path, cells: dict[str, tuple[str, str, float]]) -> None:
    summary = json.loads((out / "lf-report-acc" / "summary.json").read_text())
    candidates = {n for n, c in cells.items() if n.startswith("a-") and c[0] != "fa3"}
    accuracy = _checks(summary, "accuracy_vs_baseline")
    assert set(accuracy) == candidates  # the fa3 cells are the baselines
    for name, check in accuracy.items():  # each paired with fa3 at its own KV dtype
        base = "a-fa3-f" if cells[name][1] == "fp8_e4m3" else "a-base"
        assert Path(check["numbers"]["baseline_folder"]).name == base, name
    parity = _checks(summary, "parity_vs_baseline")
    assert set(parity) == candidates | {"a-fa3-f"}  # fp8 KV read against bf16 exact fa3 too
    assert parity.pop("a-fi")["verdict"] == "INFO"  # the reference pair: it sets the band
    for name, check in parity.items():
        assert Path(check["numbers"]["sequences_from"]).name == "a-base", name
        assert "flashinfer" in check["numbers"]["reference_cell"], name  # a-fi
        assert check["verdict"] == ("NO-GO" if name.endswith("-1e6") else "GO"), name
    by_length = {Path(e["cell"]).name: e["verdicts"] for e in summary["frontier_by_length"]}
    assert set(by_length) == candidates  # a verdict per length bin, accept length's too
    assert all(set(v) == {"<=4k", "4k-8k"} for v in by_length.values())
    measures = {(Path(e["cell"]).name, e["measure"]) for e in summary["by_bin"]}
    assert {(n, m) for n in candidates for m in ("accuracy", "accept_length")} <= measures
    frontiers = {f["kv_dtype"]: f for f in summary["frontier"]}
    assert set(frontiers) == {"bf16", "fp8_e4m3"}
    tiles = json.loads((out / "lf-skip.json").read_text())
    assert set(tiles["per_length"]) == {str(n) for n in LENGTHS}
    for kv, frontier in frontiers.items():
        assert [p["factor"] for p in frontier["points"]] == list(FACTORS.values())
        assert frontier["largest_inside_band_factor"] == 1e5
        shares = tiles["skip_fraction"]["auto" if kv == "bf16" else kv]
        assert frontier["points"][-1]["skipped_fraction"] == shares["1000000.0"]
    assert "## Skip-softmax frontier: fmha_v2" in (out / "lf-report-acc" / "report.md").read_text()


def _check_speed_report(out: Path) -> None:
    summary = json.loads((out / "lf-report-speed" / "summary.json").read_text())
    rows = [e for e in summary["speed"] if e["ratio"] is not None]
    speed_cells = {n for n in _cells() if n.startswith("s-")}
    assert {Path(e["cell_id"]).name for e in rows} == speed_cells - {"s-fa3", "s-fa3-f"}
    for row in rows:  # against fa3 at the cell's KV dtype, inside the A/A band or beyond it
        base = "s-fa3-f" if row["kv_dtype"] == "fp8_e4m3" else "s-fa3"
        assert Path(row["baseline_id"]).name == base and row["aa_band"] is not None
    for frontier in summary["frontier"]:  # 3e4 dropped; the factor-0 cell and its A/A
        assert [p["factor"] for p in frontier["points"]] == [0.0, 0.0, 1e4, 1e5, 1e6]
        gains = {p["factor"]: p["prefill_gain"][-1]["ratio"] for p in frontier["points"]}
        assert gains[1e6] > gains[1e4] > 1.0, gains  # at the longest length
        assert all(g["aa_band"] is not None for p in frontier["points"]
                   for g in p["prefill_gain"])  # fmt: skip


def test_longctx_frontier_plan_runs_every_cell_in_order(tmp_path: Path) -> None:
    chunks = longctx_model_chunks(tmp_path)
    run = run_live_plan(tmp_path, "longctx-frontier", ["tick", "500"], 540,
                        LIVE_HF_PYTHON=sys.executable, MTP_CHUNKS=str(chunks),
                        MTP_EVAL_CACHE=str(tmp_path / "cache"),
                        LIVE_LF_LENGTHS=" ".join(map(str, LENGTHS)), LIVE_LF_SAMPLES="2",
                        LIVE_LF_SPEED_PROMPTS="2", LIVE_LF_OVERRIDES=OVERRIDES,
                        LIVE_LF_SKIP="s-v2*-3e4")  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    live, out, cells = tmp_path / "live", tmp_path / "repo" / "outputs" / "live", _cells()
    for phase in ("lcmodel", "jit-bf16", "jit-fp8_e4m3", "tiles", *cells, "report"):
        rc = (live / "state" / f"{phase}.rc").read_text().strip()
        assert rc == "0", (phase, (live / "logs" / f"{phase}.log").read_text()[-2000:])
    for name in DROPPED:
        assert (live / "state" / f"{name}.rc").read_text().strip() == "skipped"
    for kv in ("bf16", "fp8_e4m3"):  # each warm-up served the speed cells' argv until ready
        assert (live / f"ready-lf-jit-{kv}.txt").is_file()
        assert f"--kv-cache-dtype {kv}" in (live / "logs" / f"jit-{kv}.log").read_text()
    _check_cells(out, cells)
    _check_order(live, cells)
    _check_accuracy_report(out, cells)
    _check_speed_report(out)
    with tarfile.open(live / "live-results.tgz") as archive:
        names = archive.getnames()
    assert "live/lf-report-acc/summary.json" in names and "live/lf-cells.log" in names
    assert not [n for n in names if n.endswith(".safetensors")]  # the weights stay out
