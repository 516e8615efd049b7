"""The lines of a cell's ``parity/sequences.jsonl`` and ``parity/scores.jsonl`` (issue 39).

The parity phase writes them (``pipeline.measuring.parity_run``); a candidate re-scores another
cell's sequences and the report reads both files (``pipeline.report.load.parity_files``).
A ``top`` row is a position's ``[token id, logprob]`` pairs.
"""

from __future__ import annotations

from typing import TypedDict

TopJson = list[list[list[float]]]  # per position, its [token id, logprob] pairs


class SequenceRow(TypedDict, total=False):
    """One generated sequence: its prompt, output and what decoding reported of it."""

    question: str  # p<serial>
    prompt_ids: list[int]
    output_ids: list[int]
    decode_logprobs: list[float]
    decode_top: TopJson
    eval: str  # with parity.prompts=eval:NAME: the question the prompt is
    question_id: str


class ScoreRow(TypedDict, total=False):
    """One sequence re-scored by prefill."""

    question: str
    logprobs: list[float]
    top: TopJson


class MeanJson(TypedDict):
    """A metric clustered by question (``stats.parity_verdict.clustered_mean``); None: unbounded."""

    estimate: float | None
    lower: float | None
    upper: float | None
    se: float | None
    questions: int
    tokens: int
