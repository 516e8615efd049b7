"""What SGLang's decode log interval can explain between its accept average and the per-request
one (pipeline/measuring/log_interval.py), table-driven, and the cross-check that uses it."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from pipeline.measuring.accept_stats import spec_records
from pipeline.measuring.accept_windows import MetricDeltas, Window, accept_warnings, window_accept
from pipeline.measuring.log_interval import left_out_share, server_tolerance
from tests.unit.test_accept_windows import rec

CELL = Path(__file__).resolve().parents[2] / (
    "benchmarks/results/live-h200/longctx-model-followups-0.5.23/cell-h100"
)


@pytest.mark.parametrize(
    ("windows", "in_flight", "share"),
    [
        ([[60] * 9], 128, 39 * 9 / 540),  # nine requests together: 39 iterations of 9 each
        ([[60] * 9], 4, 39 * 4 / 540),  # four in flight at a time
        ([[300] * 200], 128, 39 * 128 / 60000),  # a large eval: a small share
        ([[10]], 1, 1.0),  # fewer steps than an interval: all of it may be left out
        ([[60] * 9, [60] * 9], 128, 2 * 39 * 9 / 1080),  # each window ends its own interval
        ([[0, 60]], 128, 39 / 60),  # a request without steps is not in flight
        ([], 8, 1.0),
    ],
)
def test_the_share_left_out(windows: list[list[int]], in_flight: int, share: float) -> None:
    assert left_out_share(windows, in_flight) == pytest.approx(share)


@pytest.mark.parametrize(
    ("share", "positions", "expected", "tolerance"),
    [
        (0.65, 3, 2.69, 0.65 * 3 / 2.69),  # the vt window: up to 72% explained
        (0.01, 3, 2.5, 0.10),  # a large window: the base 10%
        (0.5, 0, 2.0, 0.10),  # no draft positions known: the base
        (0.5, 3, None, 0.10),  # no per-request figure: the base
    ],
)
def test_the_tolerance_is_what_the_share_explains_and_at_least_the_base(
    share: float, positions: int, expected: float | None, tolerance: float
) -> None:
    assert server_tolerance(share, positions, expected, 0.10) == pytest.approx(tolerance)


def vt_records() -> list[dict]:
    with tarfile.open(CELL / "samples.tar.xz") as tar:
        member = tar.extractfile("samples/longctx_vt.jsonl")
        assert member is not None
        return [json.loads(line) for line in member.read().decode().splitlines()]


def test_the_live_vt_window_is_within_what_the_log_interval_explains() -> None:
    # 2026-12-07: /server_info said 3.03, the requests 2.69 (12.5%), warned as "more than the
    # log-interval effect" under the fixed 10%. Nine requests, 552 verify steps, up to 39
    # iterations of nine left out: 64% of the steps.
    cell = json.loads((CELL / "result.json").read_text())
    said = cell["evals"]["longctx_vt"]["accept"]["server_avg_spec_accept_length"]
    records = vt_records()
    steps = [int(s["verify_ct"]) for s in spec_records(records)]
    assert len(steps) == 9 and sum(steps) == 552
    window = Window(records, said, MetricDeltas(None, None, None))
    share = left_out_share([steps], cell["client"]["concurrency"])
    accept = window_accept(records, window, True, 0.10, share)
    assert accept.cross_check is not None and accept.cross_check.agrees is True
    assert not [w for w in accept_warnings("eval longctx_vt", accept) if "differs" in w]
    # Without the share (the fixed 10%) the same figures disagree, as the cell warned.
    fixed = window_accept(records, window, True, 0.10)
    assert fixed.cross_check is not None and fixed.cross_check.agrees is False


def test_a_large_window_still_warns_at_the_base_tolerance() -> None:
    # 200 requests of 30 steps, 4 in flight: at most 39 x 4 of 6,000 steps left out (2.6%),
    # which explains 2.6% x 2 / 1.5 = 3.5%: a server figure 20% off is a fault, warned.
    records = [rec([10, 10, 10]) for _ in range(200)]
    accept0 = window_accept(records, Window(records, None, MetricDeltas(None, None, None)), True,
                            0.10)  # fmt: skip
    expected = accept0.server_equivalent_accept_length
    assert expected is not None
    window = Window(records, expected * 1.2, MetricDeltas(None, None, None))
    share = left_out_share([[30] * 200], 4)
    accept = window_accept(records, window, True, 0.10, share)
    assert accept.cross_check is not None and accept.cross_check.agrees is False
    assert [w for w in accept_warnings("eval x", accept) if "more than the log-interval" in w]
