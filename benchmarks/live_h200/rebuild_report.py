"""Remake a committed live run's report with this checkout's ``mtp-eval-report``.

    python -m benchmarks.live_h200.rebuild_report benchmarks/results/live-h200/signoff-0.5.23
    python -m benchmarks.live_h200.rebuild_report RUN -- --baseline-dir frontier-base ...

When a rule of the report changes, the committed reports must say what the new rule says of the
same measurements. The run's ``cells/`` and ``samples.tar.xz`` are unpacked into a scratch
folder at the paths the committed ``report/summary.json`` names as its inputs (so the cell
folders read as they did), the report is made with those inputs in their order and the options
after ``--`` (the ones the run's README or test names), and ``report.md``, ``summary.json``,
``cells.csv``, ``speed.csv`` (when made) and ``html-junit.tar.xz`` replace the committed ones.
Prints the report's exit code; what changed is for ``git diff`` to show.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

COPIED = ("report.md", "summary.json", "cells.csv", "speed.csv")


def scratch_inputs(run: Path, work: Path) -> list[str]:
    """Lay the run's sweeps out under ``work`` as the committed report read them."""
    inputs = [str(p) for p in json.loads((run / "report/summary.json").read_text())["inputs"]]
    unpacked = work / ".unpacked"
    shutil.copytree(run / "cells", unpacked)
    with tarfile.open(run / "samples.tar.xz") as tar:
        tar.extractall(unpacked, filter="data")
    for given in inputs:
        target = work / given
        target.parent.mkdir(parents=True, exist_ok=True)
        (unpacked / Path(given).name).rename(target)
    return inputs


def rebuild(run: Path, options: list[str]) -> int:
    """Make the report in a scratch folder and copy its files over the committed ones."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inputs = scratch_inputs(run, work)
        report = str(Path(sys.executable).with_name("mtp-eval-report"))
        out = work / "report-out"
        argv = [report, *inputs, *options, "--out", str(out)]
        code = subprocess.run(argv, cwd=work, check=False).returncode
        for name in COPIED:
            if (out / name).exists():
                shutil.copy(out / name, run / "report" / name)
        with tarfile.open(run / "report/html-junit.tar.xz", "w:xz") as tar:
            for name in ("report.html", "junit.xml"):
                tar.add(out / name, arcname=name)
    return code


def main() -> None:
    args = sys.argv[1:]
    split = args.index("--") if "--" in args else len(args)
    run, options = Path(args[0]).resolve(), args[split + 1 :]
    print(f"mtp-eval-report exit code {rebuild(run, options)}")


if __name__ == "__main__":
    main()
