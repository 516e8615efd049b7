"""The server's own timing of a /generate answer (pure), on live SGLang 0.5.19 bodies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.measuring.speed.timing import (
    RequestTiming,
    SpeedTimingError,
    accept_length,
    answer_timings,
    decode_span_s,
    decoded_tokens,
    prefill_span_s,
    request_timing,
    spread,
)

LIVE = Path(__file__).resolve().parents[1] / "data" / "live-sglang-0.5.19" / "generate.json"


def test_a_live_answer_gives_its_prefill_span_tokens_and_verify_steps() -> None:
    body = json.loads(LIVE.read_text())
    meta = body["meta_info"]
    (timing,) = answer_timings(body)
    assert timing.forward_entry == meta["forward_entry_time"]
    assert prefill_span_s([timing]) == pytest.approx(0.0437264, abs=1e-6)
    assert timing.finished == meta["request_finished_ts"]
    assert (timing.completion_tokens, timing.verify_ct) == (48, 39)
    assert accept_length([timing]) == pytest.approx(meta["spec_accept_length"])


def test_without_request_finished_ts_the_end_is_entry_plus_e2e() -> None:
    meta = {"forward_entry_time": 10.0, "prefill_finished_time": 10.5, "e2e_latency": 2.0,
            "completion_tokens": 5}  # fmt: skip
    assert request_timing(meta) == RequestTiming(10.0, 10.5, 12.0, 5, None)


@pytest.mark.parametrize(
    "meta",
    [
        None,
        {"e2e_latency": 1.0, "completion_tokens": 3},  # a server without --enable-metrics
        {"forward_entry_time": 1.0, "prefill_finished_time": 2.0, "completion_tokens": 3},
        {"forward_entry_time": "1", "prefill_finished_time": 2.0, "e2e_latency": 1.0,
         "completion_tokens": 3},
        {"forward_entry_time": 1.0, "prefill_finished_time": float("nan"), "e2e_latency": 1.0,
         "completion_tokens": 3},
    ],
)  # fmt: skip
def test_an_answer_without_its_timing_names_the_setting_to_turn_on(meta: object) -> None:
    with pytest.raises(SpeedTimingError, match=r"enable_metrics|meta_info"):
        request_timing(meta)


def test_a_batch_spans_from_its_first_start_to_its_last_end() -> None:
    batch = [RequestTiming(1.0, 1.4, 3.0, 65, 26), RequestTiming(1.1, 1.5, 3.5, 65, 24)]
    assert prefill_span_s(batch) == pytest.approx(0.5)
    assert decode_span_s(batch) == pytest.approx(2.1)
    assert decoded_tokens(batch) == 128  # the first token of each came from its prefill
    assert accept_length(batch) == pytest.approx(130 / 50)


def test_accept_length_is_none_without_speculation() -> None:
    assert accept_length([RequestTiming(1.0, 1.4, 3.0, 65, None)]) is None
    assert accept_length([]) is None


def test_spread_is_the_median_min_and_max() -> None:
    found = spread([3.0, 1.0, 2.0, 10.0])
    assert (found.median, found.low, found.high) == (2.5, 1.0, 10.0)


def test_an_aborted_generate_request_is_no_timing() -> None:
    derived = Path(__file__).resolve().parents[1] / "data" / "sglang-abort"
    for release in ("0.5.19", "0.5.23"):
        body = json.loads((derived / f"abort-generate-{release}.json").read_text())
        with pytest.raises(SpeedTimingError, match="aborted a /generate request"):
            request_timing(body["meta_info"])
