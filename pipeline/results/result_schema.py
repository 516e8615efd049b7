"""The layout of ``result.json``, stated once: the writer, the reader and the validator use it.

Each block is a ``TypedDict`` whose keys are the file's keys (``evals.<name>`` and ``accept``:
``pipeline.results.eval_schema``). ``ResultDraft`` (the writer) holds a
``ResultJson``; ``CellResult.from_json`` and the block readers read through these types; and
``shape_problems`` (the validator) is derived from their annotations. Rename a key here and mypy
flags every writer and reader that still uses the old name.

Why ``TypedDict`` and not pydantic, msgspec or dataclasses with a codec: a result must stay
byte-for-byte what released pipelines wrote (key order, a key left out versus written as null,
blocks this version does not know kept as they are), which a plain mapping keeps for free and a
model class would have to rebuild field by field; the base install gains no dependency (pydantic
and msgspec are not in it); and the typed values the report reads (``result_types``) stay frozen
dataclasses, built from these mappings in one place each.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, TypedDict, Union

from pipeline.results.eval_schema import AcceptJson, EvalJson
from pipeline.results.nested_schema import (
    FindingJson,
    GitJson,
    GpuSamplesJson,
    HostJson,
    LogWarningJson,
    PromptsJson,
    SkipSoftmaxJson,
    TokenIdsJson,
)

SCHEMA_VERSION = 1
# What a cell job writes as ``status`` (``planned``: a dry run).
STATUSES = ("ok", "failed", "unsupported", "planned")


class NotNull:
    """Marks a block that must be an object when present.

    Every other object block may be null in a file (it reads as empty), though the writer always
    writes an object.
    """


class GpuJson(TypedDict, total=False):
    """``cell.gpu``: ``backends.gpu.GpuInfo`` as the cell found or planned it."""

    name: str
    compute_capability: str
    sm: int
    family: str
    count: int
    memory_mib: int
    driver_version: str
    source: str


class CellJson(TypedDict, total=False):
    """``cell``: what the cell is."""

    name: str
    model: str | None
    model_path: str | None
    variant: str | None
    kv_dtype: str | None
    skip_softmax: SkipSoftmaxJson
    speculative: dict[str, Any]
    server_kind: str
    gpu: GpuJson
    sglang_version: str | None
    server_version: Any  # as the server reports it; None when it reports none


class ErrorJson(TypedDict, total=False):
    """``error``: why a cell did not end ``ok``."""

    kind: str
    message: str
    reasons: list[dict[str, Any]]  # pre-flight findings, only for an unsupported cell
    log_tail: str


class MismatchJson(TypedDict, total=False):
    """``mismatches[]``: a setting the server reported other than the cell asked."""

    key: str
    requested: Any
    observed: Any
    verifiable: bool


class UnverifiedJson(TypedDict, total=False):
    """``unverified[]``: a setting the server did not report."""

    key: str
    requested: Any
    reason: str | None


class ResumedJson(TypedDict):
    """``resumed[]``: a rerun that found the cell."""

    at: str
    action: str


class ProvenanceJson(TypedDict, total=False):
    """``provenance``: what ran the cell."""

    mtp_eval_git: GitJson
    packages: dict[str, str | None]  # installed version per package, None: not installed
    host: HostJson
    pipeline_argv: list[str]
    server_argv: list[str]
    server_env: dict[str, str]
    cuda_visible_devices: str | None
    slurm: dict[str, str] | None  # SLURM's job variables by short name; None outside SLURM


class JitCacheJson(TypedDict, total=False):
    """``server.jit_cache``: the folder the server compiled its kernels into, how warm it was."""

    dir: str
    warm: bool  # files were there before the server started
    files_before: int
    files_after: int | None  # None: the server did not start (dry run)
    new_files: int | None  # what this cell compiled


class ServerJson(TypedDict, total=False):
    """``server``: how the server was started and where it answered."""

    argv: list[str]
    base_url: str
    ready_s: float
    log: str | None
    jit_cache: JitCacheJson


class TimingJson(TypedDict, total=False):
    """``timing``: when the cell's steps happened."""

    started_at: str
    marks_s: dict[str, float]
    server_ready_at: str
    ended_at: str
    finished_at: str  # ``ended_at`` in results from before it was renamed
    pipeline_overhead: dict[str, float | None]


