from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from backends.server_info import ServerInfo
from pipeline.measuring.concurrency import client_concurrency, expected_lengths, longest_first

KEY = "effective_max_running_requests_per_dp"


def info(limits: list[Any], dp_size: Any = 1) -> ServerInfo:
    return ServerInfo.parse({"dp_size": dp_size, "internal_states": [{KEY: x} for x in limits]})


@pytest.mark.parametrize(
    ("body", "configured", "expected"),
    [
        (info([48]), 64, 48),
        (info([48], dp_size=8), 64, 384),
        (ServerInfo.parse({}), 64, 64),
        (ServerInfo.parse({}), 3, 3),
    ],
)
def test_client_concurrency(body: ServerInfo, configured: int, expected: int) -> None:
    assert client_concurrency(body, configured) == expected


def test_client_concurrency_rejects_a_bad_limit() -> None:
    with pytest.raises(ValueError, match=r"internal_states\[0\].*=0"):
        client_concurrency(info([0]), 64)


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
