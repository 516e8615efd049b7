"""Config files read into dataclasses through OmegaConf: one way to fail for every file.

Hydra checks ``conf/`` this way when it composes a cell. The files read outside Hydra (the
matrix's variant and model files, the sign-off policy, the simulated server's ``--sim-config``) go
through ``load_structured``, so that an unknown key, a wrong type, a value out of range or not
among the choices fails alike: one line naming the file, the key and the fix. Ranges and choices
are declared on the dataclass fields with ``checked``. Data files read row by row (a cell's
``samples/<eval>.jsonl``) declare their rows as dataclasses too, checked by ``check_record`` in
the same words without OmegaConf (about 1 ms a row there).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import (
    ConfigKeyError,
    MissingMandatoryValue,
    OmegaConfBaseException,
    ValidationError,
)

T = TypeVar("T")
_TYPE_WORDS = {float: "a number", int: "an integer", bool: "true or false", str: "a string"}


class ConfigFileError(ValueError):
    """A config file that does not fit its dataclass; the message names file, key and fix."""


@dataclass(frozen=True)
class Check:
    """The range and / or the choices a field's value must keep (``None``: no limit)."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False  # the low end itself is not allowed
    open_high: bool = False
    choices: tuple[str, ...] = ()
    hint: str = ""  # what the value means, appended to the message, e.g. "(0.02 = 2 points)"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` breaks this check, or None."""
        if self.choices:
            values = value if isinstance(value, list | tuple) else [value]
            bad = [v for v in values if v not in self.choices]
            return f"use one of {', '.join(self.choices)}" if bad else None
        if value is None or self.within(float(value)):
            return None
        return f"must be {self.interval()}" + (f" {self.hint}" if self.hint else "")

    def within(self, value: float) -> bool:
        """Whether ``value`` lies in the range."""
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        above = value > low if self.open_low else value >= low
        below = value < high if self.open_high else value <= high
        return above and below

    def interval(self) -> str:
        """The range as ``in [0, 1)``, ``in (0.0, 0.5)`` or ``>= 1``."""
        if self.high is None:
            return f"{'>' if self.open_low else '>='} {self.low}"
        left, right = "(" if self.open_low else "[", ")" if self.open_high else "]"
        return f"in {left}{self.low}, {self.high}{right}"


def checked(default: Any, check: Check) -> Any:
    """A dataclass field with ``default`` whose value ``load_structured`` holds to ``check``."""
    if isinstance(default, list | dict):  # a mutable default: each instance gets its own copy
        return field(default_factory=lambda: copy.copy(default), metadata={"check": check})
    return field(default=default, metadata={"check": check})


def read_mapping(path: Path, error: type[ConfigFileError] = ConfigFileError) -> dict[str, Any]:
    """The top-level mapping of a YAML (or JSON) file; an empty file is an empty mapping.

    Raises:
        ConfigFileError: (or ``error``) if the file cannot be read or holds no mapping.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"{path}: cannot read YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise error(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def load_structured(
    cls: type[T],
    raw: object,
    source: str,
    *,
    at: str = "",
    base: T | None = None,
    error: type[ConfigFileError] = ConfigFileError,
) -> T:
    """Build dataclass ``cls`` from a parsed mapping, as Hydra builds a structured config.

    Args:
        cls: The dataclass (nested dataclasses, lists and dicts of them are followed).
        raw: The parsed YAML / JSON node.
        source: The file, for messages.
        at: The key path of ``raw`` inside the file (``evals.gpqa``), for messages.
        base: Defaults to fill in instead of the dataclass's own.
        error: The exception type to raise (a subclass of ``ConfigFileError``).

    Raises:
        ConfigFileError: (or ``error``) naming the file, the key and the fix.
    """
    where = f"{source}: {at}" if at else source
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise error(f"{where}: expected a mapping of {cls.__name__} keys, got {raw!r}")
    _check_list_items(cls, raw, source, at, error)
    schema = OmegaConf.structured(base if base is not None else cls)
    _writable(schema)
    try:
        built = typing.cast(T, OmegaConf.to_object(OmegaConf.merge(schema, raw)))
    except OmegaConfBaseException as exc:
        raise error(f"{source}: {_explain(exc, raw, at)}") from None
    _check_fields(built, source, at, error)
    return built


def _check_list_items(
    cls: type, raw: dict[str, Any], source: str, at: str, error: type[ConfigFileError]
) -> None:
    """Load each item of a list of dataclasses on its own: OmegaConf's errors lose its index."""
    for name, hint in typing.get_type_hints(cls).items():
        value, key = raw.get(name), f"{at}.{name}" if at else name
        if dataclasses.is_dataclass(hint) and isinstance(value, dict):
            _check_list_items(hint, value, source, key, error)  # type: ignore[arg-type]
        item = typing.get_args(hint)[0] if typing.get_origin(hint) is list else None
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            for i, row in enumerate(value if isinstance(value, list) else []):
                load_structured(item, row, source, at=f"{key}[{i}]", error=error)


