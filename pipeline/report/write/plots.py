"""The report's plots as PNG bytes (matplotlib, Agg backend; imported only when plotting)."""

from __future__ import annotations

import io
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.judge.check_kinds import (
    ACCEPT_VS_REFERENCE,
    ACCURACY_VS_BASELINE,
    ACCURACY_VS_REFERENCE,
)
from pipeline.report.judge.drop_numbers import (
    AcceptVsReferenceNumbers,
    AccuracyVsReferenceNumbers,
    DropNumbers,
)
from pipeline.report.judge.parity_numbers import ParityNumbers, band_of
from pipeline.report.load.cells import CellRecord
from pipeline.report.write.section import skip_text, sort_key
from pipeline.results.result_types import AcceptBlock, EvalSummary

COLOURS = {
    "GO": "#2e7d32",
    "PASS": "#2e7d32",
    "OK": "#2e7d32",
    "NO REFERENCE": "#66bb6a",
    "INFO": "#66bb6a",
    "NO-GO": "#c62828",
    "FAIL": "#c62828",
    "INCONCLUSIVE": "#f9a825",
    "UNSUPPORTED": "#bdbdbd",
}
GREY = "#757575"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def pyplot() -> Any:
    """Matplotlib's pyplot on the Agg backend (imported when a plot is drawn)."""
    return _pyplot()


def png_of(fig: Any) -> bytes:
    """``fig`` as PNG bytes (the figure is closed)."""
    return _png(fig)


def _short_gpu(name: str) -> str:
    return name.replace("NVIDIA ", "").replace(" (simulated)", "*")


def _tick(cell: CellRecord) -> str:
    return f"{cell.variant}\n{cell.kv_dtype}\n{skip_text(cell)}\n{_short_gpu(cell.gpu)}"


def _title(report: Report, text: str) -> str:
    return text + (" (SIMULATED)" if report.simulated else "")


def metric_plot(report: Report, metric: str) -> bytes | None:
    """Accuracy (metric="accuracy") or accept length ("accept") per cell with 95% intervals."""
    cells = sorted((c for c in report.cells if c.status == "ok"), key=sort_key)
    evals = sorted({e for c in cells for e in c.evals})
    points = {e: [p for c in cells if (p := _point(c, e, metric))] for e in evals}
    points = {e: p for e, p in points.items() if p}
    if not points:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(points), 1, figsize=(max(6, 0.9 * len(cells) + 2), 3.4 * len(points)), squeeze=False
    )
    for ax, (name, pts) in zip(axes[:, 0], points.items(), strict=True):
        for x, (cell, y, low, high) in enumerate(pts):
            colour = COLOURS.get(report.cell_verdict(cell), GREY)
            ax.errorbar([x], [y], yerr=[[y - low], [high - y]], fmt="o", color=colour, capsize=4)
        for ref in _references(report, name, metric):
            ax.axhline(ref, linestyle="--", color="#1565c0", linewidth=1)
        ax.set_xticks(range(len(pts)), [_tick(p[0]) for p in pts], fontsize=7)
        ax.set_ylabel("accuracy" if metric == "accuracy" else "accept length (tokens / verify)")
        ax.set_title(
            _title(
                report,
                f"{name}: {ax.get_ylabel()} with 95% intervals "
                "(dashed: reference; colour: cell verdict)",
            ),
            fontsize=9,
        )
        ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def paired_plot(report: Report) -> bytes | None:
    """Accuracy change against the baseline per candidate, with the margin the verdict uses.

    Each point is the paired change (candidate minus baseline, in points) with the interval
    between the one-sided bounds of the drop; the dashed line is minus the margin: GO when the
    whole interval is above it, NO-GO when the whole interval is below it.
    """
    by_id = {c.id: c for c in report.cells}
    checks = [k for k in report.checks
              if k.kind == ACCURACY_VS_BASELINE and isinstance(k.numbers, DropNumbers)]  # fmt: skip
    evals = sorted({str(k.eval) for k in checks})
    if not evals:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(evals), 1, figsize=(max(6, 0.9 * len(checks) + 2), 3.4 * len(evals)), squeeze=False
    )
    for ax, name in zip(axes[:, 0], evals, strict=True):
        mine = sorted(
            (k for k in checks if k.eval == name), key=lambda k: sort_key(by_id[k.cell_id])
        )
        for x, check in enumerate(mine):
            n = check.numbers
            assert isinstance(n, DropNumbers)
            change, low, high = -100 * n.drop, -100 * n.upper, -100 * n.lower
            colour = COLOURS.get(check.verdict, GREY)
            ax.errorbar([x], [change], yerr=[[change - low], [high - change]], fmt="o",
                        color=colour, capsize=4)  # fmt: skip
            ax.hlines(-100 * n.margin, x - 0.4, x + 0.4, linestyle="--", color="#c62828",
                      linewidth=1)  # fmt: skip
        ax.axhline(0, color=GREY, linewidth=0.8)
        ax.set_xticks(range(len(mine)), [_tick(by_id[k.cell_id]) for k in mine], fontsize=7)
        ax.set_ylabel(f"accuracy change vs {report.tolerance.baseline} (pts)")
        ax.set_title(_title(report, f"{name}: paired change with its one-sided bounds "
                                    "(dashed red: minus the margin; colour: verdict)"),
                     fontsize=9)  # fmt: skip
        ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _point(
    cell: CellRecord, name: str, metric: str
) -> tuple[CellRecord, float, float, float] | None:
    summary = cell.evals.get(name) or EvalSummary.from_json({})
    if metric == "accuracy":
        acc, (low, high) = summary.accuracy, summary.ci95
        if acc is None:
            return None
        if low is None or high is None:  # no interval: the point alone
            low, high = acc, acc
        return cell, float(acc), float(low), float(high)
    accept = summary.accept or AcceptBlock()
    value = accept.accept_length
    if accept.status != "ok" or not value:
        return None
    half = 1.96 * float(accept.accept_length_stderr or 0.0)
    return cell, float(value), float(value) - half, float(value) + half


