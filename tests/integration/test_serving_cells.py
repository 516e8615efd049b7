"""The serving phase end to end: real ``mtp-eval`` cells on the simulated server, then the report.

fa3 and fmha_v2 with speculation, fa3 again (the A/A), and fa3 with ``serving.speculation=false``
run a concurrency sweep over two buckets on their own servers, whose latency table
(``pipeline/simserver/timing.py``) gives speculation a speed-up alone that shrinks under load;
the report must show the levels, the ratios and speculation's own speed-up.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from pipeline.report.speed.restart_noise import AA, FASTER, SLOWER, WITHIN
from pipeline.report.write.summary_json import read_summary
from pipeline.results.result_schema import shape_problems
from pipeline.results.result_types import CellResult
from tests.helpers.cells import run_script

SERVING = [
    "evals=[]", "serving.enabled=true", "serving.concurrency=[1,4,16]",
    "serving.buckets=[512,2048]", "serving.output_tokens=64", "serving.requests=12",
    "server.simulated.timing_model=h200_8b_shape", "server.simulated.startup_delay_s=0.1",
]  # fmt: skip


@pytest.fixture(scope="module")
def serving_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Spec-on fa3, fmha_v2, fa3_repeat and spec-off fa3, reported together."""
    root = tmp_path_factory.mktemp("serving")
    on = run_script("mtp-eval", "-m", "backend=fa3,fmha_v2,fa3_repeat", *SERVING,
                    f"hydra.sweep.dir={root / 'on'}")  # fmt: skip
    assert on.returncode == 0, on.stdout[-2000:] + on.stderr[-2000:]
    off = run_script("mtp-eval", "-m", "backend=fa3", "serving.speculation=false", *SERVING,
                     f"hydra.sweep.dir={root / 'off'}")  # fmt: skip
    assert off.returncode == 0, off.stdout[-2000:] + off.stderr[-2000:]
    report = run_script("mtp-eval-report", str(root / "on"), str(root / "off"),
                        "--out", str(root / "report"), timeout=120)  # fmt: skip
    assert report.returncode == 2, report.stdout[-2000:] + report.stderr[-2000:]  # nothing judged
    return root


