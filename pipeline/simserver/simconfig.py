"""The ``--sim-config`` file: the simulated model, its answer key and the fault flags.

The JSON holds the fields of ``pipeline.schema.SimulatedConf`` plus ``answer_key`` (JSONL of
``{"question", "answer", "kind"}``) and ``ledger`` (JSONL written per served completion). Every
field is checked here so that a typo stops the server with the key and the file named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

from pipeline.simserver.args import SUPPORTED_VERSIONS

RATE_FAULTS = ("connection_reset_rate", "http_5xx_rate", "malformed_json_rate", "truncation_rate")
_FAULT_TYPES: dict[str, type | tuple[type, ...]] = {
    "reject_message": str,
    "crash_at_start": (bool, str),  # a string is the last traceback line to print
    "never_healthy": bool,
    "crash_after_requests": int,
    "hang_after_requests": int,
    "missing_spec_keys": bool,
    "latency_s": (int, float),
    "serve_instead": dict,  # /server_info keys the server runs with, whatever its argv asked
    "foreign_requests": int,  # requests of "another client" counted beside the first ones sent
    "busy": bool,  # a request of another client that never finishes: the server is never idle
    "exit_after_requests": int,  # the process ends right after sending the N-th answer
    **{name: (int, float) for name in RATE_FAULTS},
}
_EFFECT_KEYS = {"match", "accuracy_delta", "accept_length_delta"}


class SimConfigError(ValueError):
    """A ``--sim-config`` or answer-key file that the simulated server cannot use."""


@dataclass(frozen=True)
class Effect:
    """Deltas applied when every ``match`` key equals the cell's value."""

    match: dict[str, Any]
    accuracy_delta: float = 0.0
    accept_length_delta: float = 0.0


@dataclass(frozen=True)
class AnswerEntry:
    """One answer-key row."""

    question: str
    answer: str
    kind: str  # mcq | numeric


@dataclass(frozen=True)
class SimConfig:
    """A validated ``--sim-config`` file."""

    sglang_version: str = "0.5.19"
    accuracy: float = 0.72
    accept_length: float = 2.6
    effects: tuple[Effect, ...] = ()
    mean_completion_tokens: int = 160
    latency_s: float = 0.0
    startup_delay_s: float = 0.5
    seed: int = 0
    faults: dict[str, Any] = field(default_factory=dict)
    answer_key: str | None = None
    ledger: str | None = None


def load_sim_config(path: str | Path) -> SimConfig:
    """Read and check a ``--sim-config`` JSON file.

    Raises:
        SimConfigError: naming the file, the key and what to write instead.
    """
    where = f"--sim-config {path}"
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SimConfigError(f"{where}: cannot read a JSON object: {exc}") from exc
    if not isinstance(raw, dict):
        raise SimConfigError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    known = {f.name for f in fields(SimConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SimConfigError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(known)}")
    conf = SimConfig(
        **{k: v for k, v in raw.items() if k != "effects"},
        effects=tuple(_effect(e, i, where) for i, e in enumerate(raw.get("effects") or [])),
    )
    _check_fields(conf, where)
    return conf


def _check_fields(conf: SimConfig, where: str) -> None:
    if conf.sglang_version not in SUPPORTED_VERSIONS:
        raise SimConfigError(
            f"{where}: sglang_version={conf.sglang_version!r}; "
            f"use one of {list(SUPPORTED_VERSIONS)}"
        )
    for name in ("accuracy", "accept_length", "latency_s", "startup_delay_s"):
        if not isinstance(getattr(conf, name), (int, float)):
            raise SimConfigError(f"{where}: {name} must be a number")
    if not 0.0 <= conf.accuracy <= 1.0:
        raise SimConfigError(f"{where}: accuracy={conf.accuracy} must lie in [0, 1]")
    for name in ("mean_completion_tokens", "seed"):
        if not isinstance(getattr(conf, name), int) or getattr(conf, name) < 0:
            raise SimConfigError(f"{where}: {name} must be a non-negative integer")
    if conf.mean_completion_tokens < 1:
        raise SimConfigError(f"{where}: mean_completion_tokens must be at least 1")
    if not isinstance(conf.faults, dict):
        raise SimConfigError(f"{where}: faults must be an object of fault flags")
    for name, value in conf.faults.items():
        _check_fault(name, value, where)


def _check_fault(name: str, value: Any, where: str) -> None:
    if name not in _FAULT_TYPES:
        raise SimConfigError(f"{where}: unknown fault {name!r}; known: {sorted(_FAULT_TYPES)}")
    if value is None:
        return
    expected = _FAULT_TYPES[name]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise SimConfigError(f"{where}: faults.{name}={value!r} has the wrong type")
    if name in RATE_FAULTS and not 0.0 <= cast(float, value) <= 1.0:
        raise SimConfigError(f"{where}: faults.{name}={value} must be a rate in [0, 1]")


def _effect(raw: Any, index: int, where: str) -> Effect:
    at = f"{where}: effects[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("match"), dict) or not raw["match"]:
        raise SimConfigError(f"{at}: expected {{'match': {{key: value}}, 'accuracy_delta': x}}")
    extra = set(raw) - _EFFECT_KEYS
    if extra:
        raise SimConfigError(
            f"{at}: unknown key(s) {sorted(extra)}; allowed {sorted(_EFFECT_KEYS)}"
        )
    deltas = {k: raw.get(k, 0.0) for k in ("accuracy_delta", "accept_length_delta")}
    for key, value in deltas.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise SimConfigError(f"{at}: {key}={value!r} must be a number")
    return Effect(match=dict(raw["match"]), **{k: float(v) for k, v in deltas.items()})


def load_answer_key(path: str | Path) -> list[AnswerEntry]:
    """Read the answer key JSONL (one ``{"question", "answer", "kind"}`` object per line).

    Raises:
        SimConfigError: naming the file, the line and the bad field.
    """
    entries = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise SimConfigError(f"answer_key {path}: cannot read: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if line.strip():
            entries.append(_answer_entry(line, f"answer_key {path} line {number}"))
    return entries


def _answer_entry(line: str, at: str) -> AnswerEntry:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SimConfigError(f"{at}: not JSON: {exc}") from exc
    if not isinstance(row, dict):
        raise SimConfigError(f"{at}: expected an object with question, answer, kind")
    for key in ("question", "answer"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise SimConfigError(f"{at}: field {key!r} must be a non-empty string")
    if row.get("kind") not in ("mcq", "numeric"):
        raise SimConfigError(f"{at}: field 'kind' is {row.get('kind')!r}; use 'mcq' or 'numeric'")
    return AnswerEntry(question=row["question"], answer=row["answer"].strip(), kind=row["kind"])
