"""The result a running cell fills in, step by step, before ``result.json`` is written.

``ResultDraft`` is the writer's side of ``pipeline.results.result_schema``: every block is set
through a named method, so no module of the cell indexes the result with string keys, and the
draft itself holds a ``ResultJson``, so mypy checks each key it writes against the schema. It
keeps the JSON in the order the blocks were set (a result written today is byte-for-byte what the
cell wrote before the draft existed); ``as_result`` is the typed view of it so far, the one that
the steps reading their own cell (its baseline key, its samples' key, its release) take.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from backends.verify import Mismatch
from pipeline.results.nested_schema import FindingJson
from pipeline.results.result_schema import (
    SCHEMA_VERSION,
    CellJson,
    ErrorJson,
    GpuJson,
    JitCacheJson,
    MismatchJson,
    ParityJson,
    ProvenanceJson,
    ResultJson,
    ServingJson,
    SpeedJson,
)
from pipeline.results.result_types import (
    AcceptBlock,
    CellIdentity,
    CellResult,
    EvalSummary,
    ResultError,
    Unverified,
)


class ResultDraft:
    """A cell's result while the cell runs (mutable; ``to_json`` is what result.json holds)."""

    def __init__(self, data: ResultJson) -> None:
        self._data = data

    @classmethod
    def start(
        cls,
        cell: CellJson,
        config_hash: str,
        config: dict[str, Any],
        *,
        simulated: bool,
        slurm: dict[str, str] | None,
        started_at: str,
    ) -> ResultDraft:
        """A result that says ``failed`` until the cell proves otherwise.

        Args:
            cell: what the cell is (name, model, variant, KV dtype, skip-softmax, speculative).
            config_hash: the hash of ``config``, which decides whether a rerun measures again.
            config: the settings that define what the cell measures.
            simulated: whether the simulated server answers.
            slurm: the cell's SLURM job, when it runs in one.
            started_at: when the cell started (ISO time).
        """
        return cls({
            "schema_version": SCHEMA_VERSION,
            "status": "failed",
            "simulated": simulated,
            "cell": cell,
            "config_hash": config_hash,
            "config": config,
            "preflight": [],
            "warnings": [],
            "notes": [],
            "runs": {},
            "requested": {},
            "observed": {},
            "mismatches": [],
            "evals": {},
            "accept": {},
            "server": {},
            "provenance": {"slurm": slurm},
            "error": None,
            "timing": {"started_at": started_at, "marks_s": {}},
        })  # fmt: skip

    def to_json(self) -> ResultJson:
        """The result as JSON (the live mapping: later steps still change it)."""
        return self._data

    @property
    def status(self) -> str:
        """Ok | failed | unsupported | planned."""
        return str(self._data["status"])

    @status.setter
    def status(self, value: str) -> None:
        self._data["status"] = value

    @property
    def config_hash(self) -> str:
        """The hash of the settings that define the cell's measurements."""
        return str(self._data["config_hash"])

    @property
    def started_at(self) -> str:
        """When the cell started (ISO time)."""
        return str(self._data["timing"]["started_at"])

    @property
    def warnings(self) -> list[str]:
        """The cell's warnings (the live list: append to it)."""
        found: list[str] = self._data["warnings"]
        return found

    def set_eval(self, name: str, summary: EvalSummary) -> None:
        """An eval's summary block (``pipeline.results.eval_block.eval_block``)."""
        self._data["evals"][name] = summary.to_json()

    def set_eval_accept(self, name: str, accept: AcceptBlock) -> None:
        """The accept statistics of an eval's own counter window."""
        self._data["evals"][name]["accept"] = accept.to_json()

    def drop_eval(self, name: str) -> None:
        """Forget an eval's block (incomplete: its samples wait for a rerun)."""
        self._data["evals"].pop(name, None)

    def eval_measured(self, name: str) -> bool:
        """Whether eval ``name`` was measured to the end (its own accept window is set)."""
        return "accept" in self._data["evals"].get(name, {})

    def eval_summaries(self) -> dict[str, EvalSummary]:
        """Each eval's block as set so far, typed."""
        return {name: EvalSummary.from_json(block) for name, block in self._data["evals"].items()}

    def identity(self) -> CellIdentity:
        """What the cell is, typed."""
        return CellIdentity.from_json(self._data["cell"])

    def as_result(self) -> CellResult:
        """The result so far, typed (what ``result.json`` would read back as if written now)."""
        return CellResult.from_json(self._data)

    def set_platform(self, gpu: Mapping[str, Any], sglang_version: str | None) -> None:
        """The GPU the cell is planned for and the SGLang version it found."""
        cell = self._data["cell"]
        cell["gpu"] = cast(GpuJson, dict(gpu))  # ``backends.gpu.GpuInfo`` as a dict
        cell["sglang_version"] = sglang_version

    def set_server_version(self, version: Any) -> None:
        """The version the running server reports (None when it reports none)."""
        self._data["cell"]["server_version"] = version

    def set_preflight(self, findings: list[FindingJson]) -> None:
        """The pre-flight findings, as dicts."""
        self._data["preflight"] = findings

    def set_plan(
        self,
        requested: Mapping[str, Any],
        runs: Mapping[str, str],
        notes: list[str],
        argv: list[str],
        provenance: ProvenanceJson,
    ) -> None:
        """What the cell asks the server to run, its argv (secrets masked) and provenance."""
        self._data["requested"] = dict(requested)
        self._data["runs"] = dict(runs)
        self._data["notes"] += notes
        self._data["server"]["argv"] = argv
        self._data["provenance"] = provenance

    def set_server(self, base_url: str, ready_s: float, log: str | None, ready_at: str) -> None:
        """Where the server ran and how long it took to become healthy."""
        server = self._data["server"]
        server["base_url"], server["ready_s"], server["log"] = base_url, ready_s, log
        self._data["timing"]["server_ready_at"] = ready_at

    def set_jit_cache(self, use: JitCacheJson) -> None:
        """The JIT cache folder the server compiled into and how warm it was."""
        self._data["server"]["jit_cache"] = use

    def set_observed(self, observed: dict[str, Any]) -> None:
        """The settings the server reports."""
        self._data["observed"] = observed

    def set_requested(self, requested: dict[str, Any]) -> None:
        """Every setting checked against the server."""
        self._data["requested"] = requested

    def set_runs(self, runs: dict[str, str], label_runs: dict[str, str]) -> None:
        """The kernels the server runs, and the ones the variant's name stands for."""
        self._data["runs"], self._data["label_runs"] = runs, label_runs

    def set_mismatches(self, mismatches: Sequence[Mismatch]) -> None:
        """Every mismatch found (verifiable or not)."""
        self._data["mismatches"] = [_mismatch_json(m) for m in mismatches]

    def add_mismatches(self, mismatches: Sequence[Mismatch]) -> None:
        """Mismatches found after the first check (e.g. a server that changed between evals)."""
        found = [_mismatch_json(m) for m in mismatches]
        self._data["mismatches"] = [*self._data.get("mismatches", []), *found]

    def set_unverified(self, unverified: Sequence[Unverified]) -> None:
        """The settings the server did not report, each with why it cannot be checked."""
        self._data["unverified"] = [
            {"key": u.key, "requested": u.requested, "reason": u.reason} for u in unverified
        ]

    def set_speed(self, speed: SpeedJson) -> None:
        """The speed phase's block (``pipeline.measuring.speed.run``)."""
        self._data["speed"] = speed

    def set_serving(self, serving: ServingJson) -> None:
        """The serving phase's block (``pipeline.measuring.speed.serving.run``)."""
        self._data["serving"] = serving

    def set_parity(self, parity: ParityJson) -> None:
        """The parity phase's order, cost and gate (``pipeline.cell.parity_step``)."""
        self._data["parity"] = parity

    def set_client(self, concurrency: int) -> None:
        """How many requests the client kept in flight."""
        self._data["client"] = {"concurrency": concurrency}

    @property
    def accept(self) -> AcceptBlock:
        """The cell's accept block."""
        return AcceptBlock.from_json(self._data["accept"])

    @accept.setter
    def accept(self, block: AcceptBlock) -> None:
        self._data["accept"] = block.to_json()

    def mark(self, name: str, seconds: float) -> None:
        """Seconds since the cell started at which step ``name`` happened."""
        self._data["timing"]["marks_s"][name] = seconds

    @property
    def marks(self) -> dict[str, float]:
        """Every step's time (``timing.marks_s``)."""
        found: dict[str, float] = self._data["timing"]["marks_s"]
        return found

    def set_ended(self, ended_at: str) -> None:
        """When the cell ended."""
        self._data["timing"]["ended_at"] = ended_at

    def set_overhead(self, overhead: dict[str, float | None]) -> None:
        """The pipeline's own time (``timing.pipeline_overhead``)."""
        self._data["timing"]["pipeline_overhead"] = overhead

    @property
    def error(self) -> ResultError | None:
        """Why the cell did not end ``ok``, or None."""
        found = self._data["error"]
        return ResultError.from_json(found) if found else None

    def set_error(self, status: str, error: ResultError) -> None:
        """End the cell ``status`` with ``error`` (``reasons`` only for an unsupported cell)."""
        block: ErrorJson = {"kind": error.kind, "message": error.message}
        if error.reasons:
            block["reasons"] = [dict(r) for r in error.reasons]
        block["log_tail"] = error.log_tail
        self._data["status"], self._data["error"] = status, block

    def redact_error(self, redact: Callable[[str], str]) -> None:
        """Mask secrets in the error's message and log tail."""
        block = self._data["error"]
        if block:
            block["message"] = redact(block["message"])
            block["log_tail"] = redact(block["log_tail"])


def _mismatch_json(m: Mismatch) -> MismatchJson:
    return {"key": m.key, "requested": m.requested, "observed": m.observed,
            "verifiable": m.verifiable}  # fmt: skip
