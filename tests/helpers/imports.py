"""What a module imports, read from its source: the import rules' and the reachability test's."""

from __future__ import annotations

import ast
from pathlib import Path


def imported_modules(path: Path, members: bool = False) -> set[str]:
    """Absolute module names imported anywhere in ``path`` (function bodies included).

    ``members``: also ``X.Y`` for each ``from X import Y``, where ``Y`` may be a module.
    """
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            if members:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names
