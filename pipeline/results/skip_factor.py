"""A skip-softmax factor, read once: every spelling a config, a sweep or a ``result.json`` holds.

A factor is held as ``float | None`` (None: unset). Unset and 0 both leave the kernel exact, so
``is_exact`` is the one test of that and ``factor_text`` the one spelling a cell's name uses. The
spellings read: a JSON number (``0``, ``0.0``, ``10000.0``), null, and the strings a hand-written
JSON or a sweep's ``multirun.yaml`` leaves (``"None"``, ``"null"``, ``"0"``, ``"0.0"``; PyYAML
reads ``skip_softmax.prefill=1e4`` as the string ``"1e4"``): each becomes its float, or None.
"""

from __future__ import annotations

import math

EXACT_FACTOR = "None"  # how a name spells a factor that leaves the kernel exact (None or 0)
_UNSET = ("none", "null", "~", "")  # strings that mean an unset factor (YAML's and Python's)


def parse_factor(raw: object, key: str) -> float | None:
    """``raw`` as a skip-softmax factor: a float >= 0, or None when unset.

    Args:
        raw: the value as the file holds it (number, null or a string of either).
        key: where it was read (``cell.skip_softmax.prefill``), for the error message.

    Raises:
        ValueError: naming ``key``, when ``raw`` is not a finite number >= 0 or unset.
    """
    if raw is None:
        return None
    number: float | None = None
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        number = float(raw)
    elif isinstance(raw, str):
        if raw.strip().lower() in _UNSET:
            return None
        number = _float_or_none(raw)
    if number is None or not math.isfinite(number) or number < 0:
        raise ValueError(
            f"{key}: {raw!r} is not a skip-softmax factor: write a number >= 0 (0 or null for "
            "exact softmax)"
        )
    return number


def _float_or_none(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def is_exact(factor: float | None) -> bool:
    """Whether the factor leaves the kernel exact (unset or 0: the same kernel runs)."""
    return factor is None or factor == 0.0


def factor_text(factor: float | None) -> str:
    """A factor as a cell's name spells it: ``None`` for exact softmax, else the float.

    ``skip_softmax.prefill=null``, ``=0`` and ``=0.0`` run the same kernel, so they are one
    name (``sp=None``; ``sp=0.0`` before): the name the report pairs and shows. Only the name
    changes: ``result.json`` keeps the factor as it was set.
    """
    return EXACT_FACTOR if is_exact(factor) else str(factor)
