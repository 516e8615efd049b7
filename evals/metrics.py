"""Sample records (one line of ``samples/<eval>.jsonl``) and the per-eval summary.

A sample scores 1 only when the request succeeded, was not truncated and the extracted answer
matched; truncation (``finish_reason == "length"``) and no-answer score 0. An errored request
(no reply, or one the server did not finish) is no answer at all: it is counted in
``error_rate`` and left out of the accuracy, as the report's paired statistics leave it out, so
every output has one accuracy; an eval with no answered request has none (``None``).
The standard error is clustered by question over repeats
(Miller, "Adding Error Bars to Evals", arXiv 2411.00640; NeMo Evaluator's small-sample form):
``sqrt(G / ((G - 1) N^2) * sum_g e_g^2)`` with ``e_g`` the sum of
residuals of question g; with one repeat it equals the CLT standard error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Literal

import numpy as np

# scipy.special, not scipy.stats: the same quantile without a second of import time.
from scipy import special

from evals.base import EvalPrompt
from evals.client import RequestOutcome
from evals.sample_line import ChatMessage, EvalStatsJson, SampleJson, spec_json


def prompt_hash(messages: Sequence[ChatMessage]) -> str:
    """SHA-256 (16 hex digits) of the canonical JSON of the messages: equal prompts, equal hash."""
    canonical = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def sample_record(
    prompt: EvalPrompt, outcome: RequestOutcome, extracted: str | None, correct: bool
) -> SampleJson:
    """Build one ``samples/<eval>.jsonl`` line.

    Args:
        prompt: the prompt that was sent.
        outcome: the client's outcome for it.
        extracted: the graded answer (None when none was found).
        correct: the grader's verdict; forced to False on an error or truncation.

    Returns:
        A JSON-ready dict.
    """
    result = outcome.result
    finish = result.finish_reason if result else None
    scored = bool(correct) and outcome.error_kind is None and result is not None
    return {
        "question_id": prompt.question_id,
        "repeat": prompt.repeat,
        "permutation": prompt.meta.get("permutation"),
        "prompt_hash": prompt_hash(prompt.messages),
        "answer": prompt.answer,
        "response": result.content if result else None,
        "reasoning_content": result.reasoning_content if result else None,
        "extracted": extracted,
        "correct": scored and finish != "length",
        "finish_reason": finish,
        "prompt_tokens": result.prompt_tokens if result else None,
        "completion_tokens": result.completion_tokens if result else None,
        "latency_s": outcome.latency_s,
        "prefill_s": result.prefill_s if result else None,
        "attempts": outcome.attempts,
        "error_kind": outcome.error_kind,
        "error": outcome.error,
        "retried": list(outcome.retried),
        "spec": spec_json(result.spec) if result and result.spec else None,
    }


def outcome_class(record: SampleJson) -> str:
    """Classify a sample: error | truncated | no_answer | correct | wrong (first that applies)."""
    if record.get("error_kind"):
        return "error"
    if record.get("finish_reason") == "length":
        return "truncated"
    if record.get("extracted") is None:
        return "no_answer"
    return "correct" if record.get("correct") is True else "wrong"


def clustered_stderr(scores: np.ndarray, clusters: Sequence[str]) -> float | None:
    """Standard error of the mean of ``scores``, clustered by ``clusters``.

    Args:
        scores: per-sample scores.
        clusters: the cluster (question id) of each sample.

    Returns:
        ``sqrt(G / ((G - 1) N^2) * sum_g e_g^2)``, or None with fewer than two clusters.
    """
    labels, index = np.unique(np.asarray(clusters), return_inverse=True)
    groups, n = len(labels), len(scores)
    if groups < 2:
        return None
    residual_sums = np.bincount(index, weights=scores - scores.mean(), minlength=groups)
    return float(np.sqrt(groups / ((groups - 1) * n**2) * np.sum(residual_sums**2)))


Figure = Literal["latency_s", "prefill_s", "prompt_tokens", "completion_tokens"]


def _mean_of(records: Sequence[SampleJson], key: Figure) -> float | None:
    values = [float(v) for r in records if isinstance(v := r.get(key), int | float)]
    return float(np.mean(values)) if values else None


def prefill_summary(records: Sequence[SampleJson]) -> dict[str, float | None]:
    """The server's prefill time over the requests whose record has one (``prefill_s``).

    ``mean_prefill_s`` is the mean per request; ``prefill_s_per_1k_prompt_tokens`` is the summed
    prefill time per 1,000 summed prompt tokens (requests with both), the figure that compares
    attention backends on prompts of different lengths. Both are None when no request has a
    prefill time (a server without ``--enable-metrics``, a stream, records from before it).
    """
    sized = [
        r
        for r in records
        if isinstance(r.get("prefill_s"), int | float) and isinstance(r.get("prompt_tokens"), int)
    ]
    tokens = sum(r.get("prompt_tokens") or 0 for r in sized)
    per_1k = 1000.0 * sum(r.get("prefill_s") or 0.0 for r in sized) / tokens if tokens > 0 else None
    return {
        "mean_prefill_s": _mean_of(records, "prefill_s"),
        "prefill_s_per_1k_prompt_tokens": per_1k,
    }


def _interval(accuracy: float, stderr: float | None, groups: int) -> list[float] | None:
    # Student t with G - 1 degrees of freedom: the usual small-sample form for cluster-robust SEs.
    if stderr is None:
        return None
    half = float(special.stdtrit(groups - 1, 0.975)) * stderr
    return [max(0.0, accuracy - half), min(1.0, accuracy + half)]


def _accuracy_block(records: Sequence[SampleJson], classes: Sequence[str]) -> EvalStatsJson:
    answered = [(r, c) for r, c in zip(records, classes, strict=True) if c != "error"]
    scores = np.array([c == "correct" for _, c in answered], dtype=float)
    questions = [str(r["question_id"]) for r, _ in answered]
    repeat_of = np.array([int(r["repeat"]) for r, _ in answered])
    accuracy = float(scores.mean()) if len(scores) else None
    stderr = clustered_stderr(scores, questions) if len(scores) else None
    groups = len(set(questions))
    return {
        "n_questions": len({str(r["question_id"]) for r in records}),
        "n_repeats": len({int(r["repeat"]) for r in records}),
        "n_samples": len(records),
        "n_answered": len(scores),
        "accuracy": accuracy,
        "accuracy_over": "answered requests (errors excluded)",
        "stderr": stderr,
        "stderr_method": "clustered by question over repeats",
        "ci95": _interval(accuracy, stderr, groups) if accuracy is not None else None,
        "per_repeat_accuracy": {
            str(rep): float(scores[repeat_of == rep].mean())
            for rep in sorted(set(repeat_of.tolist()))
        },
    }


def retry_counts(records: Sequence[SampleJson]) -> dict[str, int]:
    """Retried attempts per cause (http_5xx, connection, unfinished) over an eval's requests.

    Records written before the client kept the causes count their extra attempts as ``unknown``.
    """
    counts: dict[str, int] = {}
    for record in records:
        causes = record.get("retried")
        if not isinstance(causes, list):
            extra = int(record.get("attempts") or 1) - 1
            causes = ["unknown"] * max(extra, 0)
        for cause in causes:
            counts[str(cause)] = counts.get(str(cause), 0) + 1
    return dict(sorted(counts.items()))


def _error_kinds(records: Sequence[SampleJson]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for record in records:
        if kind := record.get("error_kind"):
            kinds[str(kind)] = kinds.get(str(kind), 0) + 1
    return dict(sorted(kinds.items()))


def _error_examples(records: Sequence[SampleJson]) -> dict[str, str]:
    # The first message of each error kind, so that a failure can name what the server said.
    examples: dict[str, str] = {}
    for record in records:
        kind = record.get("error_kind")
        if kind and str(kind) not in examples:
            examples[str(kind)] = str(record.get("error") or "")[:200]
    return dict(sorted(examples.items()))


def summarize(records: Sequence[SampleJson], wall_time_s: float | None = None) -> EvalStatsJson:
    """Summarize an eval's sample records.

    Args:
        records: ``sample_record`` dicts (or lines read back from the samples file).
        wall_time_s: the eval's wall time, recorded when given.

    Returns:
        Counts, accuracy, clustered standard error, 95% interval, per-repeat accuracies
        (keyed by the repeat as a string), rates, mean token counts, the server's prefill time
        (``prefill_summary``) and wall time. Accuracy
        fields are None without samples.
    """
    classes = [outcome_class(r) for r in records]
    n = len(records)
    counts = {k: classes.count(k) for k in ("correct", "wrong", "no_answer", "truncated", "error")}
    retries = retry_counts(records)
    prefill = prefill_summary(records)
    out = _accuracy_block(records, classes)
    out.update({
        "counts": counts,
        "no_answer_rate": counts["no_answer"] / n if n else None,
        "truncated_rate": counts["truncated"] / n if n else None,
        "error_rate": counts["error"] / n if n else None,
        "error_kinds": _error_kinds(records),
        "error_examples": _error_examples(records),
        "retries": retries,
        "retry_rate": sum(retries.values()) / n if n else None,
        "mean_completion_tokens": _mean_of(records, "completion_tokens"),
        "mean_prompt_tokens": _mean_of(records, "prompt_tokens"),
        "total_completion_tokens": int(sum(r.get("completion_tokens") or 0 for r in records)),
        "mean_prefill_s": prefill["mean_prefill_s"],
        "prefill_s_per_1k_prompt_tokens": prefill["prefill_s_per_1k_prompt_tokens"],
        "wall_time_s": wall_time_s,
    })  # fmt: skip
    return out
