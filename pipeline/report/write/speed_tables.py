"""The speed rows as the report shows them: ``summary.json``'s ``speed`` list and the Speed tables.

One table per GPU, model, SGLang release, KV dtype and skip-softmax setting: a row per variant, a
column per shape, each candidate's cell ``ratio [low, high]`` (its baseline's median cost over its
own, 95% bootstrap interval; above 1: faster), the baseline's its median time; beside them each
variant's accuracy verdict from the same report.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.costs import mem_fraction_of, release_of
from pipeline.report.speed.ratios import SpeedRow, kv_pool
from pipeline.report.speed.restart_noise import beyond
from pipeline.report.write.section import Section, skip_text, sort_key
from pipeline.results.speed_block import PREFILL, SpeedPoint

INTRO = (
    "Measured on each cell's own server after its evals (speed), timed by the server itself "
    "(meta_info, --enable-metrics). A candidate's cell is its baseline's median cost over its "
    "own with a 95% bootstrap interval over the repeats (above 1: faster); the cost is the "
    "prefill time, or for decode the time per decoded token. The baseline's cell is its "
    "median time (prefill span, or decode span: tokens/s in summary.json)."
)


SAME_KERNELS = "same kernels as the baseline"
SAME_KERNELS_SAID = (
    f"A ratio marked '{SAME_KERNELS}' is of a phase in which the variant ran the baseline's own "
    "kernels (it differs in another phase): it measures two server starts, not a kernel."
)


def shape_order(point: SpeedPoint) -> tuple[bool, int, int]:
    """Prefill before decode, then by batch, then by prompt length: the run order."""
    return point.phase != PREFILL, point.batch, point.prompt_tokens


def _ratio_text(row: SpeedRow) -> str:
    if row.baseline is None and row.note == "the baseline":
        return "-" if row.median_ms is None else f"{row.median_ms:.1f} ms"
    if row.ratio is None or row.ratio_ci is None:
        return "-"
    same = f" ({SAME_KERNELS})" if row.same_kernels else ""
    return ratio_text(row.ratio, row.ratio_ci, row.aa_band, row.aa_pair) + same


def ratio_text(
    ratio: float, ci: tuple[float, float], aa_band: float | None, aa_pair: bool = False
) -> str:
    """``0.930 [0.917, 0.963]``, then ``slower`` / ``within the A/A`` where an A/A measured it.

    The A/A's own ratio says ``the A/A itself``: it is the band, never judged by it.
    """
    said = beyond(ci, aa_band, aa_pair)
    return f"{ratio:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" + (f" {said}" if said else "")


def speed_entry(report: Report, row: SpeedRow) -> dict[str, Any]:
    """One ``summary.json`` ``speed`` entry: a variant, KV dtype, shape, its figures and ratio."""
    cell, point = row.cell, row.point
    return {
        "cell": cell.label, "cell_id": cell.id, "gpu": cell.gpu, "model": cell.model,
        "variant": cell.variant, "kv_dtype": cell.kv_dtype,
        "skip_softmax": {"prefill": cell.skip_prefill, "decode": cell.skip_decode},
        "simulated": cell.simulated, "phase": point.phase, "batch": point.batch,
        "tokens": point.prompt_tokens, "new_tokens": point.new_tokens,
        "repeats": len(point.times_ms), "median_ms": row.median_ms,
        "spread_ms": list(row.spread_ms) if row.spread_ms else None, "spread": "min_max",
        "tokens_per_s": row.tokens_per_s, "accept_length": point.accept_length,
        "baseline": row.baseline.label if row.baseline is not None else None,
        "baseline_id": row.baseline.id if row.baseline is not None else None,
        "ratio": row.ratio, "ratio_ci95": list(row.ratio_ci) if row.ratio_ci else None,
        "aa_band": row.aa_band, "beyond_aa": beyond(row.ratio_ci, row.aa_band, row.aa_pair),
        "same_kernels_as_baseline": row.same_kernels,
        "note": row.note, "accuracy_verdict": report.accuracy_verdict(cell),
        "server_warnings": [str(w.get("kind")) for w in speed_warnings(cell)],
        "sglang_version": release_of(cell), "kv_pool_tokens": kv_pool(cell),
        "mem_fraction_static": mem_fraction_of(cell),
    }  # fmt: skip


def speed_warnings(cell: CellRecord) -> tuple[Mapping[str, Any], ...]:
    """The warnings the cell's server logged during its speed phase."""
    speed = cell.result.speed
    return speed.log_warnings if speed is not None else ()


