"""Reference values with provenance (``conf/tolerance/references/*.yaml``), validated and matched.

Matching (first entry wins, as in TensorRT-LLM): ``eval`` and ``kv_dtype`` are a name, a list of
names or ``any``; ``speculative`` is ``null`` (non-speculative cells only), ``any``, or a mapping
whose keys must equal the cell's speculative settings (a list value allows several);
``variant`` and ``gpu`` are optional and default to any.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import MISSING

from backends.config_file import Check, ConfigFileError, checked, load_structured, read_mapping

PROVENANCE_KEYS = ("source", "date", "setup")
ACCURACY = Check(0.0, 1.0, hint="(a fraction: 72.5% is 0.725)")


@dataclass
class Provenance:
    """Where a reference value comes from."""

    source: str = MISSING  # URL, PR or file
    date: str = MISSING  # YYYY-MM-DD
    setup: str = MISSING  # what was run: questions x repeats, sampling, parallelism


@dataclass
class Entry:
    """One entry of a reference file: what it matches and its values."""

    eval: Any = MISSING  # a name, a list of names, or any
    kv_dtype: Any = MISSING  # a name, a list of names, or any
    speculative: Any = MISSING  # null: non-speculative cells; any; or {key: value or list}
    variant: Any = "any"
    gpu: Any = "any"  # a substring of the GPU name, or a list of them
    accuracy: float | None = checked(None, ACCURACY)
    accuracy_stderr: float | None = checked(None, Check(0.0, 1.0))
    accept_length: float | None = checked(None, Check(1.0, hint="(tokens per verify step)"))
    accept_length_stderr: float | None = checked(None, Check(0.0))
    provenance: Provenance = MISSING
    note: str | None = None


@dataclass
class ReferenceFile:
    """The schema of ``conf/tolerance/references/<model>.yaml`` (``_`` keys are YAML anchors)."""

    model: str = MISSING
    aliases: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)


class ReferenceFileError(ConfigFileError):
    """A reference file is invalid; the message names the file and key and says the fix."""


@dataclass(frozen=True)
class Reference:
    """One validated entry of a reference file."""

    file: Path
    index: int
    models: tuple[str, ...]
    entry: Mapping[str, Any]

    @property
    def where(self) -> str:
        """``file: entries[i]`` for messages."""
        return f"{self.file}: entries[{self.index}]"

    def value(self, key: str) -> float | None:
        """A numeric field (accuracy, accept_length, their stderrs) or None."""
        value = self.entry.get(key)
        return None if value is None else float(value)

    @property
    def provenance(self) -> Mapping[str, str]:
        """source, date and setup."""
        return self.entry["provenance"]


def load_references(folder: Path) -> list[Reference]:
    """Every entry of every ``*.yaml`` under ``folder`` (sorted by file name), validated."""
    out: list[Reference] = []
    for path in sorted(folder.glob("*.yaml")):
        out.extend(_load_file(path))
    return out


def _load_file(path: Path) -> list[Reference]:
    raw = read_mapping(path, ReferenceFileError)
    kept = {k: _dates_as_text(v) for k, v in raw.items() if not str(k).startswith("_")}
    parsed = load_structured(ReferenceFile, kept, str(path), error=ReferenceFileError)
    if not parsed.entries:
        raise ReferenceFileError(f"{path}: entries must be a non-empty list")
    models = (parsed.model, *parsed.aliases)
    return [
        Reference(path, i, tuple(m.lower() for m in models), _checked(path, i, e))
        for i, e in enumerate(parsed.entries)
    ]


def _checked(path: Path, index: int, entry: Entry) -> Mapping[str, Any]:
    """What the schema cannot say: one value at least, a provenance filled in, an ISO date."""
    where = f"{path}: entries[{index}]"
    if entry.accuracy is None and entry.accept_length is None:
        raise ReferenceFileError(f"{where}: needs accuracy and / or accept_length")
    for key in PROVENANCE_KEYS:
        if not getattr(entry.provenance, key).strip():
            raise ReferenceFileError(f"{where}.provenance.{key} is empty")
    try:
        datetime.date.fromisoformat(entry.provenance.date)
    except ValueError as err:
        raise ReferenceFileError(
            f"{where}.provenance.date = {entry.provenance.date!r} must be YYYY-MM-DD"
        ) from err
    return dataclasses.asdict(entry)


def _dates_as_text(node: Any) -> Any:
    # YAML reads an unquoted 2026-07-24 as a date; the schema keeps dates as text.
    if isinstance(node, dict):
        return {k: _dates_as_text(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_dates_as_text(v) for v in node]
    return node.isoformat() if isinstance(node, datetime.date) else node


def _allows(rule: Any, value: Any) -> bool:
    if rule == "any":
        return True
    if isinstance(rule, list):
        return any(_allows(r, value) for r in rule)
    return str(rule).lower() == str(value).lower()


def _speculative_allows(rule: Any, spec: Mapping[str, Any] | None) -> bool:
    if rule == "any":
        return True
    if rule is None:
        return spec is None
    if spec is None or not isinstance(rule, dict):
        return False
    return all(_allows(v, spec.get(k)) for k, v in rule.items())


def _gpu_allows(rule: Any, gpu: str) -> bool:
    # GPU names carry vendor and suffixes ("NVIDIA H200 (simulated)"): a rule matches a substring.
    if rule == "any":
        return True
    rules = rule if isinstance(rule, list) else [rule]
    return any(str(r).lower() in gpu.lower() for r in rules)


def find_reference(
    refs: Sequence[Reference],
    *,
    models: Sequence[str],
    eval_name: str,
    kv_dtype: str,
    speculative: Mapping[str, Any] | None,
    variant: str,
    gpu: str,
) -> Reference | None:
    """The first entry matching the cell (any of its model names) and eval, or None."""
    wanted = {m.lower() for m in models if m}
    for ref in refs:
        entry = ref.entry
        if not wanted & set(ref.models):
            continue
        if not (_allows(entry["eval"], eval_name) and _allows(entry["kv_dtype"], kv_dtype)):
            continue
        if not _speculative_allows(entry["speculative"], speculative):
            continue
        if _allows(entry.get("variant", "any"), variant) and _gpu_allows(
            entry.get("gpu", "any"), gpu
        ):
            return ref
    return None
