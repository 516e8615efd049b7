"""Remake committed live reports with this checkout's ``mtp-eval-report``, as the index lists them.

    python -m benchmarks.live_h200.rebuild_report signoff-0.5.23/report [--html DIR]
    python -m benchmarks.live_h200.rebuild_report --all

When a rule of the report changes, the committed reports must say what the new rule says of the
same measurements. Each report's sources (``benchmarks/results/live-h200/index.json``) are laid
out in a scratch folder at the paths its committed ``summary.json`` names as inputs
(``live_index.lay_out``), the report is made with those inputs in their order and the index's
options, and ``report.md``, ``summary.json``, ``cells.csv`` and ``speed.csv`` (when made) replace
the committed ones. Prints each report's exit code; what changed is for ``git diff`` to show (a
rebuild changes ``generated_at`` and the checkout's path, no more). The HTML page and the JUnit
file are made from the same summary and are not committed (every device call carries the tracked
tree beside a 16-MiB chunk in 64 MiB; they were 5.3 MB of it): ``--html DIR`` writes them to
``DIR/<run>/<report>/``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.live_h200.live_index import Report, lay_out, reports

COPIED = ("report.md", "summary.json", "cells.csv", "speed.csv")


def make(report: Report, work: Path, html: bool = False) -> tuple[int, Path]:
    """Run ``mtp-eval-report`` over the report's inputs laid out in ``work``; its exit and out
    (``html``: with the HTML page, which is not committed)."""
    inputs = lay_out(report, work)
    script = str(Path(sys.executable).with_name("mtp-eval-report"))
    out = work / "report-out"
    argv = [script, *inputs, *report.options, "--out", str(out)]
    argv += [] if html else ["--no-html"]
    code = subprocess.run(argv, cwd=work, check=False).returncode
    return code, out


def rebuild(report: Report, html: Path | None = None) -> int:
    """Make the report in a scratch folder and copy its files over the committed ones (the HTML
    page and JUnit file into ``html/<run>/<report>/`` when given)."""
    with tempfile.TemporaryDirectory() as tmp:
        code, out = make(report, Path(tmp), html is not None)
        for name in COPIED:
            if (out / name).exists():
                shutil.copy(out / name, report.path / name)
        if html is not None:
            (html / report.label).mkdir(parents=True, exist_ok=True)
            for name in ("report.html", "junit.xml"):
                shutil.copy(out / name, html / report.label / name)
    return code


def main(argv: list[str]) -> int:
    """Rebuild the reports named (``RUN/REPORT``), or every rebuildable one with ``--all``."""
    html = None
    if "--html" in argv:
        at = argv.index("--html")
        if at + 1 >= len(argv):
            print("--html needs a folder", file=sys.stderr)
            return 2
        html, argv = Path(argv[at + 1]), argv[:at] + argv[at + 2 :]
    listed = {r.label: r for r in reports()}
    chosen = [r for r in listed.values() if r.rebuild] if argv == ["--all"] else []
    for label in [] if chosen else argv:
        if label.rstrip("/") not in listed:
            print(f"{label}: not in index.json; one of {sorted(listed)}", file=sys.stderr)
            return 2
        chosen.append(listed[label.rstrip("/")])
    for report in chosen:
        code = rebuild(report, html)
        ok = "as committed" if code == report.exit_code else f"committed {report.exit_code}"
        print(f"{report.label}: mtp-eval-report exit code {code} ({ok})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
