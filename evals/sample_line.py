"""One line of ``samples/<eval>.jsonl`` as a ``TypedDict``, and the statistics an eval's lines give.

``evals.metrics.sample_record`` (the runner's evals) and ``evals.lm_eval_records`` (the
lm-eval harness) build it; the pipeline keeps, resumes and summarises lists of them, and the
report reads the same keys back. Declared once, so mypy sees a misspelt key on either side.
``EvalStatsJson`` is ``evals.metrics.summarize``'s (and ``evals.accounting``'s) figures, the head
of an eval's block in ``result.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from evals.responses import SpecStats


class ChatMessage(TypedDict):
    """One message of a chat request, as the OpenAI-compatible API takes it."""

    role: str  # system | user | assistant
    content: str


class SpecJson(TypedDict, total=False):
    """``spec``: one request's speculative statistics (``evals.responses.SpecStats``)."""

    verify_ct: int
    num_correct_drafts: int
    num_proposed_drafts: int
    completion_tokens: int
    accept_length: float
    accept_rate: float
    histogram: Sequence[int]  # a tuple in memory (SpecStats), a list once read back
    source: str  # meta_info | sglext
    dp_rank: int | None


class QuestionJson(TypedDict, total=False):
    """``question``: what the report shows of a question (repeat 0 only; empty fields left out)."""

    text: str
    options: list[str]
    gold: str
    permuted: bool
    omitted_chars: int


class SampleJson(TypedDict, total=False):
    """A sample line: one request of one repeat (a turn of a multi-turn question included)."""

    question_id: str
    repeat: int
    permutation: list[int] | None
    prompt_hash: str | None  # None: an lm-eval sample whose prompt was not recorded
    answer: Any  # the dataset's gold answer as it gives it (text, letter, number, list)
    response: str | None
    reasoning_content: str | None
    extracted: str | None
    correct: bool
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    prefill_s: float | None
    attempts: int
    error_kind: str | None
    error: str | None
    retried: list[str]
    spec: SpecJson | None
    meta: dict[str, object]  # the prompt's meta (turn, subject, category, length, ...)
    question: QuestionJson


class EvalStatsJson(TypedDict, total=False):
    """An eval's figures from its sample lines, in the order ``summarize`` writes them."""

    n_questions: int
    n_repeats: int
    n_samples: int
    n_answered: int
    accuracy: float | None
    accuracy_over: str
    stderr: float | None
    stderr_method: str
    ci95: list[float] | list[None] | None  # [None, None] when not graded
    per_repeat_accuracy: dict[str, float] | None
    counts: dict[str, int]
    no_answer_rate: float | None
    truncated_rate: float | None
    error_rate: float | None
    error_kinds: dict[str, int]
    error_examples: dict[str, str]
    retries: dict[str, int]
    retry_rate: float | None
    mean_completion_tokens: float | None
    mean_prompt_tokens: float | None
    total_completion_tokens: int
    mean_prefill_s: float | None
    prefill_s_per_1k_prompt_tokens: float | None
    wall_time_s: float | None
    graded: bool


def spec_json(spec: SpecStats) -> SpecJson:
    """A request's ``SpecStats`` as its line's ``spec`` (every field, in the dataclass's order)."""
    return cast(SpecJson, dataclasses.asdict(spec))
