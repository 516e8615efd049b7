"""The skip-softmax frontier as the report shows it: ``summary.json``'s ``frontier`` and its tables.

One table per variant with two factors or more: a row per factor (its skipped share, its accuracy
verdict against the baseline, per eval when asked, and its prefill gain over the factor-0 cell at
each shape as ``ratio [low, high]``), and above it the line a user acts on: the largest factor
whose verdict is GO, and what it gains.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.speed.frontier import NOT_MEASURED, Frontier, FrontierPoint, Gain, frontiers
from pipeline.report.speed.frontier_parity import Divergence
from pipeline.report.speed.restart_noise import beyond
from pipeline.report.speed.skip_fractions import HOW_TO_MEASURE
from pipeline.report.write.section import Section
from pipeline.report.write.speed_tables import ratio_text

INTRO = (
    "Cells of one variant that differ only in the prefill skip-softmax factor "
    "(SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR; 0: exact softmax). Verdict: the worst "
    "accuracy check against the baseline over the evals (paired mean test, broken prompts). "
    "Gain: the factor-0 cell's median prefill time over this factor's, 95% bootstrap interval "
    "over the repeats (above 1: faster), from each cell's speed phase."
)


def frontier_list(report: Report) -> list[Frontier]:
    """The report's frontiers (its cells, checks, baseline and measured skipped shares)."""
    fractions = report.frontier_inputs.fractions
    baseline = report.tolerance.baseline
    return frontiers(report.cells, report.checks_of, fractions, baseline, report.restart.band)


def gain_text(g: Gain) -> str:
    """``1.234 [1.200, 1.270]``, ``reference 12.3 ms``, or why there is no ratio."""
    if g.note == "the factor-0 reference":
        return f"reference {g.median_ms:.1f} ms" if g.median_ms is not None else "reference"
    if g.ratio is None or g.ratio_ci is None:
        return g.note or "-"
    return ratio_text(g.ratio, g.ratio_ci, g.aa_band, g.aa_pair)


def factor_text(factor: float) -> str:
    """``0 (exact)`` or the factor as configured (``10000``, ``1e+06``)."""
    return "0 (exact)" if factor == 0 else f"{factor:g}"


def share_text(share: float | None) -> str:
    """``35.0%`` or ``not measured``: a share of key tiles skipped."""
    return NOT_MEASURED if share is None else f"{100 * share:.1f}%"


def shape_text(shape: tuple[int, int]) -> str:
    """``prefill 1 x 16,384``: a gain column."""
    return f"prefill {shape[0]} x {shape[1]:,}"


def takeaway(frontier: Frontier) -> str:
    """The line a user picks a factor from: the largest GO factor and its gain at each shape."""
    best = frontier.best
    if best is None:
        return "No factor is GO against the baseline: keep exact softmax or decide more cells."
    gains = [f"{shape_text((g.batch, g.tokens))}: {gain_text(g)}" for g in best.gains]
    if best.factor == 0:
        return "Only exact softmax (factor 0) is GO: no skip-softmax factor keeps accuracy."
    said = "; ".join(gains) if gains else "speed not measured (no speed phase in these cells)"
    return f"Largest factor whose verdict is GO: {factor_text(best.factor)} ({said})."


def divergence_text(p: FrontierPoint) -> str:
    """``NO-GO: 0.0123 (upper 0.015, band 0.0004)`` or ``-`` without a parity phase."""
    return parity_text(p.divergence)


def parity_text(d: Divergence | None) -> str:
    """A parity reading as a table cell (the frontier's and the KV-dtype comparison's)."""
    if d is None or d.estimate is None:
        return "-" if d is None else d.verdict
    band = f"band {d.band:.3g}" if d.band is not None else "no band"
    upper = f"upper {d.upper:.3g}, " if d.upper is not None else ""
    return f"{d.verdict}: {d.estimate:.3g} ({upper}{band})"


def band_takeaway(frontier: Frontier) -> str:
    """The largest factor inside the parity band ('' when no factor ran the parity phase)."""
    if not frontier.has_parity:
        return ""
    inside = frontier.inside_band
    if inside is None:
        return "No factor's logprob divergence is inside the parity band."
    return f"Largest factor inside the parity band: {factor_text(inside.factor)}."


