"""Fuzzing the parsers of untrusted text: SGLang's response bodies and the answer extractors.

Hundreds of generated inputs per test (seconds of CPU), hence this tier rather than the unit one.
A malformed body may only raise ``ResponseFormatError``; an extractor never raises and returns
one of the letters asked for, or a number.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.grading import extract_mcq_letter, extract_number
from evals.responses import ChatResult, ResponseFormatError, parse_chat_response, parse_chat_stream
from tests.helpers.chat_bodies import BODY, STREAM

pytestmark = pytest.mark.integration

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "choices",
        "message",
        "content",
        "meta_info",
        "sglext",
        "spec_tokens_details",
        "usage",
        "spec_verify_ct",
        "spec_accept_length",
        "spec_accept_rate",
        "spec_num_correct_drafts",
        "spec_num_proposed_drafts",
        "spec_correct_drafts_histogram",
        "delta",
        "index",
        "finish_reason",
        "completion_tokens",
    ]
)


def mutated(body: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace random subtrees of a valid response with arbitrary JSON."""
    if data.draw(st.integers(0, 5)) == 0:
        return data.draw(JSON)
    if isinstance(body, dict):
        out = {k: mutated(v, data, depth + 1) for k, v in body.items()}
        if data.draw(st.booleans()):
            out[data.draw(KEYS)] = data.draw(JSON)
        return out
    if isinstance(body, list):
        return [mutated(v, data, depth + 1) for v in body]
    return body


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fuzz_response_raises_only_format_error(data: st.DataObject) -> None:
    body = mutated(BODY, data)
    try:
        result = parse_chat_response(body, choice=data.draw(st.integers(-1, 2)))
    except ResponseFormatError:
        return
    assert isinstance(result, ChatResult)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fuzz_stream_raises_only_format_error(data: st.DataObject) -> None:
    chunks = mutated(STREAM, data)
    try:
        parse_chat_stream(chunks if isinstance(chunks, list) else [chunks])
    except ResponseFormatError:
        return


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_fuzz_arbitrary_json_raises_only_format_error(body: Any) -> None:
    for parse in (lambda: parse_chat_response(body), lambda: parse_chat_stream([body])):
        with contextlib.suppress(ResponseFormatError):
            parse()


ANSWERISH = st.lists(
    st.sampled_from(
        [
            "Answer",
            ":",
            "**",
            "(",
            ")",
            "\\boxed{",
            "}",
            "\\text{",
            " ",
            "\n",
            "A",
            "B",
            "E",
            "b",
            "$",
            "#### ",
            "1,2",
            ".5",
            "-",
            "final answer is",
            "the answer is",
        ]
    )
    | st.text(max_size=8),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(ANSWERISH, st.sampled_from(["ABCD", "ABCDEFGHIJ", "A"]))
def test_fuzz_extractors_never_raise(text: str, letters: str) -> None:
    letter = extract_mcq_letter(text, letters)
    assert letter is None or letter in letters
    number = extract_number(text)
    assert number is None or number.lstrip("-").replace(".", "", 1).isdigit()
