from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from evals.responses import (
    ChatResult,
    ResponseFormatError,
    SpecStats,
    parse_chat_response,
    parse_chat_stream,
    prefill_seconds,
    stats_request_flags,
)
from tests.helpers.chat_bodies import BODY, STREAM, delta_chunk

LIVE = Path(__file__).resolve().parents[1] / "data" / "live-sglang-0.5.19"  # a live server's bodies
LIVE_FILES = ["chat_completion_2.json", "chat_completion_return_meta_info_and_spec_details.json"]
ALIASES = ("spec_accepted_drafts", "spec_proposed_drafts", "spec_accept_histogram")
CANONICAL = ("spec_num_correct_drafts", "spec_num_proposed_drafts", "spec_correct_drafts_histogram")


def expected_spec(source: str) -> SpecStats:
    return SpecStats(29, 34, 87, 64, 2.206896551724138, 0.39080459770114945, (10, 11, 1, 7), source)


def body_without(*, sglext: bool = True, meta_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    body = copy.deepcopy(BODY)
    if not sglext:
        del body["sglext"]
    for key in meta_keys:
        del body["choices"][0]["meta_info"][key]
    return body


@pytest.mark.parametrize("name", LIVE_FILES)
def test_live_responses_parse_with_sglext_preferred(name: str) -> None:
    path = LIVE / name
    body = json.loads(path.read_text())
    result = parse_chat_response(body)
    meta = body["choices"][0]["meta_info"]
    assert result.spec is not None and result.spec.source == "sglext"
    assert result.spec.verify_ct == meta["spec_verify_ct"]
    assert result.spec.completion_tokens == body["usage"]["completion_tokens"]
    assert result.spec.histogram == tuple(meta["spec_correct_drafts_histogram"])
    assert (
        result.finish_reason == "length"
        and result.content == body["choices"][0]["message"]["content"]
    )


# (file, forward_entry_time, prefill_finished_time) as a real 0.5.19 server with --enable-metrics
# wrote them (tests/data/live-sglang-0.5.19/).
LIVE_PREFILL = [
    ("chat_completion_2.json", 1795945487.1061804, 1795945487.1522942),
    (LIVE_FILES[1], 1795945485.4710093, 1795945485.5178778),
]


@pytest.mark.parametrize(("name", "start", "end"), LIVE_PREFILL)
def test_live_responses_carry_the_prefill_time(name: str, start: float, end: float) -> None:
    result = parse_chat_response(json.loads((LIVE / name).read_text()))
    assert result.prefill_s == end - start and 0.04 < end - start < 0.05


def test_live_generate_meta_info_gives_the_prefill_time() -> None:
    meta = json.loads((LIVE / "generate.json").read_text())["meta_info"]
    assert prefill_seconds(meta) == 1795945487.5484264 - 1795945487.5047


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"forward_entry_time": 100.0, "prefill_finished_time": 100.25}, 0.25),
        ({"forward_entry_time": 100, "prefill_finished_time": 101}, 1.0),  # JSON integers
        ({"forward_entry_time": 5.0, "prefill_finished_time": 5.0}, 0.0),
        ({"forward_entry_time": 100.0}, None),  # a key absent
        ({"prefill_finished_time": 100.0}, None),
        ({}, None),  # no --enable-metrics
        ({"forward_entry_time": "100", "prefill_finished_time": 101.0}, None),
        ({"forward_entry_time": 100.0, "prefill_finished_time": None}, None),
        ({"forward_entry_time": True, "prefill_finished_time": 2.0}, None),  # a bool is no time
        ({"forward_entry_time": 100.0, "prefill_finished_time": float("nan")}, None),
        ({"forward_entry_time": 101.0, "prefill_finished_time": 100.0}, None),  # negative
        (None, None),
        ([100.0, 101.0], None),
    ],
)
def test_prefill_seconds(meta: object, expected: float | None) -> None:
    assert prefill_seconds(meta) == expected


def test_prefill_time_is_none_without_meta_info_or_in_a_stream() -> None:
    assert parse_chat_response(body_without()).prefill_s is None  # no timing keys
    no_meta = copy.deepcopy(BODY)
    del no_meta["choices"][0]["meta_info"]
    assert parse_chat_response(no_meta).prefill_s is None
    assert parse_chat_stream(STREAM).prefill_s is None


@pytest.mark.parametrize(
    ("body", "source"),
    [
        (BODY, "sglext"),
        (body_without(sglext=False), "meta_info"),
        (body_without(sglext=False, meta_keys=ALIASES), "meta_info"),  # 0.5.21+ keys
        (body_without(sglext=False, meta_keys=CANONICAL), "meta_info"),  # aliases only
    ],
    ids=["sglext", "meta_info_0.5.19", "meta_info_0.5.21+", "meta_info_aliases_only"],
)
def test_spec_from_either_shape_and_key_set(body: dict[str, Any], source: str) -> None:
    result = parse_chat_response(body)
    assert result == ChatResult("Answer: B", None, "length", 20, 64, expected_spec(source))


