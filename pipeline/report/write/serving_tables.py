"""The serving rows as the report shows them: summary.json, tables, serving.csv, a plot.

``summary.json``'s ``serving`` list, the Serving tables, ``serving.csv`` and the
throughput-against-per-user-speed plot (issue 42).

One table per GPU, model and SGLang release: a row per cell, bucket and concurrency with its
throughput per GPU, tokens/s per user, TTFT and inter-token latency, accept length under load,
its throughput ratio to the baseline (against the A/A band) and speculation's own speed-up; then
where speculation stops paying, per variant and bucket.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.load.cells import CellRecord
from pipeline.report.speed.costs import release_of
from pipeline.report.speed.serving import ServingRow, serving_rows, stops_paying
from pipeline.report.write.section import Section, sort_key
from pipeline.results.serving_block import ServingBlock

INTRO = (
    "Measured on each cell's own server after its evals and speed phase: a closed loop of "
    "`concurrency` streaming requests per input-length bucket (chat through the eval client; "
    "an eval's token ids through /generate), output tokens fixed, EOS ignored. Throughput is "
    "output tokens/s per GPU over the level; per user, 1 / the median request's time per "
    "output token. Ratios are over the baseline's same level (above 1: more); a level runs "
    "once, so a ratio is called faster or slower only beyond the A/A band (two starts of one "
    "configuration), none without an A/A; the A/A's own ratio, marked 'the A/A itself', is "
    "that band and never judged by it. Speculation's speed-up is the cell over its variant "
    "run with serving.speculation=false."
)
COLUMNS = [
    "cell", "gpu", "model", "sglang_version", "variant", "kv_dtype", "speculation", "bucket",
    "concurrency", "requests", "errors", "prompt_tokens_mean", "output_tokens_per_s",
    "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_p50_ms", "ttft_p90_ms",
    "ttft_p99_ms", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms", "tpot_p50_ms", "accept_length",
    "baseline", "ratio", "user_ratio", "aa_band", "beyond_aa", "spec_speedup",
    "spec_user_speedup", "metrics_generation_tokens", "note",
]  # fmt: skip


def rows_of(report: Report) -> list[ServingRow]:
    """The report's serving rows, in table order."""
    rows = serving_rows(report.cells, report.tolerance.baseline, report.tolerance.match)
    return sorted(rows, key=lambda r: (sort_key(r.cell), not r.speculation, r.point.key))


def serving_entry(row: ServingRow) -> dict[str, Any]:
    """One ``summary.json`` ``serving`` entry (``serving.csv``'s row)."""
    cell, p = row.cell, row.point
    return {
        "cell": cell.label, "gpu": cell.gpu, "model": cell.model,
        "sglang_version": release_of(cell), "variant": cell.variant, "kv_dtype": cell.kv_dtype,
        "speculation": row.speculation, "bucket": p.bucket, "concurrency": p.concurrency,
        "requests": p.requests, "errors": p.errors, "prompt_tokens_mean": p.prompt_tokens_mean,
        "output_tokens_per_s": p.output_tokens_per_s,
        "output_tokens_per_s_per_gpu": p.output_tokens_per_s_per_gpu,
        "tokens_per_s_per_user": p.tokens_per_s_per_user,
        **{f"ttft_{q}_ms": p.ttft_ms.get(q) for q in ("p50", "p90", "p99")},
        **{f"itl_{q}_ms": p.itl_ms.get(q) for q in ("p50", "p90", "p99")},
        "tpot_p50_ms": p.tpot_ms.get("p50"), "accept_length": p.accept_length,
        "baseline": row.baseline.label if row.baseline else None, "ratio": row.ratio,
        "user_ratio": row.user_ratio, "aa_band": row.aa_band, "beyond_aa": row.beyond_aa,
        "spec_speedup": row.spec_speedup, "spec_user_speedup": row.spec_user_speedup,
        "metrics_generation_tokens": p.metrics.get("sglang:generation_tokens_total"),
        "note": row.note,
    }  # fmt: skip


