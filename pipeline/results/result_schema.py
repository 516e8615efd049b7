"""The layout of ``result.json``, stated once: the writer, the reader and the validator use it.

Each block is a ``TypedDict`` whose keys are the file's keys (``evals.<name>`` and ``accept``:
``pipeline.results.eval_schema``; the cell's own blocks: ``cell_schema``; the phases' blocks:
``phase_schema``; all re-exported here). ``ResultDraft`` (the writer) holds a
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

from pipeline.results.cell_schema import (
    CellJson,
    ClientJson,
    ErrorJson,
    GpuJson,
    JitCacheJson,
    MismatchJson,
    NodeJson,
    ProvenanceJson,
    ResumedJson,
    ServerJson,
    TimingJson,
    UnverifiedJson,
)
from pipeline.results.eval_schema import AcceptJson, EvalJson
from pipeline.results.nested_schema import FindingJson
from pipeline.results.phase_schema import (
    ParityGateJson,
    ParityJson,
    ServingJson,
    ServingPointJson,
    SpeedJson,
    SpeedPointJson,
)

# The blocks are re-exported: writers and readers import the whole layout from here.
__all__ = [
    "SCHEMA_VERSION", "STATUSES", "CellJson", "ClientJson", "ErrorJson", "GpuJson",
    "JitCacheJson", "MismatchJson", "NodeJson", "NotNull", "ParityGateJson", "ParityJson",
    "ProvenanceJson", "ResultJson", "ResumedJson", "ServerJson", "ServingJson",
    "ServingPointJson", "SpeedJson", "SpeedPointJson", "TimingJson", "UnverifiedJson",
    "as_result_json", "shape_problems",
]  # fmt: skip

SCHEMA_VERSION = 1
# What a cell job writes as ``status`` (``planned``: a dry run).
STATUSES = ("ok", "failed", "unsupported", "planned")


class NotNull:
    """Marks a block that must be an object when present.

    Every other object block may be null in a file (it reads as empty), though the writer always
    writes an object.
    """


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