# speed.csv: one row per summary.json speed entry, the pairs split in two columns each.
CSV_COLUMNS = [
    "gpu", "model", "variant", "kv_dtype", "skip_prefill", "skip_decode", "phase", "batch",
    "tokens", "new_tokens", "repeats", "median_ms", "min_ms", "max_ms", "tokens_per_s",
    "accept_length", "ratio", "ratio_low", "ratio_high", "aa_band", "beyond_aa",
    "same_kernels_as_baseline", "baseline",
    "accuracy_verdict", "note", "server_warnings",
]  # fmt: skip


def _csv_row(entry: dict[str, Any]) -> dict[str, Any]:
    spread, interval = entry["spread_ms"] or ["", ""], entry["ratio_ci95"] or ["", ""]
    skip = entry["skip_softmax"]
    row = {k: "" if entry.get(k) is None else entry[k] for k in CSV_COLUMNS if k in entry}
    warnings = ";".join(entry["server_warnings"])
    return {**row, "skip_prefill": skip["prefill"], "skip_decode": skip["decode"],
            "min_ms": spread[0], "max_ms": spread[1], "ratio_low": interval[0],
            "ratio_high": interval[1], "server_warnings": warnings}  # fmt: skip


def render_speed_csv(report: Report) -> str | None:
    """speed.csv text, or None when no cell ran a speed phase (then no file is written)."""
    entries = speed_entries(report)
    if not entries:
        return None
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(_csv_row(e) for e in entries)
    return out.getvalue()


def speed_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``speed`` list, in the order of the report's tables."""
    rows = sorted(report.speed, key=lambda r: (sort_key(r.cell), shape_order(r.point)))
    return [speed_entry(report, row) for row in rows]


def warning_lines(rows: list[SpeedRow]) -> list[str]:
    """What the servers logged, then what their releases cost, that changes what a time means."""
    cells = sorted({r.cell.id: r.cell for r in rows}.values(), key=sort_key)
    logged = [
        f"Server log: {cell.label}: {w.get('meaning')} (SGLang "
        f"{cell.result.cell.sglang_version}, logged {w.get('count')} times: {w.get('line')})."
        for cell in cells
        for w in speed_warnings(cell)
    ]
    notes = {
        note for cell in cells if cell.result.speed for note in cell.result.speed.release_notes
    }
    return logged + [f"Release: {note}." for note in sorted(notes)]


def prompts_line(cells: list[CellRecord]) -> str:
    """What the section's prompts were (speed.prompts), so a reader knows the attention timed."""
    said: dict[str, list[str]] = {}
    for cell in cells:
        if cell.result.speed:
            said.setdefault(cell.result.speed.prompts, []).append(cell.label)
    if len(said) <= 1:
        return "".join(f"Prompts: {text}." for text in said)
    parts = [f"{', '.join(labels)}: {text}" for text, labels in said.items()]
    return "Prompts differ between the variants: " + "; ".join(parts) + "."


def speed_sections(report: Report) -> list[Section]:
    """The Speed tables (none when no cell ran a speed phase)."""
    groups: dict[tuple[str, ...], list[SpeedRow]] = {}
    for row in report.speed:
        cell = row.cell
        key = (cell.gpu, cell.model, release_of(cell) or "?", cell.kv_dtype, skip_text(cell))
        groups.setdefault(key, []).append(row)
    return [_section(report, key, rows) for key, rows in sorted(groups.items())]


def _section(report: Report, key: tuple[str, ...], rows: list[SpeedRow]) -> Section:
    gpu, model, release, kv, skip = key
    shapes = sorted({r.point.key: r.point for r in rows}.values(), key=shape_order)
    columns = [p.label for p in shapes]
    on = "SGLang not recorded" if release == "?" else f"SGLang {release}"
    title = f"Speed: {model} on {gpu}, {on}, KV {kv}, {skip}"
    cells = sorted({r.cell.id: r.cell for r in rows}.values(), key=sort_key)
    same = [SAME_KERNELS_SAID] if any(r.same_kernels for r in rows) else []
    said = " ".join([prompts_line(cells), report.restart.said(cells), *same, *warning_lines(rows)])
    section = Section(
        title, ["variant", "accuracy verdict", *columns], intro=f"{INTRO} {said}".strip()
    )
    for cell in cells:
        mine = {r.point.key: r for r in rows if r.cell.id == cell.id}
        texts = [_ratio_text(mine[p.key]) if p.key in mine else "-" for p in shapes]
        section.rows.append([_row_label(cell, cells), report.accuracy_verdict(cell), *texts])
    return section


def _row_label(cell: CellRecord, cells: list[CellRecord]) -> str:
    """The cell's label, with its KV pool where the table has its variant at several pools."""
    pools = {kv_pool(c) for c in cells if c.variant == cell.variant}
    pool = kv_pool(cell)
    return f"{cell.label}, KV pool {pool:,} tokens" if len(pools) > 1 and pool else cell.label
