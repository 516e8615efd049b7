from __future__ import annotations

import math
from typing import Any

import pytest

from pipeline.measuring.accept_windows import (
    GENERATION,
    REQUESTS,
    VERIFY,
    MetricDeltas,
    Window,
    accept_warnings,
    combine,
    counters_check,
    fewest_iterations,
    metric_deltas,
    uncertainty,
    window_accept,
)
from pipeline.results.accept_block import AcceptBlock


def rec(hist: list[int], completion: int | None = None, error: str | None = None) -> dict[str, Any]:
    verify = sum(hist)
    correct = sum(i * h for i, h in enumerate(hist))
    return {
        "error_kind": error,
        "spec": {
            "verify_ct": verify,
            "num_correct_drafts": correct,
            "num_proposed_drafts": verify * 3,
            "completion_tokens": completion if completion is not None else 1 + verify + correct,
            "histogram": hist,
        },
    }


def deltas(gen: float | None, verify: float | None, requests: float | None = 1.0) -> MetricDeltas:
    return MetricDeltas(gen, verify, requests)


def test_uncertainty_matches_the_clustered_ratio_formula() -> None:
    # Requests: hist [1, 1] and [0, 2]: steps 2 and 2; steps with >= 1 correct: 1 and 2.
    # ratio 3/4; residuals 1 - 1.5 = -0.5, 2 - 1.5 = 0.5; var = 0.5 / (2 * 1); se = 0.5 / 2.
    rate, positions = uncertainty([rec([1, 1]), rec([0, 2])])
    assert list(positions) == [pytest.approx(0.25)]
    # accept rate: correct [1, 2] over proposed [6, 6]: ratio 1/4; residuals -0.5, 0.5;
    # se = sqrt(0.5 / 2) / 6.
    assert rate == pytest.approx(math.sqrt(0.25) / 6)


def test_uncertainty_pads_short_histograms_and_handles_none() -> None:
    _, positions = uncertainty([rec([2, 0, 1, 3]), rec([4]), rec([0, 0, 5])])
    assert len(positions) == 3
    assert all(v is not None and v >= 0 for v in positions)
    assert uncertainty([{"spec": None}]) == (None, ())


def test_metric_deltas_from_prometheus_text() -> None:
    before = (
        'sglang:generation_tokens_total{is_streaming="false"} 100.0\n'
        'sglang:generation_tokens_total{is_streaming="true"} 20.0\n'
        "sglang:spec_verify_calls_total{} 40.0\nsglang:num_requests_total{} 3.0\n"
    )
    after = before.replace("100.0", "350.0").replace("40.0", "140.0").replace(" 3.0", " 8.0")
    out = metric_deltas(before, after).to_json()
    assert out == {GENERATION: 250.0, VERIFY: 100.0, REQUESTS: 5.0, "accept_length": 2.5}
    assert list(out) == [GENERATION, VERIFY, REQUESTS, "accept_length"]  # as the cell wrote it
    assert metric_deltas(None, after).accept_length is None


@pytest.mark.parametrize(
    ("observed", "expected", "agrees"),
    [(2.5, 2.5, True), (2.7, 2.5, True), (3.0, 2.5, False), (None, 2.5, None), (2.5, None, None)],
)
def test_counters_check(
    observed: float | None, expected: float | None, agrees: bool | None
) -> None:
    d = MetricDeltas(observed, 1.0) if observed is not None else MetricDeltas()
    assert counters_check(AcceptBlock(accept_length=expected), d, 0.10).agrees is agrees


def test_combine_sums_counters_and_weights_server_values_by_verify_steps() -> None:
    a = Window([rec([1, 1])], 2.0, deltas(200.0, 100.0))
    b = Window([rec([0, 2])], 3.0, deltas(900.0, 300.0))
    empty = Window([], None, deltas(0.0, 0.0, 0.0))  # a fully resumed eval: nothing sent
    cell = combine([a, b, empty])
    assert cell.server_value == pytest.approx((2.0 * 100 + 3.0 * 300) / 400)
    assert cell.deltas.generation == 1100.0 and cell.deltas.verify == 400.0
    assert cell.deltas.accept_length == pytest.approx(1100 / 400)
    assert len(cell.new) == 2
    assert combine([a]).server_value == 2.0  # one window: exactly what the server said
    unknown = combine([a, Window([], 2.5, deltas(None, None))])
    assert unknown.deltas.generation is None and unknown.deltas.accept_length is None


def test_combine_weights_by_request_totals_without_metrics() -> None:
    a = Window([rec([0, 0, 0, 10])], 4.0, deltas(None, None))  # 10 verify steps
    b = Window([rec([30])], 1.0, deltas(None, None))  # 30 verify steps
    assert combine([a, b]).server_value == pytest.approx((4 * 10 + 1 * 30) / 40)


def test_window_accept_per_request_and_server_figures() -> None:
    records = [rec([1, 1, 0, 2]), rec([0, 3, 1])]
    completion = sum(r["spec"]["completion_tokens"] for r in records)
    verify = sum(r["spec"]["verify_ct"] for r in records)
    server = (completion - len(records)) / verify  # SGLang's definition, prefill token excluded
    window = Window(records, server, deltas(float(completion), float(verify)))
    out = window_accept(records, window, speculative=True, rel_tolerance=0.1)
    assert out.status == "ok"
    assert out.accept_length == completion / verify
    assert out.cross_check is not None and out.metrics_cross_check is not None
    assert out.cross_check.agrees is True and out.cross_check.relative_difference == 0
    assert out.metrics_cross_check.agrees is True
    assert len(out.per_position_acceptance_stderr) == 3
    assert accept_warnings("eval x", out) == []


