"""Reference values with provenance (``conf/tolerance/references/*.yaml``), validated and matched.

Matching (first entry wins, as in TensorRT-LLM): ``eval`` and ``kv_dtype`` are a name, a list of
names or ``any``; ``speculative`` is ``null`` (non-speculative cells only), ``any``, or a mapping
whose keys must equal the cell's speculative settings (a list value allows several);
``variant`` and ``gpu`` are optional and default to any.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ENTRY_KEYS = {
    "eval",
    "kv_dtype",
    "speculative",
    "variant",
    "gpu",
    "accuracy",
    "accuracy_stderr",
    "accept_length",
    "accept_length_stderr",
    "provenance",
    "note",
}
PROVENANCE_KEYS = ("source", "date", "setup")


class ReferenceFileError(ValueError):
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
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ReferenceFileError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(raw, dict) or not isinstance(raw.get("model"), str):
        raise ReferenceFileError(f"{path}: needs a top-level 'model: <name>' and 'entries: [...]'")
    unknown = sorted(
        k for k in raw if not str(k).startswith("_") and k not in ("model", "aliases", "entries")
    )
    if unknown:
        raise ReferenceFileError(
            f"{path}: unknown key {unknown[0]}; allowed: model, aliases, "
            "entries (keys starting with _ are YAML anchors)"
        )
    entries = raw.get("entries")
    if not isinstance(entries, list) or not entries:
        raise ReferenceFileError(f"{path}: entries must be a non-empty list")
    models = (raw["model"], *map(str, raw.get("aliases") or []))
    return [
        Reference(path, i, tuple(m.lower() for m in models), _entry(path, i, e))
        for i, e in enumerate(entries)
    ]


def _entry(path: Path, index: int, entry: Any) -> Mapping[str, Any]:
    where = f"{path}: entries[{index}]"
    if not isinstance(entry, dict):
        raise ReferenceFileError(f"{where} must be a mapping")
    unknown = sorted(set(map(str, entry)) - ENTRY_KEYS)
    if unknown:
        raise ReferenceFileError(
            f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(sorted(ENTRY_KEYS))}"
        )
    for key in ("eval", "kv_dtype", "speculative"):
        if key not in entry:
            raise ReferenceFileError(
                f"{where}.{key} is missing (a name, a list, or 'any'; "
                "speculative: null means non-speculative cells)"
            )
    if entry.get("accuracy") is None and entry.get("accept_length") is None:
        raise ReferenceFileError(f"{where}: needs accuracy and / or accept_length")
    _check_values(where, entry)
    _check_provenance(where, entry.get("provenance"))
    return entry


def _check_values(where: str, entry: Mapping[str, Any]) -> None:
    rules = {
        "accuracy": (0.0, 1.0, "a fraction in [0, 1] (72.5% is 0.725)"),
        "accuracy_stderr": (0.0, 1.0, "a fraction in [0, 1]"),
        "accept_length": (1.0, float("inf"), ">= 1 (tokens per verify step, bonus included)"),
        "accept_length_stderr": (0.0, float("inf"), ">= 0"),
    }
    for key, (low, high, fix) in rules.items():
        value = entry.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ReferenceFileError(f"{where}.{key} = {value!r} must be a number: {fix}")
        if not low <= value <= high:
            raise ReferenceFileError(f"{where}.{key} = {value} is impossible: must be {fix}")


def _check_provenance(where: str, prov: Any) -> None:
    if not isinstance(prov, dict):
        raise ReferenceFileError(
            f"{where}.provenance is missing: every reference needs source "
            "(URL / PR / file), date (YYYY-MM-DD) and setup"
        )
    for key in PROVENANCE_KEYS:
        if not str(prov.get(key) or "").strip():
            raise ReferenceFileError(f"{where}.provenance.{key} is missing or empty")
    try:
        datetime.date.fromisoformat(str(prov["date"]))
    except ValueError as err:
        raise ReferenceFileError(
            f"{where}.provenance.date = {prov['date']!r} must be YYYY-MM-DD (quote it in YAML)"
        ) from err


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
