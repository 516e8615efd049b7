"""Stand-in for ``xgrammar.structural_tag``: every format class is an empty pydantic model."""

from __future__ import annotations

from typing import Any

from xgrammar import StructuralTag, empty_model

__all__ = ["StructuralTag"]


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return empty_model(name)