class ClientJson(TypedDict, total=False):
    """``client``: how the client sent the requests."""

    concurrency: int


class NodeJson(TypedDict, total=False):
    """``node-<rank>/result.json``: what a non-zero node of a multi-node cell did."""

    node_rank: int
    status: str
    exit_code: int | None
    server_argv: list[str]
    slurm: dict[str, str] | None  # None outside SLURM
    log_tail: str
    devices: str | None


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
    concurrency: list[int]
    buckets: list[int]
    output_tokens: int  # per request, EOS ignored
    notes: list[str]  # levels cut short (time, requests) and why
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


class ResultJson(TypedDict, total=False):
    """``result.json``, its keys in the order a cell writes them."""

    schema_version: int
    status: str
    simulated: bool
    cell: Annotated[CellJson, NotNull]
    config_hash: str
    config: dict[str, Any]
    preflight: list[FindingJson]
    warnings: list[str]
    notes: list[str]
    runs: dict[str, str]  # the kernel per phase (prefill, decode, ...)
    requested: dict[str, Any]
    observed: dict[str, Any]
    mismatches: list[MismatchJson]
    evals: Annotated[dict[str, EvalJson], NotNull]
    accept: AcceptJson
    server: ServerJson
    provenance: ProvenanceJson
    error: ErrorJson | None
    timing: TimingJson
    label_runs: dict[str, str]  # the kernels the variant's name stands for
    unverified: list[UnverifiedJson]
    client: ClientJson
    resumed: list[ResumedJson]
    speed: SpeedJson  # only when the cell ran the speed phase
    serving: ServingJson  # only when the cell ran the serving phase
    parity: ParityJson  # only when the cell ran the parity phase
    node: NodeJson  # a non-zero node's own result, carried in memory, never on disk


def as_result_json(data: Mapping[str, Any]) -> ResultJson:
    """``data`` read through the schema (a JSON object as loaded; no key is checked here)."""
    return typing.cast(ResultJson, data)


def shape_problems(data: Mapping[str, Any]) -> dict[str, str]:
    """Top-level keys of an ``ok`` result whose blocks have the wrong JSON type, each with why.

    The typed readers read a wrong-typed block as empty, which would judge an ``ok`` cell as
    ``None/None/None`` or with no eval summary: such a result is unreadable instead. Every block
    the schema types as an object is checked, one level into the blocks and into ``evals``.
    """
    if data.get("status") != "ok":
        return {}
    found: dict[str, str] = {}
    for key, hint in typing.get_type_hints(ResultJson, include_extras=True).items():
        if key not in data or not _is_object_hint(hint):
            continue
        value = data[key]
        if not _object_fits(hint, value):
            found[key] = "must be an object" if _not_null(hint) else "must be an object or null"
        elif inner := _inner_problems(key, hint, value):
            found[key] = "; ".join(inner)
    return found


def _inner_problems(key: str, hint: Any, value: Any) -> list[str]:
    """The blocks inside ``value`` (an object or null) that have the wrong JSON type."""
    if not isinstance(value, dict):
        return []
    block = _object_type(hint)
    if _is_typed_dict(block):
        hints = typing.get_type_hints(block, include_extras=True)
        return [
            f"{key}.{k} must be an object or null"
            for k, h in hints.items()
            if _is_object_hint(h) and k in value and not _object_fits(h, value[k])
        ]
    values = typing.get_args(block)[1:]  # dict[str, V]: every V that is an object
    if values and _is_object_hint(values[0]):
        return [f"{key}.{k} must be an object" for k, v in value.items() if not isinstance(v, dict)]
    return []


def _not_null(hint: Any) -> bool:
    return typing.get_origin(hint) is Annotated and NotNull in hint.__metadata__


def _object_fits(hint: Any, value: Any) -> bool:
    return isinstance(value, dict) or (value is None and not _not_null(hint))


def _object_type(hint: Any) -> Any:
    """The object type a hint names: unwraps ``Annotated`` and ``X | None``; None if not one."""
    if typing.get_origin(hint) is Annotated:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) in (Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = options[0] if len(options) == 1 else None
    return hint if _is_typed_dict(hint) or typing.get_origin(hint) is dict else None


def _is_object_hint(hint: Any) -> bool:
    return _object_type(hint) is not None


def _is_typed_dict(hint: Any) -> bool:
    return isinstance(hint, type) and typing.is_typeddict(hint)
