"""LIVE_PLAN=parity rehearsed on the simulated SGLang 0.5.23 (issue 39 item 6).

One tick runs the whole plan: the FlashInfer-JIT warm-ups as bare servers, the fa3 baseline that
generates the parity sequences from the synth_retrieval eval's prompts, then every candidate as
its own sweep re-scoring exactly those ids (the A/A, the reference pair, fmha_v2 at bf16 and fp8
KV, fa3 at fp8 KV, fmha_v2 at each skip-softmax factor, and the losslessness arm: fa3 with
speculation on and off under deterministic mode, fmha_v2 on and off), then the report. Three
prompts and sixteen new tokens a sequence keep it short; the plan's structure is the lease's.
Only fmha_v2 at factor 1e6 perturbs the logits (``logit_sigma`` matched on the factor's
environment variable), so the report must tell it from the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.live_plan import run_live_plan

pytestmark = [pytest.mark.slow, pytest.mark.rehearsal, pytest.mark.timeout(600)]

WARM_UPS = ("v2", "v2-off", "v2-f", "ref")
# sweep -> (variant, KV dtype, prefill skip factor, speculative, deterministic, greedy kept)
CELLS = {
    "p-aa": ("fa3_repeat", "auto", None, True, False, False),
    "p-fa3-f": ("fa3", "fp8_e4m3", None, True, False, False),
    "p-det-on": ("fa3", "auto", None, True, True, True),
    "p-det-off": ("fa3", "auto", None, False, True, True),
    "p-ref": ("flashinfer", "auto", None, True, False, False),
    "p-v2": ("fmha_v2", "auto", 0.0, True, False, True),
    "p-v2-off": ("fmha_v2", "auto", 0.0, False, False, True),
    "p-v2-f": ("fmha_v2", "fp8_e4m3", 0.0, True, False, False),
    "p-v2-s10000": ("fmha_v2", "auto", 10000.0, True, False, False),
    "p-v2-s30000": ("fmha_v2", "auto", 30000.0, True, False, False),
    "p-v2-s100000": ("fmha_v2", "auto", 100000.0, True, False, False),
    "p-v2-s1000000": ("fmha_v2", "auto", 1000000.0, True, False, False),
}
ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
OVERRIDES = ("parity.new_tokens=16 evals.synth_retrieval.dataset.limit=3 "
             f"server.simulated.effects=[{{match:{{{ENV}:1000000}},logit_sigma:0.5}}]")  # fmt: skip


def _cell(live: Path, sweep: str) -> tuple[Path, dict[str, Any]]:
    (result,) = (live / sweep).glob("*/result.json")
    return result.parent, json.loads(result.read_text())


def _checks(summary: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    """``kind``'s check per cell, keyed by the cell's sweep folder (p-...)."""
    return {
        Path(c["folder"]).parent.name: k
        for c in summary["cells"]
        for k in c["checks"]
        if k["kind"] == kind
    }


def _check_cells(live: Path, base: Path) -> None:
    for sweep, (variant, kv, skip, spec, det, greedy) in CELLS.items():
        folder, result = _cell(live, sweep)
        assert result["status"] == "ok", (sweep, result.get("error"))
        cell = result["cell"]
        assert (cell["variant"], cell["kv_dtype"], cell["skip_softmax"]["prefill"]) == (
            variant, kv, skip
        ), sweep  # fmt: skip
        assert cell["sglang_version"] == "0.5.23"
        argv = result["server"]["argv"]
        assert ("--speculative-algorithm" in argv) is spec, sweep
        assert ("--enable-deterministic-inference" in argv) is det, sweep
        summary = json.loads((folder / "parity" / "summary.json").read_text())
        assert Path(summary["sequences_from"]).resolve() == base.resolve(), sweep
        assert summary["sequences"] == 3 and summary["metrics"]["kl_topk"]["tokens"] > 0
        assert (folder / "parity" / "greedy.jsonl").is_file() is greedy, sweep


def _check_report(report: Path) -> None:
    summary = json.loads((report / "summary.json").read_text())
    parity = _checks(summary, "parity_vs_baseline")
    assert set(parity) == set(CELLS), sorted(parity)
    verdicts = {sweep: check["verdict"] for sweep, check in parity.items()}
    # the reference pair (the plan's policy names it) sets the band and is not judged by it
    expected = {"p-v2-s1000000": "NO-GO", "p-ref": "INFO"}
    assert verdicts == {s: expected.get(s, "GO") for s in CELLS}
    assert "[sweep p-ref]" in parity["p-v2"]["numbers"]["reference_cell"]
    # p-base's ids, and p-base itself as the baseline: not the deterministic fa3 cell, which
    # ended later (the report's rule) but is left out of the baselines
    for sweep, check in parity.items():
        numbers = check["numbers"]
        assert Path(numbers["sequences_from"]).parent.name == "p-base", sweep
        assert "[sweep p-base]" in numbers["baseline_cell"], sweep
    assert parity["p-v2"]["numbers"]["paired_by"].startswith("the report's baseline")
    # fp8 is read against the bf16 exact fa3 cell whose ids it re-scored, not fa3 at fp8
    assert "parity.sequences_from names" in parity["p-v2-f"]["numbers"]["paired_by"]
    (frontier,) = summary["frontier"]
    assert [p["factor"] for p in frontier["points"]] == [0.0, 1e4, 3e4, 1e5, 1e6]
    assert frontier["largest_inside_band_factor"] == 1e5
    assert frontier["points"][-1]["skipped_fraction"] == 0.92898  # HF's, on these prompts
    lossless = _checks(summary, "lossless_vs_spec_off")
    assert set(lossless) == {"p-det-on", "p-v2"}
    fa3 = lossless["p-det-on"]
    assert fa3["verdict"] == "PASS" and fa3["numbers"]["deterministic"] is True
    assert "[sweep p-det-off]" in fa3["numbers"]["spec_off_cell"]
    v2 = lossless["p-v2"]  # trtllm_mha has no deterministic mode: shown, not judged
    assert v2["verdict"] == "INFO" and v2["numbers"]["requests"] == 3
    assert "[sweep p-v2-off]" in v2["numbers"]["spec_off_cell"]
    md = (report / "report.md").read_text()
    assert "## Parity\n" in md and "## Parity: speculation on vs off (greedy)" in md


def test_parity_plan_pairs_every_candidate_with_the_fa3_sequences(tmp_path: Path) -> None:
    run = run_live_plan(tmp_path, "parity", ["tick", "520"], 560, LIVE_PARITY_SEQUENCES="3",
                        LIVE_PARITY_OVERRIDES=OVERRIDES)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    state = tmp_path / "live" / "state"
    phases = ["p-base", *CELLS, *(f"warm-par-{w}" for w in WARM_UPS)]
    for phase in phases:
        rc = (state / f"{phase}.rc").read_text().strip()
        assert rc == "0", (phase, (tmp_path / "live" / "logs" / f"{phase}.log").read_text()[-2000:])
    for warm in WARM_UPS:
        assert (tmp_path / "live" / f"ready-par-{warm}.txt").is_file()
    live = tmp_path / "repo" / "outputs" / "live"
    base, result = _cell(live, "p-base")
    assert result["status"] == "ok" and (result["cell"]["variant"], result["cell"]["kv_dtype"]) == (
        "fa3", "auto"
    )  # fmt: skip
    rows = [json.loads(x) for x in (base / "parity" / "sequences.jsonl").read_text().splitlines()]
    assert [r["eval"] for r in rows] == ["synth_retrieval"] * 3
    assert all(len(r["prompt_ids"]) > 4000 for r in rows)  # the long retrieval prompts, whole
    assert not (base / "parity" / "summary.json").exists()  # it generated: nothing to pair
    _check_cells(live, base)
    # the report ran once every cell had ended: NO-GO (factor 1e6), so mtp-eval-report exits 1
    assert (state / "report.rc").read_text().strip() == "0"  # the phase: report, then archive
    assert "report exit 1" in (tmp_path / "live" / "logs" / "report.log").read_text()
    _check_report(live / "parity-report")
    assert (tmp_path / "live" / "live-results.tgz").is_file()