def _results(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*/result.json"))]


def test_each_cell_writes_a_typed_serving_block(serving_sweep: Path) -> None:
    for data in _results(serving_sweep / "on") + _results(serving_sweep / "off"):
        assert data["status"] == "ok" and shape_problems(data) == {}
        block = CellResult.from_json(data).serving
        assert block is not None and block.wall_s is not None
        assert {p.key for p in block.points} == {(b, c) for b in (512, 2048) for c in (1, 4, 16)}
        for p in block.points:
            assert p.errors == 0 and p.requests == max(12, 2 * p.concurrency)
            assert p.prompt_tokens_mean is not None and p.prompt_tokens_mean >= p.bucket
            assert p.ttft_ms["p50"] <= p.ttft_ms["p99"] and p.itl_ms["p50"] > 0
            # The server's own counter saw exactly the tokens the client counted (cross-check).
            assert p.metrics["sglang:generation_tokens_total"] == 64 * p.requests
            assert (p.accept_length is not None) is block.speculation


def test_the_speculation_off_cell_launched_without_speculation(serving_sweep: Path) -> None:
    (off,) = _results(serving_sweep / "off")
    assert off["serving"]["speculation"] is False
    assert "--speculative-algorithm" not in off["server"]["argv"]
    (on,) = [d for d in _results(serving_sweep / "on") if d["cell"]["variant"] == "fa3"]
    assert "--speculative-algorithm" in on["server"]["argv"]


def test_the_report_shows_levels_ratios_and_speculation_s_speed_up(serving_sweep: Path) -> None:
    out = serving_sweep / "report"
    entries = read_summary(out / "summary.json")["serving"]
    assert len(entries) == 4 * 6
    fa3 = {(e["bucket"], e["concurrency"]): e for e in entries
           if e["variant"] == "fa3" and e["speculation"]}  # fmt: skip
    # Alone, speculation pays by about the accept length over the draft's cost (the table's 1.5;
    # per user, which leaves the prefill and HTTP out, well clear of a loaded host's noise).
    assert all(fa3[(b, 1)]["spec_user_speedup"] > 1.15 for b in (512, 2048)), fa3
    repeat = [e for e in entries if e["variant"] == "fa3_repeat"]
    assert all(e["ratio"] and e["aa_band"] for e in repeat)  # the A/A pair sets the band
    rows = list(csv.DictReader((out / "serving.csv").open()))
    assert len(rows) == len(entries) and rows[0]["ttft_p50_ms"]
    md = (out / "report.md").read_text()
    assert "## Serving: tiny-sim" in md and "## Where speculation stops paying" in md
    assert "serving: throughput against per-user speed" in (out / "report.html").read_text()


def test_the_a_a_row_is_the_a_a_itself_never_faster_or_slower(serving_sweep: Path) -> None:
    # fa3_repeat over fa3 is the pair the band is made of: its ratio is the band up to the last
    # bit, which read "1.031 faster" where `ratio > band` met a rounding of the same quotient.
    out = serving_sweep / "report"
    entries = read_summary(out / "summary.json")["serving"]
    repeat = [e for e in entries if e["variant"] == "fa3_repeat"]
    assert len(repeat) == 6 and {e["beyond_aa"] for e in repeat} == {AA}
    assert all(max(e["ratio"], 1 / e["ratio"]) <= e["aa_band"] * (1 + 1e-9) for e in repeat)
    v2 = {e["beyond_aa"] for e in entries if e["variant"] == "fmha_v2"}
    assert v2 and v2 <= {FASTER, SLOWER, WITHIN}  # a candidate is still read against the band
    with (out / "serving.csv").open() as f:
        said = {r["beyond_aa"] for r in csv.DictReader(f) if r["variant"] == "fa3_repeat"}
    assert said == {AA}
    md = (out / "report.md").read_text().splitlines()
    lines = [x for x in md if x.startswith("| fa3_repeat")]
    assert len(lines) == 6 and all(AA in x for x in lines), lines
    assert not [x for x in lines if " faster |" in x or " slower |" in x], lines


def test_speculation_off_is_refused_for_an_accuracy_cell(tmp_path: Path) -> None:
    run = run_script("mtp-eval", "serving.enabled=true", "serving.speculation=false",
                     f"hydra.run.dir={tmp_path}")  # fmt: skip
    assert run.returncode != 0
    assert "serving.speculation=false" in run.stdout + run.stderr


def test_a_serving_band_is_judged_against_the_a_a(serving_sweep: Path, tmp_path: Path) -> None:
    policy = tmp_path / "serving.yaml"
    policy.write_text('baseline: fa3\nserving:\n  levels: {"1": 3.0, "4x512": 0.5}\n')
    out = tmp_path / "report"
    run = run_script("mtp-eval-report", str(serving_sweep / "on"), str(serving_sweep / "off"),
                     "--tolerance", str(policy), "--out", str(out), timeout=120)  # fmt: skip
    cells = read_summary(out / "summary.json")["cells"]
    by = {(cell["variant"], c["eval"]): c for cell in cells for c in cell["checks"]
          if c["kind"] == "speed_vs_baseline"}  # fmt: skip
    checks = list(by.values())
    # fmha_v2, judged on fa3's A/A band at its scope: a 3x band holds at concurrency 1, and no
    # level is 2x faster at 4 x 512.
    assert by[("fmha_v2", "serving c1 x 512 (spec on)")]["verdict"] == "GO"
    assert by[("fmha_v2", "serving c4 x 512 (spec on)")]["verdict"] == "NO-GO"
    assert {c["verdict"] for c in checks} <= {"GO", "NO-GO", "INCONCLUSIVE", "NO BASELINE"}
    # fa3_repeat is the A/A: its band is its own, so no band judges it, and the report says so.
    assert not [c for (variant, _), c in by.items() if variant == "fa3_repeat"]
    said = read_summary(out / "summary.json")["not_judged"]
    aa = [line for line in said if line.startswith("speed of the A/A (")]
    assert len(aa) == 1 and "fa3_repeat" in aa[0] and "no speed band judges them" in aa[0], said
    assert not [line for line in said if line.startswith("fa3_repeat") and "A/A" not in line]
    assert run.returncode == 1, run.stdout[-2000:]  # a NO-GO


def test_cells_that_served_other_prompts_are_never_paired(
    serving_sweep: Path, tmp_path: Path
) -> None:
    # The speculation-off cell as if it had served an eval's prompts: no speed-up against it.
    off = tmp_path / "off"
    shutil.copytree(serving_sweep / "off", off)
    (result,) = off.glob("*/result.json")
    data = json.loads(result.read_text())
    data["serving"]["prompts"] = "eval:longctx_niah_single, cut to each bucket, as token ids"
    result.write_text(json.dumps(data))
    out = tmp_path / "report"
    run = run_script("mtp-eval-report", str(serving_sweep / "on"), str(off), "--out", str(out),
                     timeout=120)  # fmt: skip
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    entries = read_summary(out / "summary.json")["serving"]
    fa3 = [e for e in entries if e["variant"] == "fa3" and e["speculation"]]
    assert fa3 and all(e["spec_user_speedup"] is None for e in fa3)
    # the off cell has no speculation-off baseline of its own prompts either
    assert all(e["ratio"] is None for e in entries if not e["speculation"])


def test_cells_on_other_cpu_counts_are_named_beside_their_ratios(
    serving_sweep: Path, tmp_path: Path
) -> None:
    # Each cell records the CPUs it (and the server and client it started) could run on.
    usable = len(os.sched_getaffinity(0))
    results = _results(serving_sweep / "on") + _results(serving_sweep / "off")
    assert {d["provenance"]["host"]["cpus"] for d in results} == {usable}
    # The speculation-off cell as if a taskset had pinned it to fewer: fa3's speed-up over it
    # and the table say so (a small model's server is CPU-bound).
    off = tmp_path / "off"
    shutil.copytree(serving_sweep / "off", off)
    (result,) = off.glob("*/result.json")
    data = json.loads(result.read_text())
    data["provenance"]["host"]["cpus"] = usable + 6
    result.write_text(json.dumps(data))
    out = tmp_path / "report"
    run = run_script("mtp-eval-report", str(serving_sweep / "on"), str(off), "--out", str(out),
                     "--no-html", timeout=120)  # fmt: skip
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    with (out / "serving.csv").open() as f:
        rows = list(csv.DictReader(f))
    spec_on = [r for r in rows if r["variant"] == "fa3" and r["speculation"] == "True"]
    want = f"{usable} CPUs against its speculation-off cell's {usable + 6}"
    assert spec_on and all(want in r["note"] for r in spec_on)
    assert not any("CPUs against" in r["note"] for r in rows if r["variant"] == "fmha_v2")
    assert f"CPUs differ between these cells ({usable} for " in (out / "report.md").read_text()
