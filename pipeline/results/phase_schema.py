"""``result.json``'s phase blocks: ``speed``, ``serving`` and ``parity``, each absent when off.

Each a ``TypedDict`` whose keys are the file's keys; ``result_schema.ResultJson`` puts them
together and is where callers import them from.
"""

from __future__ import annotations

from typing import TypedDict

from pipeline.results.nested_schema import (
    GpuSamplesJson,
    LogWarningJson,
    PromptsJson,
    ServingPromptsJson,
    TokenIdsJson,
)


class SpeedPointJson(TypedDict, total=False):
    """``speed.points[]``: one shape timed ``repeats`` times (times in ms, the server's own)."""

    phase: str  # prefill | decode
    batch: int  # prompts sent together
    prompt_tokens: int  # per prompt
    new_tokens: int  # per prompt (prefill: 1)
    times_ms: list[float]  # per repeat: the batch's prefill span, or its decode span
    median_ms: float
    min_ms: float
    max_ms: float
    tokens_per_s: list[float]  # decode only: decoded tokens / decode span, per repeat
    accept_length: float | None  # decode only: completion tokens per verify step, all repeats


class SpeedJson(TypedDict, total=False):
    """``speed``: the speed phase on the cell's own server (absent when it is off)."""

    method: str  # how the times were taken
    warmup: int  # runs per shape discarded before the measured ones
    repeats: int
    spread: str  # what min_ms / max_ms are: "min_max"
    context_len: int | None  # the server's max_model_len
    token_ids: TokenIdsJson  # random ids
    prompts: PromptsJson  # speed.prompts=eval:NAME instead
    notes: list[str]  # shapes skipped and why
    points: list[SpeedPointJson]
    gpu_samples: GpuSamplesJson
    log_warnings: list[LogWarningJson]  # server-log lines that change what a time means
    release_notes: list[str]  # costs the prefill kernel pays on this SGLang release only
    error: str  # why the phase stopped early (the cell then fails; the points so far are kept)


class ServingPointJson(TypedDict, total=False):
    """``serving.points[]``: one concurrency level at one input-length bucket (issue 42)."""

    bucket: int  # the bucket's nominal input tokens
    concurrency: int  # requests kept in flight
    requests: int  # answered
    errors: int  # failed after the client's retries
    duration_s: float  # from the first request sent to the last answered
    prompt_tokens_mean: float | None  # the server's usage.prompt_tokens, averaged
    output_tokens: int  # completion tokens of the answered requests
    output_tokens_per_s: float  # over duration_s, all GPUs
    output_tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float | None  # median of 1 / a request's time per output token
    ttft_ms: dict[str, float]  # p50, p90, p99
    itl_ms: dict[str, float]  # between content chunks, p50 / p90 / p99
    tpot_ms: dict[str, float]  # (e2e - ttft) / (output tokens - 1), p50 / p90 / p99
    e2e_ms: dict[str, float]
    accept_length: float | None  # completion tokens / verify steps (sglext), None: no spec
    metrics: dict[str, float]  # the server's own /metrics counters over the level (deltas)


class ServingJson(TypedDict, total=False):
    """``serving``: the serving phase on the cell's own server (absent when it is off)."""

    method: str
    speculation: bool  # False: the declared serving-only cell without speculation
    gpus: int  # what output tokens/s per GPU divides by (model.tp)
    prompts: str  # what the prompts were
    eval_prompts: (
        ServingPromptsJson  # serving.prompts=eval:NAME or eval:PATTERN: the evals' prompts
    )
    concurrency: list[int]
    buckets: list[int]
    output_tokens: int  # per request, EOS ignored
    notes: list[str]  # buckets skipped, levels cut short or capped (time, prompts) and why
    points: list[ServingPointJson]
    wall_s: float  # the phase's own cost
    error: str  # why the phase stopped early (the cell then fails)


class ParityGateJson(TypedDict, total=False):
    """``parity.gate``: the in-cell parity verdict that decides whether accuracy runs (issue 39)."""

    verdict: str  # GO | NO-GO | INCONCLUSIVE (stats.parity_verdict)
    reason: str
    aa_cell: str | None  # the A/A cell whose divergence set the band (None: no band)
    accuracy: str  # "run" | "skipped"
    skipped: dict[str, int]  # eval -> repeats not run (its design's most)


class ParityJson(TypedDict, total=False):
    """``parity``: when and how long the parity phase ran (absent when it is off)."""

    order: str  # first (parity.gate: before the evals) | last (after every other phase)
    sequences: int
    wall_s: float  # the whole phase: generation, re-score, decode path, greedy
    rescore_s: float  # the verdict's own cost: one prefill per sequence
    gate: ParityGateJson  # only with parity.gate
