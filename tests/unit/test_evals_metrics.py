from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from evals.base import EvalPrompt
from evals.client import RequestOutcome
from evals.metrics import (
    clustered_stderr,
    outcome_class,
    prefill_summary,
    prompt_hash,
    sample_record,
    summarize,
)
from evals.responses import ChatResult, SpecStats
from evals.sample_line import SampleJson, SpecJson

PROMPT = EvalPrompt(
    "q1", 2, [{"role": "user", "content": "hi"}], "B", {"permutation": [1, 0, 2, 3]}
)
SPEC = SpecStats(29, 34, 87, 64, 2.2, 0.39, (10, 11, 1, 7), "sglext")


def outcome(finish: str | None = "stop", error_kind: str | None = None) -> RequestOutcome:
    result = None if error_kind else ChatResult("Answer: B", "why", finish, 20, 64, SPEC, 0.04)
    return RequestOutcome(result, error_kind, "boom" if error_kind else None, 200, 1, 0.5)


def test_sample_record_fields() -> None:
    record = sample_record(PROMPT, outcome(), "B", True)
    assert record == {
        "question_id": "q1", "repeat": 2, "permutation": [1, 0, 2, 3],
        "prompt_hash": prompt_hash(PROMPT.messages), "answer": "B", "response": "Answer: B",
        "reasoning_content": "why", "extracted": "B", "correct": True, "finish_reason": "stop",
        "prompt_tokens": 20, "completion_tokens": 64, "latency_s": 0.5, "prefill_s": 0.04,
        "attempts": 1, "error_kind": None, "error": None, "retried": [],
        "spec": {"verify_ct": 29, "num_correct_drafts": 34, "num_proposed_drafts": 87,
                 "completion_tokens": 64, "accept_length": 2.2, "accept_rate": 0.39,
                 "histogram": (10, 11, 1, 7), "source": "sglext", "dp_rank": None},
    }  # fmt: skip


def test_a_sample_line_has_the_declared_keys_and_spec_every_field() -> None:
    # SampleJson is what readers type a line as: a key the writer adds must be declared there.
    record = sample_record(PROMPT, outcome(), "B", True)
    declared = set(SampleJson.__annotations__)
    assert set(record) == declared - {"meta", "question"}  # added by the runner when they apply
    assert set(SpecJson.__annotations__) == {f.name for f in dataclasses.fields(SpecStats)}


@pytest.mark.parametrize(
    ("out", "expected"),
    [(outcome("length"), False), (outcome(error_kind="timeout"), False), (outcome(), True)],
)
def test_truncated_or_errored_sample_is_never_correct(out: RequestOutcome, expected: bool) -> None:
    assert sample_record(PROMPT, out, "B", True)["correct"] is expected


def test_prompt_hash_is_stable_and_content_sensitive() -> None:
    a = [{"role": "user", "content": "x"}]
    assert prompt_hash(a) == prompt_hash([{"content": "x", "role": "user"}])
    assert prompt_hash(a) != prompt_hash([{"role": "user", "content": "y"}])
    assert len(prompt_hash(a)) == 16


def rec(qid: str, repeat: int, correct: bool, **kw: Any) -> dict[str, Any]:
    base = {"question_id": qid, "repeat": repeat, "correct": correct, "extracted": "A",
            "finish_reason": "stop", "error_kind": None, "prompt_tokens": 10,
            "completion_tokens": 100}  # fmt: skip
    return base | kw


def direct_clustered_se(scores: dict[str, list[float]]) -> float:
    """The clustered SE's small-sample form (evals/metrics.py), written out with loops."""
    flat = [s for group in scores.values() for s in group]
    n, g = len(flat), len(scores)
    mean = sum(flat) / n
    total = sum(sum(s - mean for s in group) ** 2 for group in scores.values())
    return math.sqrt(g / ((g - 1) * n * n) * total)


@pytest.mark.parametrize(
    "scores",
    [
        {"a": [1.0], "b": [1.0], "c": [0.0], "d": [0.0]},
        {"a": [1.0, 1.0], "b": [0.0, 0.0]},
        {"a": [1.0, 0.0, 1.0], "b": [0.0, 0.0, 1.0], "c": [1.0, 1.0, 1.0]},
        {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [0.0, 0.0], "e": [1.0, 0.0]},
    ],
)
def test_clustered_se_matches_direct_formula(scores: dict[str, list[float]]) -> None:
    flat = np.array([s for group in scores.values() for s in group])
    labels = [q for q, group in scores.items() for _ in group]
    assert clustered_stderr(flat, labels) == pytest.approx(direct_clustered_se(scores))


def test_clustered_se_with_one_repeat_is_the_clt_se() -> None:
    scores = np.array([1, 1, 0, 0, 1, 0, 1, 1, 1, 0], dtype=float)
    clt = math.sqrt(np.sum((scores - scores.mean()) ** 2) / (len(scores) * (len(scores) - 1)))
    assert clustered_stderr(scores, [str(i) for i in range(10)]) == pytest.approx(clt)