def _writable(node: DictConfig | ListConfig) -> None:
    """Clear the read-only flag frozen dataclasses put on their nodes, so a file can merge in."""
    OmegaConf.set_readonly(node, False)
    keys: list[Any] = list(node.keys()) if isinstance(node, DictConfig) else [*range(len(node))]
    for key in keys:
        child = None if OmegaConf.is_missing(node, key) else node[key]
        if isinstance(child, DictConfig | ListConfig):
            _writable(child)


def _explain(exc: OmegaConfBaseException, raw: dict[str, Any], at: str) -> str:
    key = ".".join(p for p in (at, str(exc.full_key)) if p)
    leaf = str(exc.full_key).split(".")[-1].split("[")[0]
    owner = getattr(exc, "object_type", None)
    names = _field_names(owner)
    if isinstance(exc, ConfigKeyError) and names:
        return f"unknown key {key}; allowed: {', '.join(names)}"
    if isinstance(exc, MissingMandatoryValue):
        return f"{key} is missing"
    if "is not Optional" in str(exc) or "Incompatible value 'None'" in str(exc):
        return f"{key} is empty (null); give it a value or leave the key out for its default"
    kind = _type_word(owner, leaf) if isinstance(exc, ValidationError) and leaf in names else None
    if kind is None:
        return f"{key}: {str(exc).splitlines()[0]}"
    return f"{key} = {_value_at(raw, str(exc.full_key))!r} must be {kind}"


def _field_names(owner: object) -> list[str]:
    if isinstance(owner, type) and dataclasses.is_dataclass(owner):
        return [f.name for f in dataclasses.fields(owner)]
    return []


def _type_word(owner: Any, name: str) -> str | None:
    hint = typing.get_type_hints(owner)[name]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):  # X | None: X's word
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = args[0] if len(args) == 1 else hint
    if dataclasses.is_dataclass(hint) or typing.get_origin(hint) is dict:
        return "a mapping"
    if typing.get_origin(hint) in (list, tuple):
        return "a list"
    return _TYPE_WORDS.get(hint)


def _value_at(raw: Any, key: str) -> Any:
    for part in key.replace("[", ".").replace("]", "").split("."):
        if isinstance(raw, dict):
            raw = raw.get(part)
        elif isinstance(raw, list) and part.isdigit() and int(part) < len(raw):
            raw = raw[int(part)]
    return raw


def _check_fields(obj: Any, source: str, at: str, error: type[ConfigFileError]) -> None:
    """Hold every ``checked`` field of ``obj`` (and of nested dataclasses) to its check."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        key = f"{at}.{f.name}" if at else f.name
        check = f.metadata.get("check")
        problem = check.problem(value) if check else None
        if check and problem:
            if check.choices:
                raise error(f"{source}: {key} = {value!r}; {problem}")
            raise error(f"{source}: {key} = {value} {problem}")
        for sub, item in _children(key, value):
            _check_fields(item, source, sub, error)


def _children(key: str, value: Any) -> list[tuple[str, Any]]:
    """The dataclasses inside a field's value, with their key paths."""
    if dataclasses.is_dataclass(value):
        return [(key, value)]
    if isinstance(value, dict):
        items = [(f"{key}.{k}", v) for k, v in value.items()]
    elif isinstance(value, list | tuple):
        items = [(f"{key}[{i}]", v) for i, v in enumerate(value)]
    else:
        return []
    return [(k, v) for k, v in items if dataclasses.is_dataclass(v)]


def check_record(
    cls: type, record: Mapping[str, Any], where: str, error: type[ConfigFileError] = ConfigFileError
) -> None:
    """Hold the fields dataclass ``cls`` declares to their types in one record of a data file.

    For files read row by row: building ``cls`` through OmegaConf, as ``load_structured`` does,
    costs about 1 ms a row, so only presence and the scalar types (int, float, bool, str) are
    checked here, in ``load_structured``'s words; keys ``cls`` does not declare are left alone.

    Raises:
        ConfigFileError: (or ``error``) naming ``where`` and the field.
    """
    for name, hint in _declared(cls):
        if name not in record:
            raise error(f"{where}: {name} is missing")
        word, value = _TYPE_WORDS.get(hint), record[name]
        if word and not _is_a(value, hint):
            raise error(f"{where}: {name} = {value!r} must be {word}")


@functools.cache
def _declared(cls: type) -> tuple[tuple[str, Any], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def _is_a(value: Any, hint: type) -> bool:
    if hint in (int, float) and isinstance(value, bool):  # JSON true is no number
        return False
    return isinstance(value, int | float) if hint is float else isinstance(value, hint)
