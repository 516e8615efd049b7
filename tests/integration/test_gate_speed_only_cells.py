"""A gate that judged nothing does not say GO; speed is judged where the policy sets a band.

Real ``mtp-eval`` speed-only cells (fa3, fmha_v2, and fa3 again: the A/A) on the simulated
server, whose latency table (``pipeline/simserver/timing.py``, ``h200_8b_shape``) makes fmha_v2's
prefill about 2x slower at 1k tokens; then ``mtp-eval-report`` under three policies.
"""

from __future__ import annotations

import csv
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
SPEED = [
    "evals=[]", "speed.enabled=true", "speed.prefill_tokens=[1024,4096]", "speed.repeats=5",
    "speed.decode_batches=[1]", "speed.decode_new_tokens=32",
    "server.simulated.timing_model=h200_8b_shape", "server.simulated.timing_jitter=0.03",
    "server.simulated.startup_delay_s=0.1",
]  # fmt: skip
STRICT = "speed:\n  max_slowdown: 1.05\n  phases: {decode: 1.5}\n"  # fmha_v2's prefill fails it
LOOSE = "speed:\n  phases: {prefill: 3.0}\n"  # prefill only; decode stays informational


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The speed-only sweep; its cells ran, nothing else."""
    folder = tmp_path_factory.mktemp("gate") / "sweep"
    run = run_script("mtp-eval", "-m", "backend=fa3,fmha_v2,fa3_repeat", *SPEED,
                     f"hydra.sweep.dir={folder}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return folder


def _report(sweep: Path, name: str, policy: str | None) -> subprocess.CompletedProcess[str]:
    args = [str(sweep), "--out", str(sweep.parent / name)]
    if policy is not None:
        path = sweep.parent / f"{name}.yaml"
        path.write_text(policy)
        args += ["--tolerance", str(path)]
    run = run_script("mtp-eval-report", *args, timeout=120)
    assert "internal error" not in run.stderr, run.stderr
    return run


def _speed_checks(summary: dict) -> dict[tuple[str, str], dict]:
    return {(c["variant"], k["eval"]): k for c in summary["cells"] for k in c["checks"]
            if k["kind"] == "speed_vs_baseline"}  # fmt: skip


def test_speed_only_cells_without_a_band_judge_nothing_and_exit_2(sweep: Path) -> None:
    run = _report(sweep, "plain", None)
    out = sweep.parent / "plain"
    assert run.returncode == 2, run.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "UNDECIDED" and summary["exit_code"] == 2
    assert summary["judged"] is False and summary["counts"] == {"OK": 3}
    assert any("no speed band in the policy" in line for line in summary["not_judged"])
    assert _speed_checks(summary) == {}
    assert "exit code 2: nothing was judged" in run.stdout and "NOT JUDGED" in run.stdout
    md = (out / "report.md").read_text()
    assert "**Verdict: UNDECIDED (exit code 2: nothing was judged" in md
    assert "**Not judged: speed of 1 candidate cell(s)" in md
    # fa3_repeat is the A/A: named apart, never a candidate (its own band would judge it)
    assert "speed of the A/A (" in md and "no speed band judges them" in md
    page = (out / "report.html").read_text()
    banner = page[page.index('id="verdict"') : page.index("</div>")]
    assert "nothing was judged" in banner and "no speed band in the policy" in banner
    junit = ET.parse(out / "junit.xml").getroot()
    (gate,) = [s for s in junit if s.get("name") == "mtp-eval.gate"]
    error = gate.find("testcase/error")
    assert error is not None and error.get("type") == "NOT JUDGED"
    assert junit.get("errors") == "1"


def test_a_speed_band_judges_every_shape_and_fmha_v2s_slower_prefill_is_no_go(sweep: Path) -> None:
    run = _report(sweep, "strict", STRICT)
    out = sweep.parent / "strict"
    assert run.returncode == 1, run.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judged"] is True and summary["tolerance"]["speed"]["max_slowdown"] == 1.05
    checks = _speed_checks(summary)
    shapes = {"prefill 1x1024", "prefill 1x4096", "prefill 8x1024", "decode 1x512"}
    assert {s for v, s in checks if v == "fmha_v2"} == shapes
    # Neither the baseline nor the A/A's second start: its interval is widened by the band its
    # own ratio made, so a band would judge the A/A by itself (GO, or undecided past 1.05).
    assert not [k for (v, _), k in checks.items() if v in ("fa3", "fa3_repeat")]
    assert [x for x in summary["not_judged"] if x.startswith("speed of the A/A (")]
    slow = checks[("fmha_v2", "prefill 1x1024")]
    n = slow["numbers"]
    assert slow["verdict"] == "NO-GO" and n["slowdown_low"] > 1.05 and n["max_slowdown"] == 1.05
    assert n["slowdown"] == pytest.approx(1 / n["ratio"]) and n["aa_band"] >= 1.0
    assert checks[("fmha_v2", "decode 1x512")]["numbers"]["max_slowdown"] == 1.5  # per phase
    with (out / "cells.csv").open() as f:
        rows = {r["variant"]: r for r in csv.DictReader(f)}
    assert rows["fmha_v2"]["speed_vs_baseline"] == rows["fmha_v2"]["verdict"] == "NO-GO"
    assert rows["fmha_v2"]["speed_worst_shape"] == "prefill 1x1024"
    junit = ET.parse(out / "junit.xml").getroot()
    failed = [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None]
    assert "prefill 1x1024: speed vs fa3" in failed and junit.get("failures") == str(len(failed))
    assert "NO-GO" in run.stdout and "fmha_v2" in run.stdout


def test_a_band_on_prefill_only_says_decode_was_not_judged(sweep: Path) -> None:
    run = _report(sweep, "loose", LOOSE)
    assert run.returncode == 0, run.stdout  # 2x slower is inside a 3x band
    summary = json.loads((sweep.parent / "loose" / "summary.json").read_text())
    checks = _speed_checks(summary)
    assert {k["verdict"] for k in checks.values()} == {"GO"}
    assert all(s.startswith("prefill") for _, s in checks)
    line, aa = summary["not_judged"]
    assert "no speed band for decode 1x512" in line and "NOT JUDGED" in run.stdout
    assert aa.startswith("speed of the A/A (") and "fa3_repeat" in aa


def test_a_bad_speed_band_is_refused_naming_the_key(sweep: Path) -> None:
    run = _report(sweep, "bad", "speed:\n  shapes: {'prefill 1k': 1.1}\n")
    assert run.returncode == 2 and "speed.shapes key 'prefill 1k'" in run.stderr, run.stderr
    run = _report(sweep, "bad2", "speed:\n  phases: {verify: 1.1}\n")
    assert run.returncode == 2 and "speed.phases.verify" in run.stderr, run.stderr
