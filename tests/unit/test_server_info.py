"""The one reader of SGLang's server side (``backends.server_info``), on recorded bodies.

Each SGLang release with a live recording has its bodies here (``tests/data/live-sglang-*``);
a new release's keys are an edit of the table plus its recording. Multi-rank reading is held by
a two-DP-rank body derived in this file from the real 0.5.23 one (``two_dp_ranks``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from backends.server_info import (
    LATEST,
    SURFACE_BY_VERSION,
    ServerInfo,
    metric_by_label,
    metric_total,
    surface_for,
    verify_calls_by_rank,
)

DATA = Path(__file__).parents[1] / "data"
LIVE_19 = DATA / "live-sglang-0.5.19"
LIVE_23 = DATA / "live-sglang-0.5.23"
KEY = "effective_max_running_requests_per_dp"


def body(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def two_dp_ranks(path: Path) -> dict[str, Any]:
    """A real body served as two DP ranks: ``dp_size`` 2, one state per rank with its own figures.

    Derived, not recorded (the live run had one GPU): each rank gets half the recorded running
    limit and an accept length of its own, as SGLang reports per rank.
    """
    raw = body(path)
    raw.update(dp_size=2, enable_dp_attention=True)
    first = raw["internal_states"][0]
    ranks = [copy.deepcopy(first) for _ in range(2)]
    for rank, accept in zip(ranks, (2.79, 2.61), strict=True):
        rank.update(dp_size=2, enable_dp_attention=True, avg_spec_accept_length=accept)
        rank[KEY] = first[KEY] // 2
    raw["internal_states"] = ranks
    return raw


AFTER_23 = LIVE_23 / "server_info_after_requests.json"
# (body, version, accept length per rank, running limit, speculative_algorithm, env exposed)
CASES = [
    ("0.5.19-after", body(LIVE_19 / "server_info_after_requests.json"), "0.5.19", {"0": 1.74375},
     48, "STANDALONE", True),
    ("0.5.19-before", body(LIVE_19 / "server_info_before_requests.json"), "0.5.19", {}, 48,
     "STANDALONE", True),
    # Three short requests stay under one decode log interval: no accept length published yet.
    ("0.5.23-after", body(AFTER_23), "0.5.23", {}, 128, "STANDALONE", True),
    ("0.5.23-before", body(LIVE_23 / "server_info_before_requests.json"), "0.5.23", {}, 128,
     "STANDALONE", True),
    ("0.5.23-two-dp-ranks (derived)", two_dp_ranks(AFTER_23), "0.5.23", {"0": 2.79, "1": 2.61},
     128, "STANDALONE", True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "version", "accept", "limit", "algorithm", "env"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_recorded_bodies_parse(
    raw: dict[str, Any], version: str, accept: dict, limit: int, algorithm: str, env: bool
) -> None:
    info = ServerInfo.parse(raw)
    assert info.version == version
    assert info.keys is SURFACE_BY_VERSION[version]
    assert dict(info.accept_length_by_rank) == accept
    assert info.running_limit() == limit
    assert info.setting("speculative_algorithm") == (True, algorithm)
    assert (info.env_vars is not None) is env
    assert info.env_vars is None or info.env_vars["SGLANG_EXPOSE_OWN_ENV_VARS"] == "1"


@pytest.mark.parametrize(
    ("version", "path"),
    [("0.5.19", LIVE_19 / "server_info_after_requests.json"), ("0.5.23", AFTER_23)],
)
def test_every_key_of_the_table_is_in_its_release_recording(version: str, path: Path) -> None:
    keys, raw = SURFACE_BY_VERSION[version], body(path)
    assert {keys.version, keys.dp_size, keys.states, *keys.start_keys[:1]} <= raw.keys()
    state = raw[keys.states][0]
    assert {keys.running_limit, keys.env_vars} <= state.keys()
    if version == "0.5.19":
        assert keys.accept_length in state


def test_0_5_23_reports_its_accept_length_under_the_table_key() -> None:
    # The 0.5.23 recording ran too few verify steps to publish avg_spec_accept_length (one decode
    # log interval, 40); the live 0.5.23 sign-off cells, read with the same table, got it.
    cells = sorted(DATA.parents[1].glob(
        "benchmarks/results/live-h200/signoff-0.5.23/cells/*/*/result.json"
    ))  # fmt: skip
    assert cells
    accept = json.loads(cells[0].read_text())["accept"]
    assert accept["server_avg_spec_accept_length"] > 1.0


def test_0_5_23_start_marks_are_read() -> None:
    info = ServerInfo.parse(body(AFTER_23))
    assert set(info.start) == {"startup_time", "launch_command"}
    assert str(info.start["launch_command"]).startswith("--model-path ")


def test_0_5_20_without_a_fixture_reads_like_its_neighbours() -> None:
    # 0.5.20 has no recorded body: its keys are those of 0.5.19 and 0.5.23 (read from its wheel).
    assert SURFACE_BY_VERSION["0.5.20"] == SURFACE_BY_VERSION["0.5.19"]
    assert {f.name for f in fields(LATEST)} >= {"states", "accept_length", "running_limit"}


@pytest.mark.parametrize(
    ("version", "entry"),
    [
        ("0.5.19", "0.5.19"),
        ("0.5.20.post1", "0.5.20"),
        ("0.5.21", "0.5.21"),
        ("0.5.22.post1", "0.5.22"),  # between two entries: the older one's keys
        ("0.5.23rc1", "0.5.22"),
        ("v0.5.23+cu130", "0.5.23"),
        ("0.6.0", "0.5.23"),
        ("0.5.17", "0.5.19"),  # before the first entry: the first's
    ],
)
def test_surface_for_picks_the_release_entry(version: str, entry: str) -> None:
    assert surface_for(version) is SURFACE_BY_VERSION[entry]


@pytest.mark.parametrize("version", [None, "", "not-a-version"])
def test_surface_for_unknown_is_the_latest(version: str | None) -> None:
    assert surface_for(version) is LATEST


def states(limits: list[Any], dp_size: Any = 1) -> dict[str, Any]:
    return {"dp_size": dp_size, "internal_states": [{KEY: x} for x in limits]}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (states([48]), 48),
        (states([48], dp_size=4), 192),  # one state standing for four ranks
        (states([48, 48, 48, 48], dp_size=4), 192),  # one state per rank
        (states([32, 16], dp_size=2), 48),  # ranks may differ
        (states([10, 10], dp_size=4), 40),  # two states, two ranks each
        ({"internal_states": [{KEY: 7}]}, 7),  # dp_size absent: one rank
        ({}, None),  # not SGLang
        ({"internal_states": []}, None),
        ({"internal_states": [{"other": 1}]}, None),  # older SGLang without the key
        ({"internal_states": "x"}, None),
    ],
)
def test_running_limit(raw: dict[str, Any], expected: int | None) -> None:
    assert ServerInfo.parse(raw).running_limit() == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (states([0]), r"internal_states\[0\]\.effective_max_running_requests_per_dp=0"),
        (states([48, "48"], dp_size=2), r"internal_states\[1\].*'48'"),
        (states([True]), r"internal_states\[0\].*True"),
        (states([48], dp_size=0), r"dp_size=0"),
        (states([48], dp_size=None), r"dp_size=None"),
    ],
)
def test_running_limit_rejects_bad_values(raw: dict[str, Any], message: str) -> None:
    info = ServerInfo.parse(raw)  # parsing a bad limit is fine: only sizing the client fails
    with pytest.raises(ValueError, match=message):
        info.running_limit()


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        ({"page_size": 64, "internal_states": [{"page_size": 1}]}, "page_size", (True, 64)),
        ({"internal_states": [{"kv_cache_dtype": "auto"}]}, "kv_cache_dtype", (True, "auto")),
        ({"speculative_algorithm": None}, "speculative_algorithm", (True, None)),
        ({}, "speculative_algorithm", (False, None)),
        ({"internal_states": [{"x": 1}]}, "internal_states", (False, None)),
    ],
)
def test_setting_top_level_first_then_first_state(
    raw: dict[str, Any], key: str, expected: tuple[bool, object]
) -> None:
    assert ServerInfo.parse(raw).setting(key) == expected


@pytest.mark.parametrize(
    ("raw", "version", "env"),
    [
        ({"version": 5}, None, None),  # not a string: no version
        ({"internal_states": [{"env_vars": "x"}]}, None, None),
        ({"internal_states": [{"env_vars": {"A": "1"}}]}, None, {"A": "1"}),
    ],
)
def test_odd_bodies(raw: dict[str, Any], version: str | None, env: dict | None) -> None:
    info = ServerInfo.parse(raw)
    assert (info.version, info.env_vars) == (version, env)


METRICS = """\
# TYPE sglang:spec_verify_calls_total counter
sglang:spec_verify_calls_total{dp_rank="0",model_name="m"} 300.0
sglang:spec_verify_calls_total{dp_rank="1",model_name="m"} 100.0
sglang:spec_verify_calls_total_extra{dp_rank="0"} 7.0
sglang:generation_tokens_total{model_name="m"} 900.0
"""


def test_prometheus_readers_on_the_recorded_0_5_23_metrics() -> None:
    # 4 requests: SGLang's own warm-up /generate and the recording's chat, stream and /generate.
    text = (LIVE_23 / "metrics.txt").read_text()
    assert metric_total(text, LATEST.metrics.requests) == 4.0
    assert metric_total(text, LATEST.metrics.generation_tokens) == 62.0  # both is_streaming
    assert metric_total(text, LATEST.metrics.verify_calls) == 39.0
    assert metric_total(text, LATEST.metrics.running) == 0.0
    assert verify_calls_by_rank(text) == {}  # one rank: no dp_rank label
    by_stream = metric_by_label(text, LATEST.metrics.requests, "is_streaming")
    assert by_stream == {"false": 3.0, "true": 1.0}


def test_prometheus_readers() -> None:
    assert metric_total(METRICS, LATEST.metrics.verify_calls) == 400.0
    assert metric_total(METRICS, LATEST.metrics.generation_tokens) == 900.0
    assert metric_total(METRICS, LATEST.metrics.requests) is None
    assert verify_calls_by_rank(METRICS) == {"0": 300.0, "1": 100.0}
    assert metric_by_label(METRICS, LATEST.metrics.generation_tokens, "dp_rank") == {}
    assert verify_calls_by_rank(None) == {}
