"""The console's words for a cell's speed phase (pure): the table cell and the per-shape lines."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.cli.speed_summary import point_line, ratio_pointer, speed_column, speed_lines
from pipeline.cli.summary import row
from pipeline.results.result_types import CellResult
from pipeline.results.speed_block import SpeedPoint


def point(phase: str, batch: int, tokens: int, times: list[float], **extra: Any) -> dict:
    return {"phase": phase, "batch": batch, "prompt_tokens": tokens, "new_tokens": 64,
            "times_ms": times, **extra}  # fmt: skip


def result(points: list[dict] | None, evals: dict | None = None) -> CellResult:
    data: dict[str, Any] = {"status": "ok", "cell": {"name": "c"}, "evals": evals or {}}
    if points is not None:
        data["speed"] = {"method": "m", "repeats": 3, "warmup": 1, "points": points}
    return CellResult.from_json(data)


DECODE = point("decode", 4, 512, [40.0, 30.0, 50.0], tokens_per_s=[900.0, 1000.0, 1100.0],
               accept_length=2.5)  # fmt: skip


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        (None, "-"),  # no speed phase either: nothing measured
        ([], "-"),
        ([point("prefill", 1, 1024, [])], "-"),  # no repeat read
        ([point("prefill", 1, 1024, [3.0, 1.0, 2.0])], "speed only: prefill 2.0 ms (1 x 1,024)"),
        ([point("prefill", 1, 131072, [900.0]), point("prefill", 8, 1024, [20.0]), DECODE],
         "speed only: prefill 20.0 ms (8 x 1,024) to 900.0 ms (1 x 131,072), 1 decode shape"),
        ([DECODE, DECODE], "speed only: 2 decode shapes"),
    ],
)  # fmt: skip
def test_a_speed_only_cell_shows_its_fastest_and_slowest_prefill(
    points: list[dict] | None, expected: str
) -> None:
    assert speed_column(result(points)) == expected
    assert row(result(points))[2] == expected  # the accuracy column of the summary table


def test_a_cell_with_evals_keeps_its_accuracy_column() -> None:
    evals = {"gsm8k": {"accuracy": 0.5, "ci95": [0.4, 0.6], "n_samples": 10, "graded": True}}
    assert row(result([DECODE], evals))[2] == "gsm8k 0.500 [0.400, 0.600]"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (point("prefill", 1, 4096, [12.0, 11.0, 13.5]),
         "speed prefill 1 x 4,096: 12.0 ms median of 3 (11.0-13.5)"),
        (DECODE, "speed decode 4 x 512 (+64): 40.0 ms median of 3 (30.0-50.0), "
                 "1,000.0 tokens/s, accept length 2.50"),
        (point("prefill", 1, 1024, []), "speed prefill 1 x 1,024: no repeat measured"),
    ],
)  # fmt: skip
def test_each_shape_has_a_line_with_its_median_spread_and_rates(data: dict, expected: str) -> None:
    assert point_line(SpeedPoint.from_json(data)) == expected


def test_the_pointer_to_the_ratios_is_printed_once_and_only_after_speed() -> None:
    measured, plain = result([DECODE]), result(None)
    assert len(speed_lines(measured)) == 1 and speed_lines(plain) == []
    assert ratio_pointer([plain], "d") == []
    assert ratio_pointer([measured, measured, plain], "d") == [
        "speed ratios to the baseline, with 95% intervals: mtp-eval-report d"
    ]