def test_window_accept_not_speculative_and_disagreement_warnings() -> None:
    records = [rec([2, 2])]
    plain = window_accept(records, Window(records, None, deltas(5, 4)), False, 0.1)
    assert plain.status == "not_speculative" and "accept_rate_stderr" not in plain.to_json()
    off = window_accept(records, Window(records, 9.0, deltas(90.0, 4.0)), True, 0.1)
    warnings = accept_warnings("eval x", off)
    assert len(warnings) == 2 and all(w.startswith("eval x: ") for w in warnings)
    assert warnings == [
        "eval x: server-level avg_spec_accept_length 9.000 differs from the per-request totals "
        "1.500 by 500.0% (more than the log-interval effect)",
        "eval x: Prometheus generation_tokens / spec_verify_calls 22.500 differs from the "
        "per-request accept length 1.750 by 1185.7% (requests the client did not receive, or "
        "counters of another client)",
    ]


def test_speculative_eval_without_statistics_is_warned() -> None:
    records = [{"error_kind": None, "spec": None}]
    out = window_accept(records, Window(records, None, deltas(5.0, None)), True, 0.1)
    assert out.status == "missing"
    (warning,) = accept_warnings("eval lm", out)
    assert warning.startswith("eval lm: ") and "no request carried accept statistics" in warning


FRESH = "".join(
    f"# HELP {name} counter of a server that served nothing\n# TYPE {name} counter\n"
    for name in (REQUESTS, GENERATION, VERIFY)
)
AFTER = (
    f'{REQUESTS}{{model_name="m"}} 4.0\n'
    f'{GENERATION}{{model_name="m",is_streaming="false"}} 100.0\n'
    f'{VERIFY}{{model_name="m"}} 40.0\n'
)


def test_absent_counters_count_as_zero_on_a_server_that_served_nothing():
    found = metric_deltas(FRESH, AFTER)
    assert (found.requests, found.verify, found.accept_length) == (4.0, 40.0, 2.5)
    assert metric_deltas(None, AFTER).requests is None  # metrics off: unknown, not zero


def test_verify_steps_per_dp_rank():
    before = f'{VERIFY}{{dp_rank="0"}} 10.0\n{VERIFY}{{dp_rank="1"}} 5.0\n{REQUESTS}{{}} 2.0\n'
    after = f'{VERIFY}{{dp_rank="0"}} 40.0\n{VERIFY}{{dp_rank="1"}} 15.0\n{REQUESTS}{{}} 6.0\n'
    found = metric_deltas(before, after)
    assert found.to_json()["spec_verify_calls_by_dp_rank"] == {"0": 30.0, "1": 10.0}
    assert found.verify == 40.0


@pytest.mark.parametrize(
    ("counted", "attempts", "foreign"),
    [(4, [1, 1, 1, 1], 0), (6, [1, 1, 1, 1], 2), (6, [1, 3, 1, 1], 0), (None, [1], None)],
)
def test_requests_of_another_client_are_counted(counted, attempts, foreign):
    new = [{"error_kind": None, "attempts": a} for a in attempts]
    window = Window(new, None, MetricDeltas(requests=counted))
    seen = window_accept(new, window, speculative=False, rel_tolerance=0.1)
    assert (seen.traffic and seen.traffic.foreign) == foreign
    warned = accept_warnings("eval x", seen)
    assert bool(warned) == bool(foreign)
    if foreign:
        assert f"counted {counted} requests but the pipeline sent 4" in warned[0]


@pytest.mark.parametrize(
    ("steps", "concurrency", "fewest"),
    [
        ([], 8, 0),
        ([24, 20, 21], 128, 24),  # batched together: the longest request's steps
        ([24, 20, 21], 1, 65),  # one at a time: every step its own iteration
        ([10] * 9, 2, 45),  # two in flight: 90 steps in at least 45 iterations
        ([10] * 9, 0, 90),  # a concurrency below 1 reads as 1
    ],
)
def test_fewest_iterations(steps: list[int], concurrency: int, fewest: int) -> None:
    assert fewest_iterations(steps, concurrency) == fewest


@pytest.mark.parametrize(
    ("iterations", "said"),
    [
        (65, "its requests took at least 65 decode iterations, more than one decode log interval "
             "(40), so its counters were reset after this eval's /flush_cache: another client "
             "flushed them"),
        # 2026-12-06, the long-context cell's fwe: 192 verify steps over 9 requests in flight
        # together, fewer than 40 iterations: SGLang had not logged, no one had flushed
        (24, "either the eval ran fewer decode iterations (192 verify steps, batched) than one "
             "decode log interval (40: SGLang adds to the average only when it logs) or another "
             "client reset the counters"),
        (None, "either the eval ran fewer decode iterations"),
    ],
)  # fmt: skip
def test_a_missing_server_figure_names_the_cause_the_iterations_allow(
    iterations: int | None, said: str
) -> None:
    records = [rec([8, 8, 8]) for _ in range(8)]
    out = window_accept(records, Window(records, None, deltas(None, 192.0)), True, 0.1)
    (warning,) = accept_warnings("eval fwe", out, iterations)
    assert (
        warning.startswith("eval fwe: the server reported no avg_spec_accept_length")
        and said in warning
    )
