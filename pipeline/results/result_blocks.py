"""The blocks of ``result.json`` (cell, evals, accept, error, mismatches, ...) as frozen values.

``pipeline.results.result_types.CellResult`` puts them together; every ``from_json`` here accepts
a block as any released pipeline wrote it: a missing field reads as None or empty, never as "None".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipeline.results.json_values import EMPTY, as_list, as_map, as_optional_text, as_text
from pipeline.results.result_schema import (
    SCHEMA_VERSION,
    STATUSES,
    CellJson,
    ErrorJson,
    NodeJson,
    ProvenanceJson,
)
from pipeline.results.skip_factor import parse_factor

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "CellIdentity",
    "Mismatch",
    "NodeResult",
    "Provenance",
    "ResultError",
    "Resumed",
    "Unverified",
]


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
        block = cast(ErrorJson, data)
        reasons = tuple(as_map(r) for r in as_list(block.get("reasons")))
        return cls(
            as_text(block.get("kind")),
            as_text(block.get("message")),
            as_text(block.get("log_tail")),
            reasons,
        )

    def first_line(self) -> str:
        """The message's first line (it usually ends with the fix)."""
        lines = self.message.splitlines()
        return lines[0] if lines else ""


@dataclass(frozen=True)
class CellIdentity:
    """``cell``: what the cell is (model, variant, KV dtype, skip-softmax, speculative recipe).

    The one identity type of a cell: the report's ``CellRecord`` holds one, the baseline rule's
    ``CellKey`` is derived from one (``baseline_choice.key_of``). None: the cell does not say.
    """

    name: str = "?"
    model: str | None = None
    model_path: str | None = None
    variant: str | None = None
    kv_dtype: str | None = None
    skip_prefill: float | None = None  # ``skip_factor.parse_factor``: None when unset
    skip_decode: float | None = None
    speculative: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    gpu_name: str | None = None
    sglang_version: str | None = None
    server_version: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellIdentity:
        """The cell block as written; a field an old result lacks is None.

        Raises:
            ValueError: a skip-softmax factor that is no number (``parse_factor``).
        """
        cell = cast(CellJson, data)
        skip, gpu = as_map(cell.get("skip_softmax")), as_map(cell.get("gpu"))
        return cls(
            as_text(cell.get("name"), "?"),
            as_optional_text(cell.get("model")),
            as_optional_text(cell.get("model_path")),
            as_optional_text(cell.get("variant")),
            as_optional_text(cell.get("kv_dtype")),
            parse_factor(skip.get("prefill"), "cell.skip_softmax.prefill"),
            parse_factor(skip.get("decode"), "cell.skip_softmax.decode"),
            as_map(cell.get("speculative")),
            as_optional_text(gpu.get("name")) or None,
            as_optional_text(cell.get("sglang_version")),
            as_optional_text(cell.get("server_version")),
        )

    @property
    def spec_recipe(self) -> Mapping[str, Any] | None:
        """The speculative recipe when the cell speculates (an ``algorithm`` set), else None."""
        return self.speculative if self.speculative.get("algorithm") else None


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
    git_source: str | None = None  # git, or MTP_EVAL_COMMIT for a copy without .git
    cpus: int | None = None  # CPUs the cell's processes could use (None: not recorded)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """The provenance block as written."""
        block = cast(ProvenanceJson, data)
        git = as_map(block.get("mtp_eval_git"))
        slurm = block.get("slurm")
        return cls(
            as_map(block.get("server_env")),
            as_map(block.get("packages")),
            as_optional_text(git.get("sha")),
            bool(git.get("dirty")),
            as_map(slurm) if slurm is not None else None,
            tuple(str(a) for a in as_list(block.get("server_argv"))),
            as_optional_text(block.get("cuda_visible_devices")),
            # Written only when the commit came from MTP_EVAL_COMMIT: a sha without it is git's.
            as_optional_text(git.get("source", "git" if git.get("sha") else None)),
            cpus if type(cpus := as_map(block.get("host")).get("cpus")) is int else None,
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
        node = cast(NodeJson, data)
        slurm = node.get("slurm")
        return cls(
            int(node["node_rank"]),
            as_text(node.get("status"), "?"),
            node.get("exit_code"),
            tuple(str(a) for a in as_list(node.get("server_argv"))),
            as_map(slurm) if slurm is not None else None,
            as_text(node.get("log_tail")),
            node.get("devices"),
        )

    def to_json(self) -> NodeJson:
        """The node's result as it is written."""
        slurm = None if self.slurm is None else dict(self.slurm)
        return {
            "node_rank": self.node_rank, "status": self.status, "exit_code": self.exit_code,
            "server_argv": list(self.server_argv), "slurm": slurm, "log_tail": self.log_tail,
            "devices": self.devices,
        }  # fmt: skip
