"""Accuracy and accept length by context length and by category, as the report shows them.

``summary.json``'s ``by_bin`` list (one entry per by-bin check: the cell, the eval, the dimension,
each bin's change with its one-sided bounds and its verdict, the multiplicity), the "By context
length" and "By category" tables (a table per candidate cell: a row per eval and bin, accuracy
and accept-length change with their intervals and verdicts), and the skip-softmax frontier per
length (a table per variant: a row per factor, a column per length bin, the worst verdict of
its evals there), where a factor GO at 4k and NO-GO at 64k reads as such.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import (
    ACCEPT_BY_CATEGORY,
    ACCEPT_BY_LENGTH,
    ByBin,
)
from pipeline.report.judge.check_numbers import (
    AcceptByBinNumbers,
    AccuracyByBinNumbers,
    BinRow,
    ByBinNumbers,
)
from pipeline.report.judge.verdicts import Check, worst
from pipeline.report.load.cells import CellRecord
from pipeline.report.write.section import Section, skip_text, sort_key, who
from pipeline.stats.by_bin import bin_order

TITLES = {"length": "By context length", "category": "By category"}
INTRO = (
    "Each bin paired with the baseline on the same questions (a question's bin: its prompt's "
    "length in the served model's tokens, or its category). Change: candidate minus baseline, "
    "accuracy in points, accept length relative, with the one-sided bounds the verdict reads. "
    "NO-GO is Holm-corrected over the bins of an eval and then across cells; GO is read per bin. "
    "A bin's NO-GO fails the cell even when the eval's aggregate is GO."
)
FRONTIER_INTRO = (
    "Cells of one variant per prefill skip-softmax factor, a column per context-length bin: the "
    "worst verdict over the evals' by-length checks (accuracy and accept length) in that bin."
)


def bin_checks_of(report: Report, cell: CellRecord) -> list[Check]:
    """The cell's by-bin checks that have bins."""
    return [k for k in report.checks_of(cell) if isinstance(k.numbers, ByBinNumbers)]


BinNumbers = AccuracyByBinNumbers | AcceptByBinNumbers


def bin_numbers(check: Check) -> BinNumbers:
    """The numbers of a by-bin check (one ``bin_checks_of`` returned)."""
    assert isinstance(check.numbers, AccuracyByBinNumbers | AcceptByBinNumbers)
    return check.numbers


def _dimension(check: Check) -> str:
    return bin_numbers(check).dimension


def _kind(check: Check) -> ByBin:
    assert isinstance(check.kind, ByBin)
    return check.kind


def _measure(check: Check) -> str:
    return "accept_length" if check.kind in (ACCEPT_BY_LENGTH, ACCEPT_BY_CATEGORY) else "accuracy"


