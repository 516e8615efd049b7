"""``result.json`` as a typed, frozen value: every reader of a cell's result goes through it.

``CellResult.from_json`` accepts every result a released pipeline wrote (schema_version 1, and
the results from before some blocks existed: a missing block reads as empty, never as the string
"None"); ``to_json`` gives back the exact mapping it was read from, so a result read and written
again stays byte-identical (blocks this module does not type are kept, never dropped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipeline.results.accept_block import AcceptBlock, CrossCheck, Traffic
from pipeline.results.eval_block import EvalSummary, SequentialBlock
from pipeline.results.json_values import as_list, as_map, as_optional_text, as_text
from pipeline.results.parity_block import ParityBlock
from pipeline.results.result_blocks import (
    SCHEMA_VERSION,
    STATUSES,
    CellIdentity,
    Mismatch,
    NodeResult,
    Provenance,
    ResultError,
    Resumed,
    Unverified,
)
from pipeline.results.result_schema import (
    ClientJson,
    ResultJson,
    ServerJson,
    TimingJson,
    as_result_json,
)
from pipeline.results.serving_block import ServingBlock
from pipeline.results.speed_block import SpeedBlock

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "AcceptBlock",
    "CellIdentity",
    "CellResult",
    "CrossCheck",
    "EvalSummary",
    "Mismatch",
    "NodeResult",
    "Provenance",
    "ResultError",
    "Resumed",
    "SequentialBlock",
    "Traffic",
    "Unverified",
]


@dataclass(frozen=True)
class CellResult:
    """One cell's ``result.json``, typed; ``raw`` is the mapping it was read from (``to_json``)."""

    schema_version: int
    status: str
    simulated: bool
    cell: CellIdentity
    config_hash: str | None
    warnings: tuple[str, ...]
    runs: Mapping[str, Any]
    label_runs: Mapping[str, Any]
    mismatches: tuple[Mismatch, ...]
    unverified: tuple[Unverified, ...]
    evals: Mapping[str, EvalSummary]
    accept: AcceptBlock
    error: ResultError | None
    started_at: str | None
    ended_at: str | None  # ``timing.ended_at`` (``finished_at`` in early results)
    resumed: tuple[Resumed, ...]
    server_argv: tuple[str, ...]
    provenance: Provenance
    observed: Mapping[str, Any] = field(default_factory=dict)  # the settings the server reports
    requested: Mapping[str, Any] = field(default_factory=dict)  # every setting checked
    client_concurrency: int | None = None  # requests the client kept in flight
    marks: Mapping[str, float] = field(default_factory=dict)  # timing.marks_s: s since start
    overhead: Mapping[str, float | None] = field(default_factory=dict)  # the pipeline's own time
    node: NodeResult | None = None  # a non-zero node's own result (multi-node, not on disk)
    speed: SpeedBlock | None = None  # the speed phase, when the cell ran one
    serving: ServingBlock | None = None  # the serving phase, when the cell ran one
    parity: ParityBlock | None = None  # the parity phase's order, cost and gate, when it ran
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellResult:
        """Read a result as any released pipeline wrote it (schema_version 1 or none).

        Raises:
            ValueError: when ``schema_version`` is newer than this reader knows.
        """
        d = as_result_json(data)
        version = int(d.get("schema_version") or SCHEMA_VERSION)
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {version} is newer than this mtp-eval reads ({SCHEMA_VERSION}): "
                "update mtp-eval to read it"
            )
        timing = cast(TimingJson, as_map(d.get("timing")))
        error, node = d.get("error"), d.get("node")
        return cls(
            schema_version=version,
            status=as_text(d.get("status"), "?"),
            simulated=bool(d.get("simulated")),
            cell=CellIdentity.from_json(as_map(d.get("cell"))),
            config_hash=as_optional_text(d.get("config_hash")),
            warnings=tuple(str(w) for w in as_list(d.get("warnings"))),
            runs=as_map(d.get("runs")),
            label_runs=as_map(d.get("label_runs")),
            mismatches=tuple(_mismatch(m) for m in _objects(d.get("mismatches"))),
            unverified=tuple(_unverified(u) for u in _objects(d.get("unverified"))),
            evals={k: EvalSummary.from_json(as_map(v)) for k, v in as_map(d.get("evals")).items()},
            accept=AcceptBlock.from_json(as_map(d.get("accept"))),
            error=ResultError.from_json(as_map(error)) if error else None,
            started_at=as_optional_text(timing.get("started_at")),
            ended_at=as_optional_text(timing.get("ended_at") or timing.get("finished_at") or None),
            resumed=tuple(
                Resumed(as_text(r.get("at")), as_text(r.get("action")))
                for r in _objects(d.get("resumed"))
            ),
            server_argv=tuple(
                str(a) for a in as_list(cast(ServerJson, as_map(d.get("server"))).get("argv"))
            ),
            provenance=Provenance.from_json(as_map(d.get("provenance"))),
            observed=as_map(d.get("observed")),
            requested=as_map(d.get("requested")),
            client_concurrency=cast(ClientJson, as_map(d.get("client"))).get("concurrency"),
            marks=as_map(timing.get("marks_s")),
            overhead=as_map(timing.get("pipeline_overhead")),
            node=NodeResult.from_json(node) if isinstance(node, Mapping) else None,
            speed=SpeedBlock.from_json(d.get("speed")),
            serving=ServingBlock.from_json(d.get("serving")),
            parity=ParityBlock.from_json(d.get("parity")),
            raw=data,
        )

    @classmethod
    def unreadable(cls, message: str) -> CellResult:
        """A ``failed`` stand-in for a result.json that cannot be read (``message`` says why)."""
        return cls.from_json(
            {"status": "failed", "error": {"kind": UNREADABLE, "message": message}}
        )

    def to_json(self) -> dict[str, Any]:
        """The result as written: ``from_json(x).to_json() == x``, key order included."""
        return dict(self.raw)

    def with_resumed(self, entry: Resumed) -> ResultJson:
        """The result as JSON with ``entry`` added to ``resumed`` (a rerun that found it)."""
        data = as_result_json(self.to_json())
        data["resumed"] = [*as_list(data.get("resumed")), {"at": entry.at, "action": entry.action}]
        return data

    @property
    def parallel(self) -> tuple[int, int]:
        """``(tensor-parallel size, SGLang nodes)`` of the server; ``(1, 1)`` when unsaid.

        From the server's argv (``--tp-size``, ``--nnodes``), else the config's ``model.tp``.
        """
        argv = list(self.server_argv)

        def flag(name: str) -> int | None:
            at = argv.index(name) + 1 if name in argv else 0
            return int(argv[at]) if 0 < at < len(argv) and argv[at].isdigit() else None

        model = as_map(as_map(self.raw.get("config")).get("model"))
        tp = flag("--tp-size") or flag("--tensor-parallel-size") or int(model.get("tp") or 1)
        return tp, flag("--nnodes") or 1

    def misconfigured(self) -> list[str]:
        """What the server ran other than the cell asked; a cell with any is never judged.

        Verified mismatches (``server.on_mismatch=warn`` let the cell go on), and kernels
        (``runs``) other than the ones its variant's name stands for (``label_runs``).
        """
        found = [
            f"{m.key}: asked {m.requested!r}, server runs {m.observed!r}"
            for m in self.mismatches
            if m.verifiable
        ]
        if any("attention" in line.split(":", 1)[0] for line in found):
            return found  # the backend keys already say which kernels differ
        runs = self.runs
        for phase, kernel in self.label_runs.items():
            line = f"runs.{phase}: asked {kernel!r}, server runs {runs.get(phase)!r}"
            if (
                kernel != "default"
                and phase in runs
                and runs[phase] != kernel
                and line not in found
            ):
                found.append(line)
        return found

    def unverified_lines(self) -> list[str]:
        """The settings the cell asked for that its server did not report, as ``key=value``."""
        return [f"{u.key}={asked_text(u.requested)}" for u in self.unverified]

    def skipped_since(self, since: str | None) -> bool:
        """Whether a run started at ``since`` (ISO time) found the cell finished and skipped it."""
        last = self.resumed[-1] if self.resumed else Resumed("", "")
        return since is not None and last.action.startswith("skipped") and last.at >= since


UNREADABLE = "unreadable_result"  # error kind of a result.json that cannot be read


def asked_text(value: Any) -> str:
    """A requested value in words: None is "must be unset" (exact softmax), not the word None."""
    return "unset" if value is None else repr(value)


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON array (anything else in it is skipped), empty for a missing one."""
    return [item for item in as_list(value) if isinstance(item, Mapping)]


def _mismatch(m: Mapping[str, Any]) -> Mismatch:
    return Mismatch(
        str(m.get("key")), m.get("requested"), m.get("observed"), m.get("verifiable", True)
    )


def _unverified(u: Mapping[str, Any]) -> Unverified:
    reason = u.get("reason")
    return Unverified(str(u.get("key")), u.get("requested"), as_text(reason) or None)
