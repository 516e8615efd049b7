"""The costs of ``speed/costs.py`` as the report shows them: two tables and ``summary.json`` lists.

"Speed: what the KV pool costs" has a row per variant, release and shape timed at several pool
sizes; "Speed: what the release changes" a row per variant and shape whose ratio to its baseline
was measured on several releases. Each row ends with what it tells the user.
"""

from __future__ import annotations

from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.speed.costs import (
    PoolCost,
    ReleaseCost,
    pool_costs,
    release_costs,
    release_of,
)
from pipeline.report.speed.ratios import SpeedRow, kv_pool
from pipeline.report.write.section import Section

POOL_INTRO = (
    "One variant, release and shape at two or more KV pool sizes (the server's "
    "max_total_num_tokens, set by --mem-fraction-static or --max-total-tokens): the largest "
    "pool's median time over the smallest's, 95% bootstrap interval over the repeats. Above 1 "
    "with the interval: part of the time grows with the pool (SGLang 0.5.19-0.5.22 copy the "
    "layer's whole KV pool on every fmha_v2 prefill)."
)
RELEASE_INTRO = (
    "One variant and shape whose ratio to its baseline (of the same release) was measured on "
    "two or more SGLang releases, a row per KV pool size they share (a release that copies the "
    "pool is slower at a larger one). Intervals that do not overlap: its speed against the "
    "baseline depends on the release."
)


def _interval(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _ms(row: SpeedRow) -> str:
    return "-" if row.median_ms is None else f"{row.median_ms:.1f} ms"


def _pool_text(row: SpeedRow) -> str:
    pool = kv_pool(row.cell)
    return f"{pool:,} tokens: {_ms(row)}" if pool else _ms(row)


# Said after a difference between two server starts where no A/A measured what a restart moves.
UNBANDED = " (no A/A at this shape: one start each, restart noise not measured)"


def _unbanded(rows: tuple[SpeedRow, ...]) -> str:
    return UNBANDED if any(r.aa_band is None for r in rows) else ""


def pool_finding(cost: PoolCost) -> str:
    """What the row tells: the time grows with the pool, or no growth was shown."""
    small, large = cost.rows[0], cost.rows[-1]
    if not cost.grows:
        return "no growth with the pool shown"
    extra = (large.median_ms or 0.0) - (small.median_ms or 0.0)
    sizes = f"{kv_pool(small.cell) or 0:,} to {kv_pool(large.cell) or 0:,} tokens"
    return f"grows with the pool: +{extra:.1f} ms from {sizes}" + _unbanded(cost.rows)


def shared_pool(cost: ReleaseCost) -> int | None:
    """The KV pool size every release's row ran at (None: they differ, or one is unknown)."""
    pools = {kv_pool(r.cell) for r in cost.rows}
    return pools.pop() if len(pools) == 1 else None


def release_finding(cost: ReleaseCost) -> str:
    """What the row tells: the release moved the variant's speed, or not shown."""
    if not cost.depends:
        return "no release difference shown"
    return "depends on the release" + _unbanded(cost.rows)


def cost_sections(report: Report) -> list[Section]:
    """The pool and release tables (each only when some variant was measured that way)."""
    sections = []
    pools = pool_costs(report.speed)
    if pools:
        headers = ["variant", "SGLang", "shape", "by pool", "largest / smallest", "finding"]
        section = Section("Speed: what the KV pool costs", headers, intro=POOL_INTRO)
        for p in pools:
            first = p.rows[0]
            section.rows.append([
                first.cell.name, str(release_of(first.cell)), first.point.label,
                "; ".join(_pool_text(r) for r in p.rows),
                f"{p.ratio:.3f} {_interval(p.ratio_ci)}", pool_finding(p),
            ])  # fmt: skip
        sections.append(section)
    releases = release_costs(report.speed)
    if releases:
        section = Section("Speed: what the release changes",
                          ["variant", "shape", "KV pool (tokens)",
                           "ratio to the baseline by release", "finding"],
                          intro=RELEASE_INTRO)  # fmt: skip
        for r in releases:
            by = "; ".join(f"{release_of(x.cell)}: {x.ratio:.3f} {_interval(x.ratio_ci)}"
                           for x in r.rows)  # fmt: skip
            pool = shared_pool(r)
            section.rows.append([r.rows[0].cell.name, r.rows[0].point.label,
                                 f"{pool:,}" if pool else "differs or unknown", by,
                                 release_finding(r)])  # fmt: skip
        sections.append(section)
    return sections


def _row_entry(row: SpeedRow) -> dict[str, Any]:
    return {"cell": row.cell.label, "cell_id": row.cell.id, "sglang_version": release_of(row.cell),
            "kv_pool_tokens": kv_pool(row.cell), "median_ms": row.median_ms,
            "ratio": row.ratio, "ratio_ci95": list(row.ratio_ci) if row.ratio_ci else None,
            "baseline": row.baseline.label if row.baseline is not None else None,
            "baseline_id": row.baseline.id if row.baseline is not None else None}  # fmt: skip


def _key_entry(row: SpeedRow) -> dict[str, Any]:
    c, p = row.cell, row.point
    return {"gpu": c.gpu, "model": c.model, "variant": c.variant, "kv_dtype": c.kv_dtype,
            "skip_softmax": {"prefill": c.skip_prefill, "decode": c.skip_decode},
            "phase": p.phase, "batch": p.batch, "tokens": p.prompt_tokens}  # fmt: skip


def speed_cost_entries(report: Report) -> dict[str, list[dict[str, Any]]]:
    """``summary.json``'s ``speed_costs``: ``pool`` and ``release`` lists, as the tables."""
    pools = [
        {**_key_entry(p.rows[0]), "sglang_version": release_of(p.rows[0].cell),
         "by_pool": [_row_entry(r) for r in p.rows], "ratio": p.ratio,
         "ratio_ci95": list(p.ratio_ci), "grows_with_pool": p.grows, "finding": pool_finding(p)}
        for p in pool_costs(report.speed)
    ]  # fmt: skip
    releases = [
        {**_key_entry(r.rows[0]), "kv_pool_tokens": shared_pool(r),
         "by_release": [_row_entry(x) for x in r.rows],
         "depends_on_release": r.depends, "finding": release_finding(r)}
        for r in release_costs(report.speed)
    ]  # fmt: skip
    return {"pool": pools, "release": releases}