def test_bad_sglext_falls_back_to_meta_info() -> None:
    body = copy.deepcopy(BODY)
    del body["sglext"]["spec_tokens_details"]["spec_verify_ct"]
    assert parse_chat_response(body).spec == expected_spec("meta_info")


def test_sglext_list_for_n_greater_than_one_picks_the_choice() -> None:
    body = copy.deepcopy(BODY)
    second = dict(body["sglext"]["spec_tokens_details"], spec_verify_ct=32, spec_accept_length=2.0)
    body["sglext"]["spec_tokens_details"] = [body["sglext"]["spec_tokens_details"], second]
    body["choices"].append(copy.deepcopy(body["choices"][0]) | {"index": 1})
    assert parse_chat_response(body, choice=1).spec.verify_ct == 32  # type: ignore[union-attr]
    assert parse_chat_response(body, choice=0).spec.verify_ct == 29  # type: ignore[union-attr]


def test_completion_tokens_recovered_when_no_usage_or_meta() -> None:
    body = {"choices": [{"message": {"content": "x"}}], "sglext": BODY["sglext"]}
    result = parse_chat_response(body)
    assert result.completion_tokens is None
    assert result.spec is not None and result.spec.completion_tokens == 64  # 2.2069 * 29


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.pop("sglext") and b["choices"][0].pop("meta_info"),
        lambda b: b.pop("sglext") and b["choices"][0]["meta_info"].pop("spec_verify_ct"),
        lambda b: b.pop("sglext") and b["choices"][0]["meta_info"].update(spec_verify_ct="29"),
        lambda b: b.pop("sglext") and b["choices"][0]["meta_info"].update(spec_accept_rate=True),
        lambda b: (
            b.update(sglext={"spec_tokens_details": None}) or b["choices"][0].pop("meta_info")
        ),
    ],
    ids=["no_spec_at_all", "missing_verify_ct", "string_count", "bool_rate", "null_details"],
)
def test_missing_or_bad_spec_keys_give_none(mutate: Any) -> None:
    body = copy.deepcopy(BODY)
    mutate(body)
    result = parse_chat_response(body)
    assert result.spec is None and result.content == "Answer: B"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("not json object", "body"),
        (None, "body"),
        ({}, "choices"),
        ({"choices": {}}, "choices"),
        ({"choices": []}, "choices[0]"),
        ({"choices": [3]}, "choices[0]"),
        ({"choices": [{}]}, "choices[0].message"),
        ({"choices": [{"message": {"content": 5}}]}, "choices[0].message.content"),
        ({"choices": [{"message": {}, "finish_reason": 1}]}, "choices[0].finish_reason"),
    ],
)
def test_garbage_raises_naming_the_field(body: object, field: str) -> None:
    with pytest.raises(ResponseFormatError) as err:
        parse_chat_response(body)
    assert str(err.value).startswith(field)


def test_stream_assembles_deltas_usage_and_sglext() -> None:
    result = parse_chat_stream(STREAM)
    assert result == ChatResult("Answer: C", "think hard", "stop", 20, 64, expected_spec("sglext"))


def test_stream_without_spec_or_usage() -> None:
    result = parse_chat_stream(STREAM[:6])
    assert (result.content, result.spec, result.completion_tokens) == ("Answer: C", None, None)


def test_stream_picks_its_choice_index() -> None:
    chunks = [delta_chunk(0, content="a"), delta_chunk(1, content="b"), delta_chunk(1, "stop")]
    assert parse_chat_stream(chunks, choice=1).content == "b"
    assert parse_chat_stream(chunks, choice=1).finish_reason == "stop"


@pytest.mark.parametrize(
    ("chunks", "field"),
    [
        ([5], "chunks[0]"),
        ([delta_chunk(content="a"), {"object": "error", "message": "boom"}], "chunks[1].choices"),
        ([{"choices": [None]}], "chunks[0].choices[0]"),
        ([{"choices": [{"delta": "x"}]}], "chunks[0].choices[0].delta"),
        ([{"choices": []}], "choices[0]"),
        ([], "choices[0]"),
    ],
)
def test_stream_garbage_raises_naming_the_field(chunks: list[Any], field: str) -> None:
    with pytest.raises(ResponseFormatError) as err:
        parse_chat_stream(chunks)
    assert str(err.value).startswith(field)


def test_stream_error_chunk_keeps_the_server_message() -> None:
    with pytest.raises(ResponseFormatError, match="boom"):
        parse_chat_stream([{"object": "error", "message": "boom"}])


@pytest.mark.parametrize(
    ("stream", "flags"),
    [
        (False, {"return_meta_info": True, "return_spec_tokens_details": True}),
        (True, {"return_spec_tokens_details": True}),  # SGLang rejects meta_info on a stream
    ],
)
def test_stats_request_flags(stream: bool, flags: dict[str, bool]) -> None:
    assert stats_request_flags(stream) == flags