def tiles_line(frontier: Frontier, source: str) -> str:
    """Where the tiles-skipped column comes from; what it lacks, and how to supply it.

    SGLang does not count skipped tiles, so a sweep alone has none: never a bare "Tiles skipped:".
    """
    missing = [factor_text(p.factor) for p in frontier.points if p.skipped is None]
    if not source:
        return f"Tiles skipped: not measured here; {HOW_TO_MEASURE}."
    if not missing:
        return f"Tiles skipped: measured with HF ({source})."
    return (
        f"Tiles skipped: measured with HF ({source}), which has no share for KV "
        f"{frontier.key[3]} at factor {', '.join(missing)}: {HOW_TO_MEASURE}."
    )


def _title(frontier: Frontier) -> str:
    gpu, model, variant, kv, release = frontier.key[:5]
    return f"Skip-softmax frontier: {variant} on {model}, {gpu}, KV {kv}, SGLang {release}"


def frontier_sections(report: Report) -> list[Section]:
    """The frontier tables (none when no variant ran two factors)."""
    per_eval = report.frontier_inputs.per_eval
    sections = []
    for frontier in frontier_list(report):
        evals = sorted({e for p in frontier.points for e in p.eval_verdicts}) if per_eval else []
        parity = ["divergence (parity)"] if frontier.has_parity else []
        headers = ["factor", "tiles skipped", "accuracy verdict", *parity, *evals,
                   *(f"{shape_text(s)} gain" for s in frontier.shapes), "cell"]  # fmt: skip
        where = tiles_line(frontier, report.frontier_inputs.source)
        restarts = report.restart.said(p.cell for p in frontier.points)
        said = [takeaway(frontier), band_takeaway(frontier), INTRO, where, restarts,
                *frontier.notes]  # fmt: skip
        intro = " ".join(x for x in said if x)
        section = Section(_title(frontier), headers, intro=intro)
        for p in frontier.points:
            section.rows.append([
                factor_text(p.factor), share_text(p.skipped), p.verdict,
                *([divergence_text(p)] if parity else []),
                *(p.eval_verdicts.get(e, "-") for e in evals), *(gain_text(g) for g in p.gains),
                p.cell.label,
            ])  # fmt: skip
        sections.append(section)
    return sections


def _gain_entry(g: Gain) -> dict[str, Any]:
    return {"batch": g.batch, "tokens": g.tokens, "median_ms": g.median_ms, "ratio": g.ratio,
            "ratio_ci95": list(g.ratio_ci) if g.ratio_ci else None, "aa_band": g.aa_band,
            "beyond_aa": beyond(g.ratio_ci, g.aa_band, g.aa_pair), "note": g.note}  # fmt: skip


def _point_entry(p: FrontierPoint) -> dict[str, Any]:
    return {"factor": p.factor, "cell": p.cell.label, "cell_id": p.cell.id,
            "status": p.cell.status, "accuracy_verdict": p.verdict,
            "eval_verdicts": p.eval_verdicts, "skipped_fraction": p.skipped,
            "prefill_gain": [_gain_entry(g) for g in p.gains],
            "parity": asdict(p.divergence) if p.divergence else None}  # fmt: skip


def frontier_entries(report: Report) -> list[dict[str, Any]]:
    """``summary.json``'s ``frontier`` list: one entry per variant, its factors smallest first."""
    entries = []
    for f in frontier_list(report):
        gpu, model, variant, kv, release, decode, layout, spec = f.key
        best = f.best
        entries.append({
            "gpu": gpu, "model": model, "variant": variant, "kv_dtype": kv,
            "sglang_version": release, "skip_decode": decode, "layout": layout,
            "speculative": spec,
            "reference": f.reference.label if f.reference is not None else None,
            "skipped_fraction_source": report.frontier_inputs.source or None,
            "largest_go_factor": best.factor if best is not None else None,
            "largest_inside_band_factor": f.inside_band.factor if f.inside_band else None,
            "takeaway": takeaway(f), "points": [_point_entry(p) for p in f.points],
        })  # fmt: skip
    return entries
