"""JSON values of ``result.json`` read leniently: a missing or null block reads as empty."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

EMPTY: Mapping[str, Any] = MappingProxyType({})


def as_map(value: Any) -> Mapping[str, Any]:
    """A JSON object, or empty for a missing/null block."""
    return value if isinstance(value, Mapping) else EMPTY


def as_text(value: Any, missing: str = "") -> str:
    """A JSON value as text, ``missing`` for null or absent."""
    return missing if value is None else str(value)


def as_optional_text(value: Any) -> str | None:
    """A JSON value as text, None for null or absent."""
    return None if value is None else str(value)


def as_seconds(value: Any) -> float | None:
    """A number of seconds as written, None for null, absent or not a number."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def as_list(value: Any) -> list[Any]:
    """A JSON array, or empty for a missing/null one."""
    return list(value) if isinstance(value, list | tuple) else []
