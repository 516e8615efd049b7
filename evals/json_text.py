"""Strict JSON out: what every file and line the tool writes goes through.

Python's ``json`` writes a non-finite float as a bare ``NaN`` / ``Infinity``, which is not JSON:
``JSON.parse``, ``jq`` and most dashboards refuse the whole file. Here a non-finite float is
written as ``null`` and ``allow_nan=False`` makes a forgotten one an error, never a bad file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as None and unknown objects as strings (strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | bool):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return json_safe(value.item())
    return str(value)


def strict_dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as strict JSON text (``json_safe`` first, then no NaN allowed)."""
    return json.dumps(json_safe(value), indent=indent, allow_nan=False)
