"""Every committed live report rebuilds to itself, as ``benchmarks/results/live-h200/index.json``
lists it; the index covers every run folder and report, and INDEX.md is printed from it.

One parametrized test per report: its sources laid out as the committed report read them
(``live_index.lay_out``), this checkout's ``mtp-eval-report`` run with the index's options, and
the exit code, ``summary.json``, ``cells.csv``, ``speed.csv`` and ``report.md`` compared with the
committed files, with only the time of making and the checkout's path set aside. A rule change
that moves a committed verdict, number or sentence fails here: remake the reports with
``python -m benchmarks.live_h200.rebuild_report --all`` and say in the commit what moved.
What each run shows beyond its report is checked in ``test_live_run_facts.py``.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks.live_h200 import live_index
from tests.helpers.cells import console_script

pytestmark = pytest.mark.integration

REBUILT = [r for r in live_index.reports() if r.rebuild]
COMPARED = ("summary.json", "cells.csv", "speed.csv", "report.md")


def _normalized(folder: Path, name: str) -> str:
    """The file's text with the time it was made and the checkout it was made in set aside."""
    summary = json.loads((folder / "summary.json").read_text())
    policy = summary["tolerance"]["file"]  # in the checkout's conf/ or a run's own folder
    anchor = "/conf/tolerance/" if "/conf/tolerance/" in policy else "/benchmarks/results/"
    root = policy[: policy.index(anchor) + 1]
    text = (folder / name).read_text().replace(root, "<repo>/")
    text = re.sub(r'"generated_at": "[^"]*"', '"generated_at": null', text)
    return re.sub(r"generated \d{4}-\d\d-\d\dT[\d:+]+\.", "generated <time>.", text)


# The last bits of a float move with the numpy/scipy a fresh install resolves (scipy 1.17 changed
# 2e-16 of a Holm-adjusted p on 2026-12-06; a clean clone on 2026-12-07 moved a 4e-6 parity figure
# by 1e-15). Rounding both sides is not enough (a value beside a rounding edge lands on either
# side), so long floats are compared with a relative tolerance and the text around them exactly.
_FULL_FLOAT = re.compile(r"-?\d+\.\d{10,}(?:e[-+]?\d+)?")


def _assert_same(rebuilt: str, committed: str, why: str) -> None:
    assert _FULL_FLOAT.sub("<f>", rebuilt) == _FULL_FLOAT.sub("<f>", committed), why
    pairs = zip(_FULL_FLOAT.findall(rebuilt), _FULL_FLOAT.findall(committed), strict=True)
    moved = [(a, b) for a, b in pairs if not math.isclose(float(a), float(b), rel_tol=1e-9)]
    assert not moved, f"{why}: {moved[:5]}"


@pytest.mark.parametrize("report", REBUILT, ids=[r.label for r in REBUILT])
def test_the_committed_report_rebuilds_to_itself(report: live_index.Report, tmp_path: Path):
    inputs = live_index.lay_out(report, tmp_path)
    out = tmp_path / "report-out"
    argv = [console_script("mtp-eval-report"), *inputs, *report.options, "--out", str(out)]
    argv.append("--no-html")  # not compared: its plots and questions view were half the time
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    committed = json.loads((report.path / "summary.json").read_text())
    assert run.returncode == report.exit_code == committed["exit_code"], run.stderr[-2000:]
    for name in COMPARED:
        if (report.path / name).exists() or (out / name).exists():
            why = (
                f"{report.label}/{name} differs from a rebuild: "
                f"python -m benchmarks.live_h200.rebuild_report {report.label}, then git diff"
            )
            _assert_same(_normalized(out, name), _normalized(report.path, name), why)


def test_index_md_is_printed_from_index_json():
    assert (live_index.LIVE / "INDEX.md").read_text() == live_index.markdown(), (
        "INDEX.md is stale: python benchmarks/live_h200/live_index.py --write"
    )


def test_every_run_folder_and_report_is_in_the_index_with_its_own_readme():
    runs = live_index.load()
    derived = {d["file"].rstrip("/") for d in json.loads(live_index.INDEX.read_text())["derived"]}
    folders = {p.name for p in live_index.LIVE.iterdir() if p.is_dir()}
    assert folders == {r.folder for r in runs} | (derived & folders)
    for run in runs:
        assert (live_index.LIVE / run.folder / "README.md").is_file(), run.folder
        assert run.status.startswith(("current", "superseded by ")), run.folder
        listed = {r.name for r in run.reports}
        made = {p.parent.name for p in (live_index.LIVE / run.folder).glob("*/summary.json")}
        assert made == listed, f"{run.folder}: reports {sorted(made)}, index {sorted(listed)}"
        if run.sglang != "-":  # every run on SGLang names the kernel builds it ran
            assert "sglang-kernel" in run.kernels and "torch" in run.kernels, run.folder
