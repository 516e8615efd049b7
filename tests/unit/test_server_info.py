"""The one reader of SGLang's server side (``backends.server_info``), on recorded bodies.

Each SGLang release in the key table has a fixture; a new release's keys are an edit of the table
plus a fixture here.
"""

from __future__ import annotations

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
LAYOUT_23 = DATA / "sglang-0.5.23-layout" / "server_info.json"  # derived, see its README
KEY = "effective_max_running_requests_per_dp"


def body(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


# (fixture, version, accept length per rank, running limit, speculative_algorithm, env exposed)
CASES = [
    (LIVE_19 / "server_info_after_requests.json", "0.5.19", {"0": 1.74375}, 48, "STANDALONE", True),
    (LIVE_19 / "server_info_before_requests.json", "0.5.19", {}, 48, "STANDALONE", True),
    (LAYOUT_23, "0.5.23", {"0": 2.79, "1": 2.61}, 96, "EAGLE", True),
]


@pytest.mark.parametrize(
    ("path", "version", "accept", "limit", "algorithm", "env"),
    CASES,
    ids=lambda v: v.parent.name + "/" + v.name if isinstance(v, Path) else None,
)
def test_recorded_bodies_parse(
    path: Path, version: str, accept: dict, limit: int, algorithm: str, env: bool
) -> None:
    info = ServerInfo.parse(body(path))
    assert info.version == version
    assert info.keys is SURFACE_BY_VERSION[version]
    assert dict(info.accept_length_by_rank) == accept
    assert info.running_limit() == limit
    assert info.setting("speculative_algorithm") == (True, algorithm)
    assert (info.env_vars is not None) is env
    assert info.env_vars is None or info.env_vars["SGLANG_EXPOSE_OWN_ENV_VARS"] == "1"


@pytest.mark.parametrize(
    ("version", "path"),
    [("0.5.19", LIVE_19 / "server_info_after_requests.json"), ("0.5.23", LAYOUT_23)],
)
def test_every_key_of_the_table_is_in_its_release_fixture(version: str, path: Path) -> None:
    keys, raw = SURFACE_BY_VERSION[version], body(path)
    assert {keys.version, keys.dp_size, keys.states} <= raw.keys()
    state = raw[keys.states][0]
    assert {keys.accept_length, keys.running_limit, keys.env_vars} <= state.keys()


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


def test_prometheus_readers() -> None:
    assert metric_total(METRICS, LATEST.metrics.verify_calls) == 400.0
    assert metric_total(METRICS, LATEST.metrics.generation_tokens) == 900.0
    assert metric_total(METRICS, LATEST.metrics.requests) is None
    assert verify_calls_by_rank(METRICS) == {"0": 300.0, "1": 100.0}
    assert metric_by_label(METRICS, LATEST.metrics.generation_tokens, "dp_rank") == {}
    assert verify_calls_by_rank(None) == {}
