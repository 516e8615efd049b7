"""``result.json``'s blocks about the cell and its run: what it is, its server, provenance, timing.

``cell``, ``error``, ``mismatches``, ``unverified``, ``resumed``, ``provenance``, ``server``,
``timing``, ``client`` and a non-zero node's ``node``, each a ``TypedDict`` whose keys are the
file's keys; ``result_schema.ResultJson`` puts them together and is where callers import them
from.
"""

from __future__ import annotations

from typing import Any, TypedDict

from pipeline.results.nested_schema import GitJson, HostJson, SkipSoftmaxJson


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