def bin_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``by_bin``: one entry per by-bin check, its bins as shown."""
    out = []
    for cell in sorted(report.cells, key=sort_key):
        for check in bin_checks_of(report, cell):
            n = bin_numbers(check)
            bins = [{**asdict(row), "verdict": _kind(check).bin_verdict(check, row)}
                    for row in n.bins]  # fmt: skip
            positions = n.per_position if isinstance(n, AcceptByBinNumbers) else None
            out.append({
                "cell": cell.id, "gpu": cell.gpu, "model": cell.model, "variant": cell.variant,
                "kv_dtype": cell.kv_dtype, "skip_prefill": cell.skip_prefill,
                "skip_decode": cell.skip_decode, "eval": check.eval,
                "dimension": n.dimension, "measure": _measure(check),
                "change_scale": "relative" if _kind(check).log_scale else "fraction",
                "verdict": check.verdict, "baseline": n.baseline,
                "multiplicity": n.multiplicity, "bins": bins, "per_position": positions,
            })  # fmt: skip
    return out


def _interval(row: BinRow, unit: str) -> str:
    return (f"{100 * row.change:+.2f}{unit} [{100 * row.change_low:+.2f}, "
            f"{100 * row.change_high:+.2f}]")  # fmt: skip


def _cells_of(check: Check, row: BinRow | None) -> list[str]:
    if row is None:
        return ["-", "-"]
    if row.change != row.change:  # NaN: fewer than two questions
        return ["n/a", _kind(check).bin_verdict(check, row)]
    unit = "%" if _kind(check).log_scale else " pts"
    return [_interval(row, unit), _kind(check).bin_verdict(check, row)]


def _rows(checks: list[Check]) -> list[list[str]]:
    rows = []
    for name in sorted({str(k.eval) for k in checks}):
        mine = {_measure(k): k for k in checks if k.eval == name}
        by_label = {m: {r.label: r for r in bin_numbers(k).bins} for m, k in mine.items()}
        labels = bin_order([label for rows in by_label.values() for label in rows])
        for label in labels:
            found = [by_label[m].get(label) for m in by_label]
            questions = max(r.questions for r in found if r is not None)
            row = [name, label, str(questions)]
            for measure in ("accuracy", "accept_length"):
                check = mine.get(measure)
                row += _cells_of(check, by_label[measure].get(label)) if check else ["-", "-"]
            rows.append(row)
    return rows


HEADERS = ["eval", "bin", "questions", "accuracy change [bounds]", "accuracy verdict",
           "accept length change [bounds]", "accept length verdict"]  # fmt: skip


def bin_sections(report: Report, dimension: str) -> list[Section]:
    """A table per candidate cell with by-bin checks of ``dimension`` (length or category)."""
    sections: list[Section] = []
    for cell in sorted(report.cells, key=sort_key):
        checks = [k for k in bin_checks_of(report, cell) if _dimension(k) == dimension]
        if checks:
            title = f"{TITLES[dimension]}: {' / '.join(who(cell))}"
            sections.append(Section(title, HEADERS, _rows(checks), INTRO if not sections else ""))
    return sections


def _bin_verdicts(checks: Iterable[Check]) -> dict[str, str]:
    # Per bin, the worst shown verdict over the evals and both measures (which measure failed).
    found: dict[str, list[str]] = {}
    for check in checks:
        for row in bin_numbers(check).bins:
            verdict = _kind(check).bin_verdict(check, row)
            tag = f"{verdict} ({_measure(check).replace('_', ' ')}, {check.eval})"
            found.setdefault(row.label, []).append(tag if verdict == "NO-GO" else verdict)
    return {label: _worst_tag(tags) for label, tags in found.items()}


def _worst_tag(tags: list[str]) -> str:
    nogo = [t for t in tags if t.startswith("NO-GO")]
    return nogo[0] if nogo else worst(tags)


def frontier_sections(report: Report) -> list[Section]:
    """The skip-softmax frontier per length: a table per variant with by-length checks."""
    groups: dict[tuple[str, ...], list[CellRecord]] = {}
    for cell in sorted(report.cells, key=sort_key):
        if any(_dimension(k) == "length" for k in bin_checks_of(report, cell)):
            groups.setdefault((cell.gpu, cell.model, cell.variant, cell.kv_dtype), []).append(cell)
    sections: list[Section] = []
    for (gpu, model, variant, kv), cells in groups.items():
        per_cell = {c.id: _bin_verdicts(k for k in bin_checks_of(report, c)
                                        if _dimension(k) == "length")
                    for c in cells}  # fmt: skip
        labels = bin_order([label for v in per_cell.values() for label in v])
        rows = [[skip_text(c), *(per_cell[c.id].get(label, "-") for label in labels)]
                for c in cells]  # fmt: skip
        title = f"Skip-softmax frontier by context length: {variant} on {model}, {gpu}, KV {kv}"
        sections.append(Section(title, ["skip-softmax", *labels], rows, FRONTIER_INTRO))
    return sections


def frontier_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``frontier_by_length``: per candidate cell, each length bin's verdict."""
    out = []
    for cell in sorted(report.cells, key=sort_key):
        checks = [k for k in bin_checks_of(report, cell) if _dimension(k) == "length"]
        if checks:
            verdicts = {k: v.split(" (")[0] for k, v in _bin_verdicts(checks).items()}
            out.append({"cell": cell.id, "variant": cell.variant, "kv_dtype": cell.kv_dtype,
                        "gpu": cell.gpu, "model": cell.model,
                        "skip_prefill": cell.skip_prefill, "verdicts": verdicts})  # fmt: skip
    return out


def all_sections(report: Report) -> list[Section]:
    """Every table of this module, in the report's order."""
    return [*bin_sections(report, "length"), *frontier_sections(report),
            *bin_sections(report, "category")]  # fmt: skip


def metric_key(text: str) -> str:
    """A bin label as an MLflow key part: '<=4k' -> 'le4k', '>128k' -> 'gt128k'."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text.replace("<=", "le").replace(">", "gt"))


def bin_metrics(check: Check) -> dict[str, float]:
    """MLflow metrics of a by-bin check: each bin's change and bounds, under its dimension."""
    out: dict[str, float] = {}
    n = check.numbers
    if not isinstance(n, AccuracyByBinNumbers | AcceptByBinNumbers):
        return out
    for row in n.bins:
        key = f"{n.dimension}/{metric_key(row.label)}/{_measure(check)}"
        changes = {"change": row.change, "change_low": row.change_low,
                   "change_high": row.change_high}  # fmt: skip
        for field, value in changes.items():
            if math.isfinite(value):
                out[f"{key}_{field}/{check.eval}"] = float(value)
    return out
