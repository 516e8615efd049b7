"""A chat completion body and a streamed one as SGLang 0.5.19 sends them (parsers, fuzzing)."""

from __future__ import annotations

from typing import Any

# chat_completion_2.json, written out so the tests also run where /work/shared is absent.
BODY: dict[str, Any] = {
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Answer: B", "reasoning_content": None},
            "finish_reason": "length",
            "meta_info": {
                "finish_reason": {"type": "length", "length": 64},
                "prompt_tokens": 20,
                "completion_tokens": 64,
                "spec_accept_rate": 0.39080459770114945,
                "spec_accept_length": 2.206896551724138,
                "spec_num_correct_drafts": 34,
                "spec_num_proposed_drafts": 87,
                "spec_verify_ct": 29,
                "spec_accepted_drafts": 34,
                "spec_proposed_drafts": 87,
                "spec_correct_drafts_histogram": [10, 11, 1, 7],
                "spec_accept_histogram": [10, 11, 1, 7],
            },
        }
    ],
    "usage": {"prompt_tokens": 20, "total_tokens": 84, "completion_tokens": 64},
    "sglext": {
        "spec_tokens_details": {
            "spec_accept_rate": 0.39080459770114945,
            "spec_accept_length": 2.206896551724138,
            "spec_cap_length": 0.0,
            "spec_block_accept_length": 0.0,
            "spec_num_correct_drafts": 34,
            "spec_num_proposed_drafts": 87,
            "spec_verify_ct": 29,
            "spec_correct_drafts_histogram": [10, 11, 1, 7],
            "spec_cap_lens_histogram": [],
        }
    },
}


def delta_chunk(index: int = 0, finish: str | None = None, **delta: str) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": delta, "finish_reason": finish}]}


STREAM = [
    delta_chunk(role="assistant", content=""),
    delta_chunk(reasoning_content="think "),
    delta_chunk(reasoning_content="hard"),
    delta_chunk(content="Answer"),
    delta_chunk(content=": C"),
    delta_chunk(finish="stop"),
    {"choices": [], "sglext": BODY["sglext"]},
    {"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 64, "total_tokens": 84}},
]
