"""Speed judged against the policy's bands (pure): one check per candidate and shape.

Only where ``conf/tolerance`` sets a band (``speed:``; ``SpeedTolerance.band``); without one,
speed stays informational (the Speed tables) and the report says so (``gate.not_judged``). The
slowdown is the candidate's median cost over its baseline's (``1 / SpeedRow.ratio``); its
interval is the ratio's 95% bootstrap interval over the repeats, widened by the A/A band at that
shape (``restart_noise.widened``: what a second start of one engine moved), so a restart alone
does not make a verdict. GO when the whole interval is within the band, NO-GO when it is wholly
beyond, INCONCLUSIVE otherwise; a shape with no baseline point is NO BASELINE.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.report.judge.check_kinds import SPEED_VS_BASELINE, CsvFields
from pipeline.report.judge.check_numbers import SpeedNumbers, SpeedShapeNumbers
from pipeline.report.judge.verdicts import (
    GO,
    INCONCLUSIVE,
    NO_BASELINE,
    NO_GO,
    Check,
    make_check,
    worst,
)  # fmt: skip
from pipeline.report.load.tolerance import SpeedTolerance
from pipeline.report.speed.ratios import SpeedRow
from pipeline.report.speed.restart_noise import widened

# cells.csv's columns when the policy judged speed (a speed band): per cell, over its shapes.
SPEED_COLUMNS = ["speed_vs_baseline", "speed_shapes_judged", "speed_worst_shape",
                 "speed_worst_slowdown_high", "speed_max_slowdown"]  # fmt: skip


def shape_name(row: SpeedRow) -> str:
    """``prefill 1x4096``: the shape as a policy's ``speed.shapes`` names it."""
    point = row.point
    return f"{point.phase} {point.batch}x{point.prompt_tokens}"


def slowdown_verdict(slowdown_interval: tuple[float, float], band: float) -> str:
    """GO when the interval is within ``band``, NO-GO when wholly beyond it, else INCONCLUSIVE."""
    low, high = slowdown_interval
    if high <= band:
        return GO
    return NO_GO if low > band else INCONCLUSIVE


def speed_check(row: SpeedRow, band: float, baseline: str) -> Check:
    """The check of one candidate's shape against ``band`` (the largest slowdown allowed)."""
    name = shape_name(row)
    shape = SpeedShapeNumbers(row.point.phase, row.point.batch, row.point.prompt_tokens, band)
    if row.ratio is None or row.ratio_ci is None or row.baseline is None:
        why = row.note or "no ratio to the baseline"
        message = f"speed band {band:g}x set, but no {baseline} speed to compare with: {why}"
        return make_check(row.cell, name, SPEED_VS_BASELINE, NO_BASELINE, message, shape)
    low, high = widened(row.ratio_ci, row.aa_band)
    interval = (1.0 / high, 1.0 / low)  # slowdown = 1 / ratio: the ends swap
    numbers = SpeedNumbers(
        shape.phase, shape.batch, shape.tokens, band, slowdown=1.0 / row.ratio,
        slowdown_low=interval[0], slowdown_high=interval[1], ratio=row.ratio,
        ratio_ci95=list(row.ratio_ci), aa_band=row.aa_band,
        same_kernels=row.same_kernels, baseline=row.baseline.label,
        baseline_folder=str(row.baseline.folder or row.baseline.id),
    )  # fmt: skip
    return make_check(
        row.cell, name, SPEED_VS_BASELINE, slowdown_verdict(interval, band), "", numbers
    )


def speed_checks(rows: Sequence[SpeedRow], bands: SpeedTolerance, baseline: str) -> list[Check]:
    """A check per candidate row whose shape has a band (the baseline's own rows have none).

    Nor has an A/A's second start (``row.aa_pair``): its interval is widened by the band its own
    ratio made, so a band check of it is decided by the A/A alone (GO, or INCONCLUSIVE past a
    tight band), never by a candidate: it would be a check that cannot judge anything.
    """
    out = []
    for row in rows:
        band = bands.band(row.point.phase, row.point.batch, row.point.prompt_tokens)
        if band is not None and row.cell.variant != baseline and not row.aa_pair:
            out.append(speed_check(row, band, baseline))
    return out


def speed_fields(checks: list[Check]) -> CsvFields:
    """A cell's speed columns: the worst verdict of its shapes, and the shape nearest failing."""
    found = [k for k in checks if k.kind == SPEED_VS_BASELINE]
    if not found:
        return {}
    scored = [(k, k.numbers) for k in found if isinstance(k.numbers, SpeedNumbers)]
    top = max(scored, key=lambda kn: kn[1].slowdown_high / kn[1].max_slowdown, default=None)
    return {
        "speed_vs_baseline": worst(k.verdict for k in found),
        "speed_shapes_judged": len(found),
        "speed_worst_shape": top[0].eval if top else "",
        "speed_worst_slowdown_high": top[1].slowdown_high if top else "",
        "speed_max_slowdown": top[1].max_slowdown if top else "",
    }
