from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from evals.base import RequestTarget
from evals.eval_conf import ClientConf, DatasetConf, EvalConf, SamplingConf
from evals.lm_eval_bridge import LmEvalError, LmEvalEval
from evals.lm_eval_model import (
    RequestLog,
    extra_body,
    gen_kwargs,
    model_args,
    prompt_key,
    recording_model_class,
)
from evals.lm_eval_records import answer_entry, build_records, json_safe, prompt_of

MESSAGES = [{"role": "user", "content": "Question: 2 + 2?"}]
PROMPT = json.dumps(MESSAGES)


def body(content: str = "The final answer is 4", finish: str = "stop", n: int = 1) -> dict:
    spec = {
        "spec_accept_rate": 0.5,
        "spec_accept_length": 2.5,
        "spec_num_correct_drafts": 6,
        "spec_num_proposed_drafts": 12,
        "spec_verify_ct": 4,
        "spec_correct_drafts_histogram": [1, 1, 1, 1],
    }
    return {
        "choices": [
            {
                "index": i,
                "message": {"content": content, "reasoning_content": "hmm"},
                "finish_reason": finish,
            }
            for i in range(n)
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 10},
        "sglext": {"spec_tokens_details": spec if n == 1 else [spec] * n},
    }


def lm_sample(doc_id: int, filt: str, value: Any, resps: int = 1, prompt: str = PROMPT) -> dict:
    return {
        "doc_id": doc_id,
        "doc": {},
        "target": "4",
        "arguments": [[[prompt], {"until": []}]],
        "resps": [["The final answer is 4"]] * resps,
        "filtered_resps": ["4"],
        "filter": filt,
        "metrics": ["exact_match"],
        "doc_hash": f"h{doc_id}",
        "exact_match": value,
    }


@pytest.mark.parametrize(
    ("target", "entry"),
    [
        ("B", {"answer": "B", "kind": "mcq"}),
        ("(C)", {"answer": "C", "kind": "mcq"}),
        (["A"], {"answer": "A", "kind": "mcq"}),
        ("Natalia sold 48 clips.\n#### 72", {"answer": "72", "kind": "numeric"}),
        ("42", {"answer": "42", "kind": "numeric"}),
        ("$1,000", {"answer": "1000", "kind": "numeric"}),
        (7, {"answer": "7", "kind": "numeric"}),
        ("Paris", None),
        ("the year 1066", None),  # a number inside prose is not an answer
        (True, None),
        (None, None),
        ([], None),
    ],
)
def test_answer_entry(target: object, entry: dict | None) -> None:
    got = answer_entry("Question: q", target)
    assert got == (None if entry is None else {"question": "Question: q", **entry})


@pytest.mark.parametrize(
    ("arguments", "prompt"),
    [
        ([[[PROMPT], {"until": []}]], PROMPT),  # JsonChatStr serialized as a one-item list
        ([["plain text", {}]], "plain text"),
        ([], None),
        (None, None),
        ("oops", None),
    ],
)
def test_prompt_of(arguments: object, prompt: str | None) -> None:
    assert prompt_of(arguments) == prompt


def test_json_safe() -> None:
    value = {"a": math.nan, "b": [np.float64(1.5), np.int64(2)], 3: (math.inf, "x"), "o": object}
    safe = json_safe(value)
    assert safe["a"] is None and safe["b"] == [1.5, 2] and safe["3"] == [None, "x"]
    json.dumps(safe, allow_nan=False)


def test_request_log_parses_each_response_with_spec_and_attempts() -> None:
    log = RequestLog()
    log.started(PROMPT)
    log.started(PROMPT)  # one retry
    log.record(PROMPT, body())
    log.record(PROMPT, {"not": "a chat completion"})
    first, second = log.take(PROMPT), log.take(PROMPT)
    assert first is not None and first.attempts == 2 and first.result is not None
    assert first.result.spec is not None and first.result.spec.verify_ct == 4
    assert first.result.reasoning_content == "hmm"
    assert second is not None and second.result is None and "choices" in (second.error or "")
    assert log.take(PROMPT) is None and log.all() == []


def test_request_log_keeps_every_choice_of_n() -> None:
    log = RequestLog()
    log.record(PROMPT, body(n=2))
    assert [r.result.spec.source for r in log.all() if r.result and r.result.spec] == ["sglext"] * 2


def test_build_records_joins_by_prompt_and_grades_on_the_first_filter() -> None:
    other = json.dumps([{"role": "user", "content": "Question: 3 + 3?"}])
    samples = [
        lm_sample(0, "strict", 1.0),
        lm_sample(1, "strict", 0.0, prompt=other),
        lm_sample(0, "flexible", 1.0),
        lm_sample(1, "flexible", 1.0, prompt=other),
    ]
    log = RequestLog()
    log.record(PROMPT, body())
    log.record(other, body(finish="length"))
    records, grading = build_records("t", samples, log)
    assert grading == {"filter": "strict", "metric": "exact_match", "binary": True}
    assert [r["meta"]["doc_id"] for r in records] == [0, 1]
    assert records[0]["correct"] is True and records[0]["spec"]["verify_ct"] == 4
    assert records[0]["prompt_tokens"] == 7 and records[0]["extracted"] == "4"
    assert records[1]["finish_reason"] == "length" and records[1]["correct"] is False
    assert records[0]["question_id"] != records[1]["question_id"]
    assert log.all() == []


