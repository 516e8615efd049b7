"""The blocks of ``result.json`` (cell, evals, accept, error, mismatches, ...) as frozen values.

``pipeline.results.result_types.CellResult`` puts them together; every ``from_json`` here accepts
a block as any released pipeline wrote it: a missing field reads as None or empty, never as "None".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.results.json_values import as_list, as_map, as_text

SCHEMA_VERSION = 1
# What a cell job writes as ``status`` (``planned``: a dry run).
STATUSES = ("ok", "failed", "unsupported", "planned")


@dataclass(frozen=True)
class ResultError:
    """``error``: why a cell did not end ``ok`` (kind, message, the server log's tail)."""

    kind: str
    message: str
    log_tail: str = ""
    reasons: tuple[Mapping[str, Any], ...] = ()  # pre-flight findings of an unsupported cell

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultError:
        """The error block as written (missing fields read as empty)."""
        reasons = tuple(as_map(r) for r in as_list(data.get("reasons")))
        return cls(
            as_text(data.get("kind")),
            as_text(data.get("message")),
            as_text(data.get("log_tail")),
            reasons,
        )

    def first_line(self) -> str:
        """The message's first line (it usually ends with the fix)."""
        lines = self.message.splitlines()
        return lines[0] if lines else ""


@dataclass(frozen=True)
class CellIdentity:
    """``cell``: what the cell is (model, variant, KV dtype, skip-softmax, speculative recipe)."""

    name: str
    model: str | None
    model_path: str | None
    variant: str | None
    kv_dtype: str | None
    skip_prefill: Any
    skip_decode: Any
    speculative: Mapping[str, Any]
    gpu_name: str | None
    sglang_version: str | None
    server_version: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellIdentity:
        """The cell block as written; a field an old result lacks is None."""
        skip, gpu = as_map(data.get("skip_softmax")), as_map(data.get("gpu"))

        def opt(key: str, block: Mapping[str, Any] = data) -> str | None:
            return None if block.get(key) is None else str(block[key])

        return cls(
            as_text(data.get("name"), "?"),
            opt("model"),
            opt("model_path"),
            opt("variant"),
            opt("kv_dtype"),
            skip.get("prefill"),
            skip.get("decode"),
            as_map(data.get("speculative")),
            opt("name", gpu) or None,
            opt("sglang_version"),
            opt("server_version"),
        )


@dataclass(frozen=True)
class Mismatch:
    """``mismatches[]``: a setting the server reported other than the cell asked."""

    key: str
    requested: Any
    observed: Any
    verifiable: bool = True


@dataclass(frozen=True)
class Unverified:
    """``unverified[]``: a setting the cell asked for that the server did not report."""

    key: str
    requested: Any
    reason: str | None = None  # why it cannot be checked, and what would expose it


@dataclass(frozen=True)
class Resumed:
    """``resumed[]``: a rerun that found the cell (``action``: e.g. ``skipped: already ok``)."""

    at: str
    action: str


@dataclass(frozen=True)
class Provenance:
    """``provenance``: what ran the cell (server env, packages, mtp-eval commit, Slurm job)."""

    server_env: Mapping[str, Any]
    packages: Mapping[str, Any]
    git_sha: str | None
    git_dirty: bool
    slurm: Mapping[str, Any] | None  # the cell's SLURM job, None outside SLURM
    server_argv: tuple[str, ...] = ()  # as started (secrets masked), multi-node flags included
    cuda_visible_devices: str | None = None  # as the cell's job found it (SLURM binds GPUs)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """The provenance block as written."""
        git = as_map(data.get("mtp_eval_git"))
        sha, slurm, devices = git.get("sha"), data.get("slurm"), data.get("cuda_visible_devices")
        return cls(
            as_map(data.get("server_env")),
            as_map(data.get("packages")),
            None if sha is None else str(sha),
            bool(git.get("dirty")),
            as_map(slurm) if slurm is not None else None,
            tuple(str(a) for a in as_list(data.get("server_argv"))),
            None if devices is None else str(devices),
        )


@dataclass(frozen=True)
class NodeResult:
    """``node-<rank>/result.json``: what a non-zero node of a multi-node cell did.

    Node 0 serves HTTP, runs the evals and writes the cell's result; every other node only runs
    its SGLang launcher until node 0 is done, and writes this.
    """

    node_rank: int
    status: str  # ok | failed: its launcher exited before node 0 was done
    exit_code: int | None
    server_argv: tuple[str, ...]  # secrets masked
    slurm: Mapping[str, Any] | None  # this node's task of the cell's job
    log_tail: str = ""  # the end of its server log, when it failed
    devices: str | None = None  # its server's CUDA_VISIBLE_DEVICES (None: inherited)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NodeResult:
        """The node's result as written."""
        slurm = data.get("slurm")
        return cls(
            int(data["node_rank"]),
            as_text(data.get("status"), "?"),
            data.get("exit_code"),
            tuple(str(a) for a in as_list(data.get("server_argv"))),
            as_map(slurm) if slurm is not None else None,
            as_text(data.get("log_tail")),
            data.get("devices"),
        )

    def to_json(self) -> dict[str, Any]:
        """The node's result as it is written."""
        slurm = None if self.slurm is None else dict(self.slurm)
        return {
            "node_rank": self.node_rank, "status": self.status, "exit_code": self.exit_code,
            "server_argv": list(self.server_argv), "slurm": slurm, "log_tail": self.log_tail,
            "devices": self.devices,
        }  # fmt: skip
