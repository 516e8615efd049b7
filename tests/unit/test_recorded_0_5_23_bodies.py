"""The pipeline's body readers on the real SGLang 0.5.23 replies (tests/data/live-sglang-0.5.23).

Chat (with meta_info and spec details), the raw SSE stream through the client's own SSE decoder,
and native ``/generate``'s meta_info: each read with the reader the pipeline uses, the figures
checked against the recorded numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.replies import SseBuffer
from evals.responses import parse_chat_response, parse_chat_stream

LIVE = Path(__file__).parents[1] / "data" / "live-sglang-0.5.23"


def live(name: str) -> Any:
    return json.loads((LIVE / name).read_text())


def test_chat_reply_gives_the_recorded_spec_figures():
    body = live("chat_completion_return_meta_info_and_spec_details.json")
    meta = body["choices"][0]["meta_info"]
    parsed = parse_chat_response(body)
    assert (parsed.content, parsed.finish_reason) == ("8=V", "stop")
    assert (parsed.prompt_tokens, parsed.completion_tokens) == (61, 4)
    spec = parsed.spec
    assert spec is not None and spec.source == "sglext"
    assert (spec.verify_ct, spec.num_correct_drafts, spec.num_proposed_drafts) == (3, 0, 9)
    assert spec.histogram == (3,) and spec.accept_length == pytest.approx(4 / 3)
    # SGLang's identity: completion tokens = 1 (prefill) + verify steps + correct drafts.
    assert parsed.completion_tokens == 1 + spec.verify_ct + spec.num_correct_drafts
    prefill = meta["prefill_finished_time"] - meta["forward_entry_time"]
    assert parsed.prefill_s == pytest.approx(prefill)


def _decoded_chunks(text: str) -> tuple[list[Any], bool]:
    buffer, chunks = SseBuffer(), []
    for line in text.split("\n"):
        data = buffer.feed(line)
        if data is not None:
            chunks.append(json.loads(data))
    return chunks, buffer.done


def test_stream_read_by_the_client_decoder_gives_the_reply():
    chunks, done = _decoded_chunks((LIVE / "chat_completion_stream.txt").read_text())
    assert done and len(chunks) == 6  # role, 3 content, finish, usage
    parsed = parse_chat_stream(chunks)
    assert (parsed.content, parsed.finish_reason) == ("8=V", "stop")
    assert (parsed.prompt_tokens, parsed.completion_tokens) == (61, 4)
    assert parsed.spec is None  # the stream asked for no spec details


def test_generate_meta_info_has_the_chat_meta_info_keys():
    # /generate's meta_info is the chat's (the same tokenizer-manager dict), figures of its own.
    gen = live("generate.json")["meta_info"]
    chat = live("chat_completion_return_meta_info_and_spec_details.json")["choices"][0]
    assert set(gen) == set(chat["meta_info"])
    assert gen["finish_reason"] == {"type": "length", "length": 48}
    # Cut at max_new_tokens: a last step's accepted token past the limit is dropped (49 -> 48).
    assert 1 + gen["spec_verify_ct"] + gen["spec_num_correct_drafts"] == 49
    assert gen["completion_tokens"] == 48
    assert gen["spec_accept_length"] == pytest.approx(48 / 28)  # completion / verify steps
    assert sum(gen["spec_correct_drafts_histogram"]) == gen["spec_verify_ct"]