def serving_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``serving`` list (empty when no cell ran a serving phase)."""
    return [serving_entry(r) for r in rows_of(report)]


def render_serving_csv(report: Report) -> str | None:
    """``serving.csv``: a row per cell and level; None when no cell ran a serving phase."""
    entries = serving_entries(report)
    if not entries:
        return None
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in e.items()} for e in entries)
    return out.getvalue()


def _num(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _ratio(value: float | None, said: str | None = None) -> str:
    return "-" if value is None else f"{value:.3f}" + (f" {said}" if said else "")


def _line(row: ServingRow) -> list[str]:
    p = row.point
    return [
        row.cell.variant, row.cell.kv_dtype, "on" if row.speculation else "off",
        f"{p.bucket:,}", str(p.concurrency), _num(p.output_tokens_per_s_per_gpu),
        _num(p.tokens_per_s_per_user, 1), _num(p.ttft_ms.get("p50"), 1),
        _num(p.ttft_ms.get("p99"), 1), _num(p.itl_ms.get("p50"), 2), _num(p.itl_ms.get("p99"), 2),
        _num(p.accept_length, 2), _ratio(row.ratio, row.beyond_aa), _ratio(row.spec_speedup),
    ]  # fmt: skip


HEADERS = [
    "variant", "KV dtype", "spec", "bucket", "concurrency", "out tok/s/GPU", "tok/s/user",
    "TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms", "accept", "vs baseline",
    "spec speed-up",
]  # fmt: skip


def serving_sections(report: Report) -> list[Section]:
    """The Serving tables, one per GPU, model and release, then where speculation stops paying."""
    rows = rows_of(report)
    if not rows:
        return []
    groups: dict[tuple[str, str, str | None], list[ServingRow]] = {}
    for row in rows:
        groups.setdefault((row.cell.gpu, row.cell.model, release_of(row.cell)), []).append(row)
    out = [
        Section(f"Serving: {model} on {gpu}, SGLang {release}", HEADERS,
                [_line(r) for r in found], INTRO + _said(found) + _cpus(found) + _cost(found))
        for (gpu, model, release), found in groups.items()
    ]  # fmt: skip
    return [*out, *_stops_section(rows)]


def _by_text(rows: list[ServingRow], texts: Callable[[ServingBlock], Sequence[str]]) -> list[str]:
    """Each text the rows' cells' blocks say, naming the cells unless every cell says it."""
    cells = {r.cell.id: r.cell for r in rows if r.cell.result.serving is not None}
    where: dict[str, list[str]] = {}
    for cell in cells.values():
        for text in texts(cell.result.serving) if cell.result.serving else ():
            where.setdefault(text, []).append(cell.label)
    return [
        text if len(named) == len(cells) else f"{', '.join(named)}: {text}"
        for text, named in where.items()
    ]


def _said(rows: list[ServingRow]) -> str:
    """What the table's prompts were (``serving.prompts``) and the cells' notes (skipped levels)."""
    prompts = _by_text(rows, lambda block: [block.prompts])
    notes = _by_text(rows, lambda block: block.notes)
    said = f" Prompts: {'; '.join(prompts)}." if prompts else ""
    return said + (f" Notes: {'; '.join(notes)}." if notes else "")


def _cpus(rows: list[ServingRow]) -> str:
    """A warning when the table's cells could use different numbers of CPUs (taskset, SLURM)."""
    cells = {r.cell.id: r.cell for r in rows}
    by_count: dict[int, list[str]] = {}
    for cell in cells.values():
        if cell.result.provenance.cpus is not None:
            by_count.setdefault(cell.result.provenance.cpus, []).append(cell.label)
    if len(by_count) < 2:
        return ""
    said = "; ".join(f"{n} for {', '.join(labels)}" for n, labels in sorted(by_count.items()))
    return (
        f" CPUs differ between these cells ({said}): a small model's server is CPU-bound, so a "
        "ratio across them measures the CPUs too."
    )


def _cost(rows: list[ServingRow]) -> str:
    walls = {r.cell.id: r.cell.result.serving.wall_s for r in rows if r.cell.result.serving}
    known = [w for w in walls.values() if w is not None]
    if not known:
        return ""
    return (
        f" The phase cost {sum(known):.0f} s of server time over {len(known)} cells "
        f"(at most {max(known):.0f} s per cell)."
    )


def _order(cells: dict[str, CellRecord], key: tuple[str, int]) -> tuple[object, ...]:
    return (*sort_key(cells[key[0]]), key[1])


def _stops_section(rows: list[ServingRow]) -> list[Section]:
    stops = stops_paying(rows)
    if not stops:
        return []
    cells = {r.cell.id: r.cell for r in rows}
    lines = [
        [cells[cid].variant, cells[cid].kv_dtype, f"{bucket:,}",
         "paid at every level" if level is None else f"concurrency {level}"]
        for (cid, bucket), level in sorted(stops.items(), key=lambda kv: _order(cells, kv[0]))
    ]  # fmt: skip
    intro = (
        "Per variant and bucket, the lowest concurrency at which speculation's output "
        "tokens/s were no more than without it (the cell over its serving.speculation=false "
        "pair). On the 8B shape with dummy weights the draft accepts about one token, so its "
        "speed-up there is not a real one."
    )
    headers = ["variant", "KV dtype", "bucket", "speculation stops paying at"]
    return [Section("Where speculation stops paying", headers, lines, intro)]


def pareto_plot(report: Report) -> bytes | None:
    """Output tokens/s per GPU against tokens/s per user, a line per cell and bucket.

    Each line runs over the concurrency levels (more users: more throughput, less speed per
    user); speculation off is dashed. The front a capacity planner reads is up and to the right.
    """
    from pipeline.report.write.plots import png_of, pyplot

    rows = [r for r in rows_of(report) if r.point.tokens_per_s_per_user]
    if not rows:
        return None
    lines: dict[tuple[str, int], list[ServingRow]] = {}
    for row in rows:
        lines.setdefault((row.cell.id, row.point.bucket), []).append(row)
    fig, ax = pyplot().subplots(figsize=(8, 5))
    for found in lines.values():
        found.sort(key=lambda r: r.point.concurrency)
        first = found[0]
        spec = "on" if first.speculation else "off"
        label = f"{first.cell.variant} {first.cell.kv_dtype} spec {spec} {first.point.bucket}"
        ax.plot([r.point.tokens_per_s_per_user for r in found],
                [r.point.output_tokens_per_s_per_gpu for r in found],
                "o-" if first.speculation else "s--", label=label)  # fmt: skip
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(
        "Serving: throughput against per-user speed" + (" (SIMULATED)" if report.simulated else "")
    )
    ax.legend(fontsize=7)
    return png_of(fig)