def test_truncated_answer_is_never_correct_even_when_lm_eval_says_so() -> None:
    log = RequestLog()
    log.record(PROMPT, body(finish="length"))
    (rec,), _ = build_records("t", [lm_sample(0, "f", 1.0)], log)
    assert rec["correct"] is False and rec["finish_reason"] == "length"


def test_missing_response_is_an_error_never_correct() -> None:
    (rec,), _ = build_records("t", [lm_sample(0, "f", 1.0)], RequestLog())
    assert rec["error_kind"] == "missing_response" and rec["correct"] is False
    assert rec["response"] == "The final answer is 4"  # lm-eval's text is kept for reading


def test_repeats_take_one_response_each() -> None:
    log = RequestLog()
    for _ in range(3):
        log.record(PROMPT, body())
    records, _ = build_records("t", [lm_sample(0, "f", 1.0, resps=3)], log)
    assert [r["repeat"] for r in records] == [0, 1, 2]
    assert all(r["spec"] for r in records) and log.all() == []


def test_non_binary_metric_is_flagged() -> None:
    log = RequestLog()
    log.record(PROMPT, body())
    (rec,), grading = build_records("t", [lm_sample(0, "f", 0.37)], log)
    assert grading["binary"] is False and rec["correct"] is False


def test_invalid_extraction_is_no_answer() -> None:
    sample = {**lm_sample(0, "f", 0.0), "filtered_resps": ["[invalid]"]}
    log = RequestLog()
    log.record(PROMPT, body())
    (rec,), _ = build_records("t", [sample], log)
    assert rec["extracted"] is None


def target(**sampling: Any) -> RequestTarget:
    return RequestTarget(
        base_url="http://h:1",
        model="m",
        client=ClientConf(concurrency=8, max_retries=2, request_timeout_s=99.5, api_key="sekrit"),
        sampling=SamplingConf(**sampling),
        chat_template_kwargs={"enable_thinking": True},
    )


def test_gen_kwargs_carry_the_model_sampling() -> None:
    assert gen_kwargs(
        SamplingConf(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, max_tokens=32768)
    ) == {
        "max_gen_toks": 32768,
        "temperature": 0.6,
        "do_sample": True,
        "top_p": 0.95,
        "top_k": 20,
        "min_p": 0.0,
    }
    assert gen_kwargs(SamplingConf()) == {
        "max_gen_toks": 2048,
        "temperature": 0.0,
        "do_sample": False,
    }


def test_model_args_follow_the_cell_and_hide_the_key() -> None:
    args = model_args(target(max_tokens=5000, seed=7))
    assert args["base_url"] == "http://h:1/v1/chat/completions"
    assert args["num_concurrent"] == 8 and args["max_retries"] == 3 and args["timeout"] == 99
    assert args["max_gen_toks"] == 5000 and args["seed"] == 7
    assert "sekrit" not in json.dumps(args)


def test_payload_of_the_recording_model() -> None:
    # What lm-eval would send: our max_tokens (never its 256 default), sampling, thinking
    # kwargs, SGLang's statistics flags, the task's stop strings.
    tgt = target(max_tokens=4096, temperature=0.6, top_p=0.95, top_k=20)
    cls = recording_model_class()
    model = cls(RequestLog(), extra_body(tgt), **model_args(tgt))
    payload = model._create_payload(
        MESSAGES, generate=True, gen_kwargs={**gen_kwargs(tgt.sampling), "until": ["Q:"]}
    )
    assert payload["max_tokens"] == 4096 and payload["temperature"] == 0.6
    assert payload["top_p"] == 0.95 and payload["top_k"] == 20 and "do_sample" not in payload
    assert payload["stop"] == ["Q:"] and payload["messages"] == MESSAGES
    assert payload["chat_template_kwargs"] == {"enable_thinking": True}
    assert payload["return_meta_info"] is True and payload["return_spec_tokens_details"] is True
    assert (
        cls(RequestLog(), {}, **model_args(target()))._create_payload(MESSAGES)["max_tokens"]
        == 2048
    )


@pytest.mark.parametrize(
    ("messages", "key"),
    [
        ([type("J", (), {"prompt": PROMPT})()], PROMPT),
        (PROMPT, PROMPT),
        (["a", "b"], None),
        (3, None),
    ],
)
def test_prompt_key(messages: object, key: str | None) -> None:
    assert prompt_key(messages) == key


@pytest.mark.parametrize(
    ("dataset", "repeats", "fragment"),
    [
        (DatasetConf(source="bundled", path="x"), 1, "dataset.source='bundled'"),
        (DatasetConf(source="lm_eval", path="rows.jsonl"), 1, "give an lm-eval task name"),
        (DatasetConf(source="lm_eval", path=""), 1, "give an lm-eval task name"),
        (DatasetConf(source="lm_eval", path="mtp_arith_sample"), 2, "repeats=2"),
        (
            DatasetConf(source="lm_eval", path="mtp_arith_sample", subset="/no/such"),
            1,
            "not a folder",
        ),
        (DatasetConf(source="lm_eval", path="mtp_arith_sample", limit=0), 1, "limit=0"),
    ],
)
def test_bad_config_is_named(dataset: DatasetConf, repeats: int, fragment: str) -> None:
    with pytest.raises(LmEvalError, match=r"evals\.x") as err:
        LmEvalEval("x", EvalConf(kind="lm_eval", dataset=dataset, repeats=repeats))
    assert fragment in str(err.value)
