from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipeline.concurrency import (
    client_concurrency,
    expected_lengths,
    longest_first,
    server_concurrency,
)

LIVE = Path(__file__).parents[1] / "data" / "live-sglang-0.5.19"
KEY = "effective_max_running_requests_per_dp"


def info(limits: list[Any], dp_size: Any = 1) -> dict[str, Any]:
    return {"dp_size": dp_size, "internal_states": [{KEY: x} for x in limits]}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (info([48]), 48),
        (info([48], dp_size=4), 192),  # one state standing for four ranks
        (info([48, 48, 48, 48], dp_size=4), 192),  # one state per rank
        (info([32, 16], dp_size=2), 48),  # ranks may differ
        (info([10, 10], dp_size=4), 40),  # two states, two ranks each
        ({"internal_states": [{KEY: 7}]}, 7),  # dp_size absent: one rank
        ({}, None),  # not SGLang
        ({"internal_states": []}, None),
        ({"internal_states": [{"other": 1}]}, None),  # older SGLang without the key
        ({"internal_states": "x"}, None),
    ],
)
def test_server_concurrency(body: dict[str, Any], expected: int | None) -> None:
    assert server_concurrency(body) == expected


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (info([0]), r"internal_states\[0\]\.effective_max_running_requests_per_dp=0"),
        (info([48, "48"], dp_size=2), r"internal_states\[1\].*'48'"),
        (info([True]), r"internal_states\[0\].*True"),
        (info([48], dp_size=0), r"dp_size=0"),
        (info([48], dp_size=None), r"dp_size=None"),
    ],
)
def test_server_concurrency_rejects_bad_values(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        server_concurrency(body)


@pytest.mark.parametrize("name", ["server_info_before_requests", "server_info_after_requests"])
def test_live_sglang_server_info_gives_its_running_limit(name: str) -> None:
    body = json.loads((LIVE / f"{name}.json").read_text())
    assert server_concurrency(body) == 48  # speculative decoding: SGLang's default limit


@pytest.mark.parametrize(
    ("body", "configured", "expected"),
    [(info([48]), 64, 48), (info([48], dp_size=8), 64, 384), ({}, 64, 64), ({}, 3, 3)],
)
def test_client_concurrency(body: dict[str, Any], configured: int, expected: int) -> None:
    assert client_concurrency(body, configured) == expected


def rec(qid: str, tokens: Any) -> dict[str, Any]:
    return {"question_id": qid, "repeat": 0, "completion_tokens": tokens}


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([], {}),
        ([rec("a", 10), rec("a", 30), rec("b", 5)], {"a": 20.0, "b": 5.0}),
        ([rec("a", None), rec("a", 4)], {"a": 4.0}),  # failed requests carry no length
        ([rec("a", True), rec("b", "7")], {}),  # not token counts
        ([{"completion_tokens": 5}], {}),  # no question
    ],
)
def test_expected_lengths(records: list[dict[str, Any]], expected: dict[str, float]) -> None:
    assert expected_lengths(records) == expected


@dataclass(frozen=True)
class Prompt:
    question_id: str
    repeat: int


def ids(prompts: list[Prompt]) -> list[str]:
    return [f"{p.question_id}{p.repeat}" for p in prompts]


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([], ["a0", "b0", "c0", "a1", "b1", "c1"]),  # nothing known: order kept
        (
            [rec("a", 10), rec("b", 900), rec("c", 50)],
            ["b0", "b1", "c0", "c1", "a0", "a1"],
        ),
        ([rec("a", 10), rec("c", 50)], ["b0", "b1", "c0", "c1", "a0", "a1"]),  # unknown first
        ([rec("a", 5), rec("b", 5), rec("c", 5)], ["a0", "b0", "c0", "a1", "b1", "c1"]),  # ties
    ],
)
def test_longest_first(records: list[dict[str, Any]], expected: list[str]) -> None:
    prompts = [Prompt(q, r) for r in (0, 1) for q in "abc"]
    ordered = longest_first(prompts, records)
    assert ids(ordered) == expected
    assert ids(prompts) == ["a0", "b0", "c0", "a1", "b1", "c1"]  # the input is left alone