def _references(report: Report, name: str, metric: str) -> set[float]:
    kind = ACCURACY_VS_REFERENCE if metric == "accuracy" else ACCEPT_VS_REFERENCE
    return {
        float(c.numbers.reference)
        for c in report.checks
        if c.kind == kind
        and c.eval == name
        and isinstance(c.numbers, AccuracyVsReferenceNumbers | AcceptVsReferenceNumbers)
    }


def _versus(report: Report, cell: CellRecord) -> str:
    # The overall verdict can come from a reference check: show the paired one under it.
    found = [c.verdict for c in report.checks_of(cell) if c.kind == ACCURACY_VS_BASELINE]
    return f"\naccuracy vs {report.tolerance.baseline}: {', '.join(found)}" if found else ""


def verdict_grid(report: Report) -> bytes:
    """GPU (and model / KV dtype / skip-softmax) x variant, coloured by the cell verdict."""
    plt = _pyplot()
    cells = sorted(report.cells, key=sort_key)
    base = report.tolerance.baseline
    variants = sorted({c.variant for c in cells}, key=lambda v: (v != base, v))
    rows = list(dict.fromkeys((c.gpu, c.model, c.kv_dtype, skip_text(c)) for c in cells))
    fig, ax = plt.subplots(figsize=(1.9 * len(variants) + 3, 0.55 * len(rows) + 1.4))
    for cell in cells:
        x = variants.index(cell.variant)
        y = rows.index((cell.gpu, cell.model, cell.kv_dtype, skip_text(cell)))
        verdict = report.cell_verdict(cell)
        ax.add_patch(plt.Rectangle((x, y), 1, 1, color=COLOURS.get(verdict, GREY), ec="white"))
        ax.text(
            x + 0.5,
            y + 0.5,
            f"{verdict}{_versus(report, cell)}",
            ha="center",
            va="center",
            fontsize=7,
            color="white",
        )
    ax.set_xlim(0, len(variants))
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([i + 0.5 for i in range(len(variants))], variants)
    ax.set_yticks(
        [i + 0.5 for i in range(len(rows))],
        [f"{_short_gpu(g)} | {m} | {kv} | {s}" for g, m, kv, s in rows],
        fontsize=8,
    )
    ax.xaxis.tick_top()
    ax.set_title(
        _title(report, "Verdict per GPU x variant (* = simulated GPU)"), fontsize=9, pad=24
    )
    return _png(fig)


def parity_position_plot(report: Report) -> bytes | None:
    """Each candidate's parity divergence per context-position bin (None without parity)."""
    found = [(c, k.numbers) for c in sorted(report.cells, key=sort_key)
             for k in report.checks_of(c)
             if isinstance(k.numbers, ParityNumbers) and k.numbers.bins]  # fmt: skip
    if not found:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for cell, n in found:
        bins = [b for b in n.bins if b.mean is not None]
        ax.plot([b.low for b in bins], [b.mean for b in bins], marker="o",
                label=f"{cell.variant} {cell.kv_dtype} {skip_text(cell)}")  # fmt: skip
        if (band := band_of(n)) is not None:
            ax.axhline(band[0], color=GREY, linestyle="--", linewidth=0.8)
    ax.set_xscale("symlog", linthresh=1024)
    ax.set_xlabel("context position (bin start)")
    ax.set_ylabel(f"{found[0][1].metric} per token")
    ax.set_title(_title(report, "Parity divergence by context position (dashed: band)"))
    ax.legend(fontsize=7)
    return _png(fig)
