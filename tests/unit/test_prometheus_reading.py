"""``/metrics`` read with prometheus_client's parser gives the figures the hand-written reader
gave, on a simulated server's capture and on what prometheus_client itself exposes (SGLang's
exporter), and reads what the hand-written one got wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from backends.server_info import LATEST, metric_by_label, metric_total, verify_calls_by_rank

CAPTURE = Path(__file__).parents[1] / "data/metrics/simserver-dp2-after-5-requests.prom"
NAMES = [
    LATEST.metrics.requests, LATEST.metrics.generation_tokens, LATEST.metrics.verify_calls,
    "sglang:prompt_tokens_total", "sglang:num_running_reqs", "sglang:spec_accept_length",
    "sglang:absent_total",
]  # fmt: skip


def hand_total(text: str, name: str) -> float | None:
    """The reader this project used before prometheus_client's parser (the oracle)."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " "):
            total, seen = total + float(line.rsplit(" ", 1)[-1]), True
    return total if seen else None


def hand_by_label(text: str, name: str, label: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(name + "{") and f'{label}="' in line:
            value = line.split(f'{label}="', 1)[1].split('"', 1)[0]
            totals[value] = totals.get(value, 0.0) + float(line.rsplit(" ", 1)[-1])
    return totals


def exported() -> str:
    """SGLang's counters as prometheus_client exposes them (``_created`` samples included)."""
    registry = CollectorRegistry()
    labels = ["model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank"]
    for short, values in (("num_requests", (7, 5)), ("spec_verify_calls", (300, 100))):
        counter = Counter(f"sglang:{short}", short, labels, registry=registry)
        for rank, value in enumerate(values):
            counter.labels("m", "unified", "0", "0", str(rank)).inc(value)
    gen = Counter("sglang:generation_tokens", "gen", [*labels, "is_streaming"], registry=registry)
    gen.labels("m", "unified", "0", "0", "0", "false").inc(900)
    Gauge("sglang:num_running_reqs", "running", registry=registry).set(3)
    Histogram("sglang:e2e_request_latency_seconds", "e2e", registry=registry).observe(0.4)
    return generate_latest(registry).decode()


@pytest.mark.parametrize("text", [CAPTURE.read_text(), exported()], ids=["simserver", "exporter"])
@pytest.mark.parametrize("name", NAMES)
def test_every_figure_is_what_the_hand_written_reader_gave(text, name):
    assert metric_total(text, name) == hand_total(text, name)
    for label in ("dp_rank", "is_streaming", "model_name"):
        assert metric_by_label(text, name, label) == hand_by_label(text, name, label)


def test_the_capture_and_the_exporter_hold_the_figures_the_cells_read():
    assert metric_total(CAPTURE.read_text(), LATEST.metrics.requests) == 5.0
    assert verify_calls_by_rank(CAPTURE.read_text()).keys() == {"0", "1"}
    text = exported()
    assert metric_total(text, LATEST.metrics.requests) == 12.0
    assert verify_calls_by_rank(text) == {"0": 300.0, "1": 100.0}
    assert metric_total(text, "sglang:num_requests_created") is not None  # not summed in


@pytest.mark.parametrize(
    ("text", "total"),
    [
        # A sample with a timestamp: the hand-written reader took the timestamp for the value.
        ('sglang:num_requests_total{dp_rank="0"} 4.0 1764590000000\n', 4.0),
        # An escaped quote and a space in a label value.
        ('sglang:num_requests_total{model_name="a \\"b\\" c"} 2.0\n', 2.0),
    ],
)
def test_what_the_hand_written_reader_misread(text, total):
    assert metric_total(text, LATEST.metrics.requests) == total


def test_text_that_is_not_prometheus_format_is_named():
    with pytest.raises(ValueError, match="/metrics is not Prometheus text format"):
        metric_total("sglang:num_requests_total{dp_rank=0 oops\n", LATEST.metrics.requests)
