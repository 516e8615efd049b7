"""Baselines from elsewhere: the cells ``--baseline-dir`` brought in, shown as baselines only.

They are read so that the candidates of the sweeps under test have baselines; they are not
judged and no verdict counts them. ``summary.json``'s ``baselines`` list, the report's
"Baselines from elsewhere" table and a headline line say which they are and whom they served.
"""

from __future__ import annotations

from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_numbers import Numbers, SpeedNumbers
from pipeline.report.judge.drop_numbers import AccuracyVsBaselineNumbers
from pipeline.report.load.cells import CellRecord
from pipeline.report.write.section import Section, sort_key

INTRO = (
    "Cells read from --baseline-dir outside the folders under test: each serves as a baseline "
    "for the candidates that paired with it; none is judged, and no verdict or exit code counts "
    "them."
)


def baseline_folder(numbers: Numbers) -> str | None:
    """The baseline folder a check paired with (accuracy or speed; None for the rest)."""
    if isinstance(numbers, AccuracyVsBaselineNumbers | SpeedNumbers):
        return numbers.baseline_folder
    return None


def used_by(report: Report, base: CellRecord) -> list[str]:
    """The labels of the cells under test that paired with ``base`` (accuracy or speed)."""
    folder = str(base.folder or base.id)
    by_id = {c.id: c for c in report.cells}
    found = {by_id[k.cell_id].label for k in report.checks
             if baseline_folder(k.numbers) == folder}  # fmt: skip
    found |= {r.cell.label for r in report.speed if r.baseline is base}
    return sorted(found)


def baselines_line(report: Report) -> str:
    """The headline's line on them (empty when there are none)."""
    if not report.baselines:
        return ""
    dirs = ", ".join(report.baseline_dirs)
    return (
        f"Baselines from elsewhere: {len(report.baselines)} cell(s) of --baseline-dir {dirs}, "
        "read as baselines only (not judged, not in the verdict); listed under Baselines from "
        "elsewhere."
    )


def baselines_section(report: Report) -> list[Section]:
    """The "Baselines from elsewhere" table (none when there are none)."""
    if not report.baselines:
        return []
    headers = ["cell", "status", "baseline for", "folder"]
    section = Section("Baselines from elsewhere (not judged)", headers, intro=INTRO)
    for cell in sorted(report.baselines, key=sort_key):
        users = used_by(report, cell)
        shown = ", ".join(users) if users else "no cell under test"
        section.rows.append([cell.label, cell.status.upper(), shown, str(cell.folder or "(none)")])
    return [section]


def baseline_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``baselines`` list: each such cell and the cells it served."""
    return [_entry(report, cell) for cell in sorted(report.baselines, key=sort_key)]


def _entry(report: Report, cell: CellRecord) -> dict[str, Any]:
    return {"id": cell.id, "label": cell.label, "variant": cell.variant, "status": cell.status,
            "folder": str(cell.folder or ""), "baseline_for": used_by(report, cell)}  # fmt: skip
