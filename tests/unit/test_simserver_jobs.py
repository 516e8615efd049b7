"""Parsing chat and /generate bodies into jobs for the simulated server."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.simserver.jobs import MSG_META_STREAM, BadRequest, parse_chat, parse_generate

USER = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is 2+2?"}]


def test_chat_job() -> None:
    job = parse_chat(
        {"model": "m", "messages": USER, "max_tokens": 50, "n": 2, "return_meta_info": True,
         "stream": False, "stream_options": {"include_usage": True}},
        "served",
    )  # fmt: skip
    assert (job.endpoint, job.cap, job.model, job.want_meta, job.include_usage) == (
        "chat", 50, "m", True, True,
    )  # fmt: skip
    first, second = job.items
    assert (
        first.question == "What is 2+2?" and first.prompt == "system: be brief\nuser: What is 2+2?"
    )
    assert second.prompt != first.prompt and second.question == first.question
    assert first.prompt_tokens == 2 + 3 + 4 * 2


def test_chat_content_parts_and_defaults() -> None:
    parts = [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image"}]}]
    job = parse_chat({"messages": parts, "max_completion_tokens": 7}, "served")
    assert (job.items[0].question, job.cap, job.model, job.stream) == ("Hi\n", 7, "served", False)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "messages: expected a non-empty list"),
        ({"messages": []}, "messages: expected a non-empty list"),
        ({"messages": USER, "n": 0}, "n=0: expected a positive integer"),
        ({"messages": USER, "max_tokens": -1}, "max_tokens=-1"),
        ({"messages": USER, "max_tokens": "9"}, "max_tokens='9'"),
        ({"messages": USER, "stream": True, "return_meta_info": True}, MSG_META_STREAM),
    ],
)
def test_bad_chat_bodies(body: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message.replace("(", r"\(")):
        parse_chat(body, "served")


@pytest.mark.parametrize(
    ("body", "prompts", "cap", "batch"),
    [
        ({"text": "hello there"}, ["hello there"], 128, False),
        ({"text": ["a", "b c"], "sampling_params": {"max_new_tokens": 5}}, ["a", "b c"], 5, True),
        ({"input_ids": [1, 2, 3]}, ["1 2 3"], 128, False),
        ({"input_ids": [[1], [2, 3]]}, ["1", "2 3"], 128, True),
    ],
)
def test_generate_jobs(body: dict[str, Any], prompts: list[str], cap: int, batch: bool) -> None:
    job = parse_generate(body, "served")
    assert [i.prompt for i in job.items] == prompts and (job.cap, job.batch) == (cap, batch)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "text: expected a string"),
        ({"text": [1]}, "text: expected a string"),
        ({"text": "x", "sampling_params": []}, "sampling_params: expected an object"),
        ({"text": ["a", "b"], "stream": True}, "stream=true is supported for a single text"),
        ({"text": "x", "sampling_params": {"max_new_tokens": -1}}, "max_new_tokens=-1"),
    ],
)
def test_bad_generate_bodies(body: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_generate(body, "served")
