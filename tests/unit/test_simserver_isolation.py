"""The simulated server stands in for a separate program: it imports nothing of the client side."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pipeline" / "simserver"
ALLOWED_THIRD_PARTY = {"aiohttp", "numpy"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_imports_stay_inside_the_simulated_server(path: Path) -> None:
    for name in imported_modules(path):
        top = name.split(".")[0]
        if top == "pipeline":
            assert name.startswith("pipeline.simserver"), f"{path.name} imports {name}"
        else:
            assert top in ALLOWED_THIRD_PARTY or top == "__future__" or _is_stdlib(top), (
                f"{path.name} imports {name}"
            )


def _is_stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names
