"""lm-eval's per-sample log joined with the request log into mtp-eval sample records (pure).

One record per (document, repeat) of the task's primary filter, in ``samples/<eval>.jsonl``'s
format, so the report pairs lm-eval tasks across variants like any other eval. The question id is
derived from lm-eval's ``doc_hash`` (stable across variants); ``correct`` is lm-eval's primary
metric (the first metric of the first filter, e.g. ``exact_match`` of ``strict-match``) when it
is 0/1 valued, never for a truncated or failed request; token counts, finish reason and
speculative statistics come from the response itself (``evals.lm_eval_model``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evals.base import AnswerKeyEntry, QuestionText, question_id
from evals.grading import extract_number
from evals.json_text import json_safe
from evals.lm_eval_model import LoggedResponse, RequestLog
from evals.metrics import prompt_hash
from evals.sample_line import SampleJson, spec_json

__all__ = ["answer_entry", "build_records", "json_safe", "prompt_of", "question_of"]

INVALID = ("[invalid]", "")  # lm-eval's regex filter fallback: nothing was extracted
_LETTER = re.compile(r"^\(?([A-J])\)?$")
_BARE_NUMBER = re.compile(r"^\$?\s*-?[0-9][0-9,]*(?:\.[0-9]+)?$")


def prompt_of(arguments: object) -> str | None:
    """The messages JSON of a sample's first request (``arguments[0][0]``, unwrapped)."""
    if not isinstance(arguments, list | tuple) or not arguments:
        return None
    request = arguments[0]
    if not isinstance(request, list | tuple) or not request:
        return None
    first = request[0]
    if isinstance(first, list | tuple) and len(first) == 1:  # JsonChatStr, JSON-encoded
        first = first[0]
    first = getattr(first, "prompt", first)
    return first if isinstance(first, str) else None


def primary(samples: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """(filter, metric) that the records are graded on: those of the first sample."""
    first = samples[0]
    metrics = first.get("metrics") or []
    return str(first.get("filter", "none")), str(metrics[0] if metrics else "")


def _is_binary(value: object) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, int | float) and value in (0, 1)


def build_records(
    task: str, samples: Sequence[Mapping[str, Any]], log: RequestLog
) -> tuple[list[SampleJson], dict[str, Any]]:
    """Sample records of one task, and how they were graded.

    Args:
        task: the lm-eval task name.
        samples: lm-eval's per-sample log of the task (every filter).
        log: the responses the recording model kept; joined by the request's messages.

    Returns:
        ``(records, grading)`` with grading ``{"filter", "metric", "binary"}``; ``binary``
        False means the metric is not 0/1 and ``correct`` is not meaningful.
    """
    if not samples:
        return [], {"filter": None, "metric": None, "binary": False}
    filt, metric = primary(samples)
    chosen = sorted((s for s in samples if s.get("filter", "none") == filt), key=_doc_id)
    binary = all(_is_binary(s.get(metric)) for s in chosen)
    records: list[SampleJson] = []
    for sample in chosen:
        prompt = prompt_of(sample.get("arguments"))
        for repeat in range(max(len(sample.get("resps") or []), 1)):
            logged = log.take(prompt) if prompt is not None else None
            records.append(_record(task, sample, repeat, prompt, logged, (filt, metric), binary))
    return records, {"filter": filt, "metric": metric, "binary": binary}


def _doc_id(sample: Mapping[str, Any]) -> int:
    doc_id = sample.get("doc_id")
    return doc_id if isinstance(doc_id, int) else 0


def _record(
    task: str,
    sample: Mapping[str, Any],
    repeat: int,
    prompt: str | None,
    logged: LoggedResponse | None,
    graded_on: tuple[str, str],
    binary: bool,
) -> SampleJson:
    result = logged.result if logged else None
    error_kind, error = None, None
    if result is None:
        error_kind = "malformed" if logged else "missing_response"
        error = logged.error if logged else "no response to this prompt reached the recording"
    value = sample.get(graded_on[1])
    finish = result.finish_reason if result else None
    correct = binary and value == 1 and error_kind is None and finish != "length"
    record: SampleJson = {
        "question_id": question_id(f"{task}\x00{sample.get('doc_hash')}"),
        "repeat": repeat,
        "permutation": None,
        "prompt_hash": _hash_prompt(prompt),
        "answer": json_safe(sample.get("target")),
        "response": result.content if result else _lm_eval_response(sample, repeat),
        "reasoning_content": result.reasoning_content if result else None,
        "extracted": _extracted(sample),
        "correct": bool(correct),
        "finish_reason": finish,
        "prompt_tokens": result.prompt_tokens if result else None,
        "completion_tokens": result.completion_tokens if result else None,
        "latency_s": None,  # lm-eval queues requests itself; its timing is not the server's
        "prefill_s": result.prefill_s if result else None,  # the server's own, so it counts
        "attempts": logged.attempts if logged else 0,
        "error_kind": error_kind,
        "error": error,
        "spec": spec_json(result.spec) if result and result.spec else None,
        "meta": {"task": task, "doc_id": sample.get("doc_id"), "filter": graded_on[0],
                 graded_on[1]: json_safe(value)},
    }  # fmt: skip
    shown = question_of(prompt, sample.get("target")) if repeat == 0 else None
    if shown is not None:  # once per document, as the runner writes it for its own evals
        record["question"] = shown.as_json()
    return record


def question_of(prompt: str | None, target: object) -> QuestionText | None:
    """What the report shows of a document: its last user message, and lm-eval's target.

    Args:
        prompt: the request's messages as JSON (a chat task), or its text (a completion task).
        target: lm-eval's ``target`` of the document.
    """
    if prompt is None:
        return None
    text = prompt
    try:
        messages = json.loads(prompt)
    except ValueError:
        messages = None
    if isinstance(messages, list):  # a chat task: the last user turn is the question
        users = [
            m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"
        ]
        text = str(users[-1]) if users else prompt
    gold = json_safe(target)
    return QuestionText(text, gold=None if gold is None else str(gold))


def _hash_prompt(prompt: str | None) -> str | None:
    if prompt is None:
        return None
    try:
        return prompt_hash(json.loads(prompt))
    except (ValueError, TypeError):
        return prompt_hash([{"role": "user", "content": prompt}])


def _extracted(sample: Mapping[str, Any]) -> str | None:
    filtered = sample.get("filtered_resps")
    value = filtered[0] if isinstance(filtered, list) and filtered else filtered
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or str(value).strip() in INVALID:
        return None
    return str(value)


def _lm_eval_response(sample: Mapping[str, Any], repeat: int) -> str | None:
    resps = sample.get("resps") or []
    try:
        value = resps[repeat][0] if isinstance(resps[repeat], list) else resps[repeat]
    except IndexError:
        return None
    return value if isinstance(value, str) else None


def answer_entry(question: str, target: object) -> AnswerKeyEntry | None:
    """An answer-key entry for the simulated server.

    Returns:
        ``mcq`` for a letter target, ``numeric`` for a number (GSM8K solutions end with
        ``#### N``), None for anything else.
    """
    if isinstance(target, list):
        target = target[0] if target else None
    if isinstance(target, bool) or target is None:
        return None
    text = str(target).strip()
    letter = _LETTER.match(text)
    if letter:
        return {"question": question, "answer": letter.group(1), "kind": "mcq"}
    if "####" in text or _BARE_NUMBER.match(text):
        number = extract_number(text)
        if number is not None:
            return {"question": question, "answer": number, "kind": "numeric"}
    return None
