"""Accuracy and accept length against context length, per candidate cell, with intervals (PNG).

A row of two panels per eval with by-length checks: the paired accuracy change (points) and the
accept-length change (relative, %) per length bin, one line per candidate cell, each point with
the one-sided bounds its verdict reads; the dashed lines are minus the margin and the band.
"""

from __future__ import annotations

from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_numbers import AcceptByBinNumbers, AccuracyByBinNumbers
from pipeline.report.judge.verdicts import Check
from pipeline.report.write.bin_tables import BinNumbers, bin_checks_of, bin_numbers
from pipeline.report.write.plots import _png, _pyplot, _title
from pipeline.report.write.section import skip_text, sort_key
from pipeline.stats.by_bin import bin_order

MEASURES = (("accuracy", "accuracy change (pts)", "margin"),
            ("accept_length", "accept length change (%)", "band"))  # fmt: skip


def _length_checks(report: Report) -> list[tuple[str, Check]]:
    out = []
    for cell in sorted(report.cells, key=sort_key):
        label = f"{cell.variant} {skip_text(cell)} {cell.kv_dtype}"
        out += [
            (label, k) for k in bin_checks_of(report, cell) if bin_numbers(k).dimension == "length"
        ]
    return out


def _limit(n: BinNumbers, limit: str) -> float | None:
    # The margin (accuracy) or band (accept length) drawn as the line a drop may not cross.
    if limit == "margin" and isinstance(n, AccuracyByBinNumbers):
        return n.margin
    return n.band if limit == "band" and isinstance(n, AcceptByBinNumbers) else None


def _measure(check: Check) -> str:
    return "accept_length" if check.kind.name.startswith("accept") else "accuracy"


def bin_plot(report: Report) -> bytes | None:
    """The by-length plot, or None when no check is by context length."""
    checks = _length_checks(report)
    evals = sorted({str(k.eval) for _, k in checks})
    if not evals:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(len(evals), 2, figsize=(11, 3.2 * len(evals)), squeeze=False)
    for row, name in enumerate(evals):
        for col, (measure, ylabel, limit) in enumerate(MEASURES):
            mine = [(lab, k) for lab, k in checks if k.eval == name and _measure(k) == measure]
            _panel(axes[row, col], mine, ylabel, limit)
            axes[row, col].set_title(_title(report, f"{name}: {ylabel}"), fontsize=9)
    fig.tight_layout()
    return _png(fig)


def _panel(ax: Any, mine: list[tuple[str, Check]], ylabel: str, limit: str) -> None:
    labels = bin_order([r.label for _, k in mine for r in bin_numbers(k).bins])
    at = {label: i for i, label in enumerate(labels)}
    for offset, (legend, check) in enumerate(mine):
        n = bin_numbers(check)
        rows = [r for r in n.bins if r.change == r.change]
        xs = [at[r.label] + 0.06 * offset for r in rows]
        ys = [100 * r.change for r in rows]
        err = [[y - 100 * r.change_low for y, r in zip(ys, rows, strict=True)],
               [100 * r.change_high - y for y, r in zip(ys, rows, strict=True)]]  # fmt: skip
        ax.errorbar(xs, ys, yerr=err, fmt="o-", capsize=3, label=legend)
        if (bound := _limit(n, limit)) is not None:
            ax.axhline(-100 * bound, linestyle="--", color="#c62828", linewidth=1)
    ax.axhline(0, color="#757575", linewidth=0.8)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    if mine:
        ax.legend(fontsize=6)