def test_summarize_hand_computed_one_repeat() -> None:
    records = [rec(f"q{i}", 0, i < 7) for i in range(10)]
    out = summarize(records, wall_time_s=12.5)
    se = math.sqrt(0.7 * 0.3 / 9)  # sqrt(sum((s - 0.7)^2) / (n (n - 1)))
    assert out["accuracy"] == pytest.approx(0.7) and out["stderr"] == pytest.approx(se)
    assert out["ci95"] == pytest.approx([0.7 - 2.2621571628 * se, 1.0])  # t(9) 97.5%, clipped
    assert (out["n_questions"], out["n_repeats"], out["n_samples"]) == (10, 1, 10)
    assert out["per_repeat_accuracy"] == {"0": pytest.approx(0.7)}
    assert out["wall_time_s"] == 12.5 and out["mean_completion_tokens"] == 100.0


def test_summarize_clusters_repeats_of_a_question() -> None:
    records = [rec("a", 0, True), rec("a", 1, True), rec("b", 0, False), rec("b", 1, False)]
    out = summarize(records)
    assert out["accuracy"] == 0.5
    assert out["stderr"] == pytest.approx(0.5)  # sqrt(2 / (1 * 16) * (1^2 + 1^2))
    assert out["per_repeat_accuracy"] == {"0": 0.5, "1": 0.5}


def test_failures_are_counted_and_errors_are_no_answers() -> None:
    records = [
        rec("a", 0, True),
        rec("b", 0, True, finish_reason="length"),  # a grader that said correct is overruled
        rec("c", 0, False, extracted=None),
        rec("d", 0, True, error_kind="timeout", extracted=None, completion_tokens=None),
        rec("e", 0, False, extracted="C"),
    ]
    out = summarize(records)
    assert out["accuracy"] == pytest.approx(0.25)  # 1 of the 4 answered; the error is left out
    assert (out["n_samples"], out["n_answered"]) == (5, 4)
    assert out["error_kinds"] == {"timeout": 1}
    assert out["counts"] == {"correct": 1, "wrong": 1, "no_answer": 1, "truncated": 1, "error": 1}
    assert (out["no_answer_rate"], out["truncated_rate"], out["error_rate"]) == (0.2, 0.2, 0.2)
    assert out["mean_completion_tokens"] == 100.0  # the errored request has no count


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (rec("a", 0, True), "correct"),
        (rec("a", 0, False), "wrong"),
        (rec("a", 0, False, extracted=None), "no_answer"),
        (rec("a", 0, True, finish_reason="length", extracted=None), "truncated"),
        (rec("a", 0, False, error_kind="http_5xx", finish_reason=None), "error"),
    ],
)
def test_outcome_class(record: dict[str, Any], expected: str) -> None:
    assert outcome_class(record) == expected


def test_summarize_edge_cases() -> None:
    empty = summarize([])
    assert empty["n_samples"] == 0 and empty["accuracy"] is None and empty["ci95"] is None
    single = summarize([rec("a", 0, True), rec("a", 1, False)])
    assert single["accuracy"] == 0.5 and single["stderr"] is None and single["ci95"] is None


@pytest.mark.parametrize(
    ("prefill", "prompt", "mean", "per_1k"),
    [
        ([0.1, 0.3], [1000, 3000], 0.2, 0.1),
        ([0.1, None], [1000, 3000], 0.1, 0.1),  # only the request with a time counts
        ([0.2, 0.4], [1000, None], 0.3, 0.2),  # the mean has both, per 1k only the sized one
        ([None, None], [1000, 3000], None, None),  # no --enable-metrics
        ([0.0, 0.0], [0, 0], 0.0, None),  # no prompt tokens to divide by
        (["0.1", 0.2], [1000, 1000], 0.2, 0.2),  # a string is no time
    ],
)
def test_prefill_summary(
    prefill: list[Any], prompt: list[Any], mean: float | None, per_1k: float | None
) -> None:
    records = [rec(f"q{i}", 0, True, prefill_s=p, prompt_tokens=t) for i, (p, t) in
               enumerate(zip(prefill, prompt, strict=True))]  # fmt: skip
    out = summarize(records)
    got = (out["mean_prefill_s"], out["prefill_s_per_1k_prompt_tokens"])
    assert got == ((mean, per_1k) if None in (mean, per_1k) else pytest.approx((mean, per_1k)))
    assert prefill_summary(records) == dict(zip(PREFILL_KEYS, got, strict=True))


PREFILL_KEYS = ("mean_prefill_s", "prefill_s_per_1k_prompt_tokens")


def test_summarize_of_records_from_before_prefill_times() -> None:
    out = summarize([rec("a", 0, True), rec("b", 0, False)])  # no prefill_s key at all
    assert out["mean_prefill_s"] is None and out["prefill_s_per_1k_prompt_tokens"] is None


def test_an_eval_without_answers_has_no_accuracy() -> None:
    records = [rec(q, 0, False, error_kind="http_5xx", extracted=None) for q in "abc"]
    out = summarize(records)
    assert (out["accuracy"], out["ci95"], out["n_answered"]) == (None, None, 0)
    assert out["error_rate"] == 1.0 and out["error_kinds"] == {"http_5xx": 3}


def test_retries_are_counted_by_cause_and_old_records_by_attempts() -> None:
    records = [
        {**rec("a", 0, True), "retried": ["http_5xx", "unfinished"], "attempts": 3},
        {**rec("b", 0, True), "attempts": 2},  # written before the causes were kept
        rec("c", 0, True),
    ]
    out = summarize(records)
    assert out["retries"] == {"http_5xx": 1, "unfinished": 1, "unknown": 1}
    assert out["retry_rate"] == pytest.approx(1.0)
