"""The small nested blocks of ``result.json`` as ``TypedDict``s (``result_schema`` holds the rest).

Each is typed where it is made: ``cell.skip_softmax`` by the cell job, ``provenance``'s
``mtp_eval_git`` and ``host`` by ``pipeline.cell.provenance``, ``preflight[]`` by
``pipeline.cell.launching``, ``speed.gpu_samples`` by ``pipeline.measuring.speed.gpu_sampler``,
``speed.token_ids`` / ``prompts`` by ``pipeline.measuring.speed.prompts``, ``serving.eval_prompts``
by ``pipeline.measuring.speed.serving.eval_prompts``, ``speed.log_warnings``
by ``pipeline.measuring.speed.log_warnings``.
"""

from __future__ import annotations

from typing import TypedDict


class SkipSoftmaxJson(TypedDict):
    """``cell.skip_softmax``: the factors as set (None: exact softmax; read by ``skip_factor``)."""

    prefill: float | None
    decode: float | None


class GitJson(TypedDict, total=False):
    """``provenance.mtp_eval_git``: the checkout that ran the cell."""

    sha: str | None
    dirty: bool | None
    source: str  # MTP_EVAL_COMMIT when git could not say (absent: git said)


class _HostKeys(TypedDict):
    hostname: str
    platform: str
    python: str
    cuda_driver: str | None


class HostJson(_HostKeys, total=False):
    """``provenance.host``: the machine that ran the pipeline."""

    # CPUs the pipeline (and the server and client it starts) may run on: a taskset or a SLURM
    # binding narrows them, and a small model's serving speed moves with them. Absent: older.
    # (An optional key of a TypedDict subclass: typing.NotRequired needs Python 3.11.)
    cpus: int | None


class SampledJson(TypedDict):
    """One quantity of one GPU over the speed phase: samples taken, min, median, max."""

    samples: int
    min: float | None
    median: float | None
    max: float | None


class GpuSamplesJson(TypedDict, total=False):
    """``speed.gpu_samples``: clocks, power and temperature while the speed phase ran."""

    source: str  # nvidia-smi | absent
    interval_ms: int
    reason: str  # why nothing was sampled
    gpus: dict[str, dict[str, SampledJson]]  # GPU index -> quantity -> its figures


class FindingJson(TypedDict):
    """``preflight[]``: one compatibility rule that applies to the cell (``backends.compat``)."""

    rule: str
    outcome: str  # reject | adjust | no-effect | crash-at-start
    message: str  # SGLang's own message ("" where SGLang says nothing)
    detail: str  # our one-line explanation


class TokenIdsJson(TypedDict):
    """``speed.token_ids``: the range random prompt ids were drawn from, and who said it."""

    low: int
    high: int
    source: str  # speed.vocab_size | the model's config.json | default


class PromptsJson(TypedDict):
    """``speed.prompts`` (``speed.prompts=eval:NAME``): the eval's tokenized prompts used."""

    source: str
    tokenizer: str
    distinct: int
    shortest: int
    longest: int
    shared_prefix_tokens: int
    radix_cache: str


class ServingPromptsJson(PromptsJson, total=False):
    """``serving.eval_prompts``: as ``speed.prompts``, and for ``eval:PATTERN`` two keys more.

    With a pattern the shared keys describe all matched evals' prompts together (``source``: the
    pattern).
    """

    buckets: dict[str, str]  # bucket -> the eval:NAME it drew from (a bucket none reached: absent)
    pools: list[PromptsJson]  # each matched eval's prompts, in the cell's order


class LogWarningJson(TypedDict):
    """``speed.log_warnings[]``: a server-log line that changes what a speed figure means."""

    kind: str
    meaning: str
    count: int  # lines that carry it
    line: str  # the first of them
