"""What the console says of a cell's speed phase (pure): a table cell and one line per shape.

A speed-only cell (``evals=[]``, ``speed.enabled=true``) has no accuracy to show, so the
summary's accuracy column names its speed instead of a bare ``-``. The ratios to the baseline
need the baseline's cell too: the report computes them, and the lines say so.
"""

from __future__ import annotations

import statistics

from pipeline.results.result_types import CellResult
from pipeline.results.speed_block import PREFILL, SpeedPoint


def speed_column(result: CellResult) -> str:
    """The accuracy column of a cell that ran no eval: its fastest and slowest prefill.

    ``speed only: prefill 12.3 ms (1 x 1,024) to 912.0 ms (1 x 131,072), 2 decode shapes``;
    ``-`` when the cell has no speed point either.
    """
    speed = result.speed
    points = [p for p in speed.points if p.median_ms is not None] if speed else []
    if not points:
        return "-"
    prefill = sorted((p for p in points if p.phase == PREFILL), key=lambda p: p.median_ms or 0.0)
    parts = []
    if prefill:
        ends = [prefill[0], prefill[-1]] if len(prefill) > 1 else prefill
        parts.append("prefill " + " to ".join(
            f"{p.median_ms:.1f} ms ({p.batch} x {p.prompt_tokens:,})" for p in ends))  # fmt: skip
    decode = len(points) - len(prefill)
    if decode:
        parts.append(f"{decode} decode shape{'s' if decode > 1 else ''}")
    return "speed only: " + ", ".join(parts)


def point_line(point: SpeedPoint) -> str:
    """``speed prefill 1 x 1,024: 12.3 ms median of 5 (12.0-13.1)``; decode adds its rates.

    Decode: the median tokens/s of the repeats and the accept length of the phase.
    """
    median = point.median_ms
    if median is None:
        return f"speed {point.label}: no repeat measured"
    times = point.times_ms
    line = (
        f"speed {point.label}: {median:.1f} ms median of {len(times)} "
        f"({min(times):.1f}-{max(times):.1f})"
    )
    if point.tokens_per_s:
        line += f", {statistics.median(point.tokens_per_s):,.1f} tokens/s"
    if point.accept_length is not None:
        line += f", accept length {point.accept_length:.2f}"
    return line


def speed_lines(result: CellResult) -> list[str]:
    """One line per shape the cell's speed phase measured (none without a speed phase)."""
    speed = result.speed
    return [point_line(p) for p in speed.points] if speed is not None else []


def ratio_pointer(results: list[CellResult], folder: str) -> list[str]:
    """Where the ratios to the baseline are, once, when any of ``results`` measured speed."""
    if not any(speed_lines(r) for r in results):
        return []
    return [f"speed ratios to the baseline, with 95% intervals: mtp-eval-report {folder}"]
