"""A stand-in for ``xgrammar`` (45 MB) so SGLang 0.5.19 imports on the offline GPU host.

SGLang imports xgrammar names at start-up (``StructuralTag`` in pydantic request models, format
classes in tool-call detectors) even with ``--grammar-backend none``, which is how the live runs
start it: no grammar is ever compiled, so every name only has to exist. ``StructuralTag`` and any
other name are empty pydantic models that accept any fields. ``get_model_structural_tag`` is None,
which SGLang reads as "this xgrammar has no model structural tags" (its own ImportError fallback).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__version__ = "0.0.0+mtp-eval-standin"
get_model_structural_tag = None


class _Empty(BaseModel):
    """Base of every stand-in name: accepts and keeps any fields."""

    model_config = ConfigDict(extra="allow")


class StructuralTag(_Empty):
    """Stand-in for ``xgrammar.StructuralTag`` (a pydantic field type in SGLang's protocol)."""


_made: dict[str, type[_Empty]] = {}


def empty_model(name: str) -> type[_Empty]:
    """The same empty pydantic model for a name every time it is imported."""
    if name not in _made:
        _made[name] = type(name, (_Empty,), {"__module__": __name__})
    return _made[name]


def __getattr__(name: str) -> Any:
    # Dunder lookups (__path__, __wrapped__, ...) must fail as for a real module, or importlib
    # and inspect would take the stand-in for something it is not.
    if name.startswith("__"):
        raise AttributeError(name)
    return empty_model(name)
