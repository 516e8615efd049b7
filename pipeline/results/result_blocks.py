"""The blocks of ``result.json`` (cell, evals, accept, error, mismatches, ...) as frozen values.

``pipeline.results.result_types.CellResult`` puts them together; every ``from_json`` here accepts
a block as any released pipeline wrote it: a missing field reads as None or empty, never as "None".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

SCHEMA_VERSION = 1
# What a cell job writes as ``status`` (``planned``: a dry run).
STATUSES = ("ok", "failed", "unsupported", "planned")
EMPTY: Mapping[str, Any] = MappingProxyType({})


def as_map(value: Any) -> Mapping[str, Any]:
    """A JSON object, or empty for a missing/null block."""
    return value if isinstance(value, Mapping) else EMPTY


def as_text(value: Any, missing: str = "") -> str:
    """A JSON value as text, ``missing`` for null or absent."""
    return missing if value is None else str(value)


def as_list(value: Any) -> list[Any]:
    """A JSON array, or empty for a missing/null one."""
    return list(value) if isinstance(value, list | tuple) else []


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
class AcceptBlock:
    """``accept`` (of the cell or of one eval): speculative accept statistics."""

    status: str | None = None  # ok | missing | ...
    accept_length: float | None = None
    accept_rate: float | None = None
    n_with_spec: int | None = None
    accept_length_stderr: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AcceptBlock:
        """The accept block as written (an old result without one reads as all None)."""
        status = data.get("status")
        return cls(
            None if status is None else str(status),
            data.get("accept_length"),
            data.get("accept_rate"),
            data.get("n_with_spec"),
            data.get("accept_length_stderr"),
        )


def _seconds(value: Any) -> float | None:
    """A number of seconds as written, None for null, absent or not a number."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class SequentialBlock:
    """``evals.<name>.sequential``: the stopping design, the cell's role and its last look."""

    role: Any
    look: Any = None  # a candidate's last look (1-based)
    decision: Any = None  # GO | NO-GO | undecided
    design: Mapping[str, Any] = field(default_factory=dict)  # max_repeats, ..., spending

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SequentialBlock:
        """The block as written (read leniently: ``EvalSummary.checked_sequential`` checks it)."""
        keys = ("max_repeats", "repeats_per_round", "alpha", "margin", "spending")
        design = {k: data[k] for k in keys if k in data}
        return cls(data.get("role"), data.get("look"), data.get("decision"), design)


@dataclass(frozen=True)
class EvalSummary:
    """``evals.<name>``: one eval's summary; ``data`` keeps every field it was written with."""

    accuracy: float | None
    ci95: tuple[float | None, float | None]
    accept: AcceptBlock | None  # None: the eval has no accept window of its own
    graded: bool = True  # False: ungraded (MT-Bench-style, accept rates only)
    stderr: float | None = None
    n_questions: int | None = None
    n_repeats: int | None = None
    rates: Mapping[str, float | None] = field(default_factory=dict)  # no_answer, truncated, error
    sequential: SequentialBlock | None = None  # None: a fixed design (or a malformed block)
    # The server's prefill time (``evals.metrics.prefill_summary``); None in results from before it
    # or from a server without --enable-metrics.
    mean_prefill_s: float | None = None
    prefill_s_per_1k_prompt_tokens: float | None = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalSummary:
        """The eval block as written (MT-Bench and other ungraded evals have no accuracy)."""
        ci = as_list(data.get("ci95"))
        lo, hi = [*ci, None, None][:2]
        own, seq = data.get("accept"), data.get("sequential")
        rates = ("no_answer_rate", "truncated_rate", "error_rate")
        return cls(
            accuracy=data.get("accuracy"),
            ci95=(lo, hi),
            accept=AcceptBlock.from_json(as_map(own)) if own else None,
            graded=data.get("graded", True) is not False,
            stderr=data.get("stderr"),
            n_questions=data.get("n_questions"),
            n_repeats=data.get("n_repeats"),
            rates={k: data.get(k) for k in rates},
            sequential=SequentialBlock.from_json(seq) if isinstance(seq, dict) else None,
            mean_prefill_s=_seconds(data.get("mean_prefill_s")),
            prefill_s_per_1k_prompt_tokens=_seconds(data.get("prefill_s_per_1k_prompt_tokens")),
            data=data,
        )

    def checked_sequential(self) -> SequentialBlock | None:
        """The sequential block, checked: None when the eval ran the fixed design.

        Raises:
            ValueError: the block is not a mapping or lacks a key its role needs.
        """
        seq = self.data.get("sequential")
        if seq is None:
            return None
        if not isinstance(seq, dict):
            raise ValueError(f"sequential = {seq!r} must be a mapping")
        lacking = [k for k in ("role", "max_repeats", "repeats_per_round") if k not in seq]
        if seq.get("role") == "candidate" and "look" not in seq:
            lacking.append("look")
        if lacking:
            raise ValueError(f"sequential block lacks {', '.join(lacking)}")
        return SequentialBlock.from_json(seq)


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

    def same_but_variant(self, other: CellIdentity, variant: str) -> bool:
        """Whether ``other`` is this cell with the ``variant`` variant (all else equal)."""
        mine = (self.model, self.kv_dtype, self.skip_prefill, self.skip_decode, self.speculative)
        theirs = (
            other.model,
            other.kv_dtype,
            other.skip_prefill,
            other.skip_decode,
            other.speculative,
        )
        return other.variant == variant and mine == theirs


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
    slurm: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """The provenance block as written."""
        git = as_map(data.get("mtp_eval_git"))
        sha = git.get("sha")
        return cls(
            as_map(data.get("server_env")),
            as_map(data.get("packages")),
            None if sha is None else str(sha),
            bool(git.get("dirty")),
            as_map(data.get("slurm")),
        )
