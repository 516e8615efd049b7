"""Production packages hold production code: every module is reached from what a user runs.

The roots are the console scripts of ``pyproject.toml``, ``python -m pipeline``, the simulated
server's entry point (``python -m pipeline.simserver``) and the SLURM launcher plugin that Hydra
looks up. From them the test follows every import statement (function bodies included), the
modules Hydra instantiates from ``conf/`` (``_target_``), the eval classes ``evals.base`` imports
by name, and the modules production code starts with ``python -m`` or by path. A module nothing
reaches runs only from tests or benchmarks and belongs beside them.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import tomllib

from tests.helpers.imports import imported_modules

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("pipeline", "backends", "evals")
ENTRY_POINTS = (
    "pipeline.__main__",
    "pipeline.simserver.__main__",
    "hydra_plugins.mtp_eval_launcher",
)
# Files lm-eval loads from a task folder by path (``evals/lm_eval_tasks/<task>/utils.py``).
LOADED_BY_PATH = re.compile(r"^evals\.lm_eval_tasks\.")


def module_path(name: str) -> Path | None:
    """The file of module ``name`` in this repository (a package's ``__init__.py``), or None."""
    base = REPO.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def with_parents(name: str) -> set[str]:
    """``a.b.c`` and the packages Python imports first: ``a``, ``a.b``."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def imports_of(path: Path) -> set[str]:
    """Modules of this repository that ``path`` imports or starts with ``python -m``."""
    names = imported_modules(path, members=True)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.List | ast.Tuple):
            names.update(_started_with_dash_m(node.elts))
        elif sibling := _sibling_script(node):
            names.add(f"{module_name(path).rpartition('.')[0]}.{sibling}")
    return {parent for name in names for parent in with_parents(name) if module_path(parent)}


def _started_with_dash_m(elements: list[ast.expr]) -> set[str]:
    strings = [e.value if isinstance(e, ast.Constant) else None for e in elements]
    return {str(m) for flag, m in itertools.pairwise(strings) if flag == "-m" and m}


def _sibling_script(node: ast.AST) -> str | None:
    # ``Path(__file__).with_name("child.py")``: a script beside this module, started by path.
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    args = [a.value for a in node.args if isinstance(a, ast.Constant)]
    if node.func.attr != "with_name" or not args or not str(args[0]).endswith(".py"):
        return None
    return str(args[0]).removesuffix(".py")


def hydra_targets() -> set[str]:
    """The modules of the ``_target_`` classes and callbacks under ``conf/``."""
    found = set()
    for path in (REPO / "conf").rglob("*.yaml"):
        found.update(re.findall(r"_target_:\s*([\w.]+)\.\w+", path.read_text()))
    return found


def registered_evals() -> set[str]:
    """The eval modules ``evals.base`` imports by name (``"module:Class"`` strings)."""
    source = (REPO / "evals" / "base.py").read_text()
    return set(re.findall(r'"((?:evals|pipeline)\.[\w.]+):\w+"', source))


def roots() -> set[str]:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    entry = {target.split(":")[0] for target in scripts.values()}
    return entry | set(ENTRY_POINTS) | hydra_targets() | registered_evals()


def reached() -> set[str]:
    seen: set[str] = set()
    todo = [parent for root in roots() for parent in with_parents(root)]
    while todo:
        name = todo.pop()
        path = module_path(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        todo.extend(imports_of(path) - seen)
    return seen


def production_modules() -> set[str]:
    return {module_name(p) for package in PACKAGES for p in (REPO / package).rglob("*.py")}


def test_every_production_module_is_reached_from_what_a_user_runs() -> None:
    unreached = production_modules() - reached()
    unreached = {name for name in unreached if not LOADED_BY_PATH.match(name)}
    assert unreached == set(), f"run only from tests or benchmarks: {sorted(unreached)}"


def test_the_roots_name_real_modules() -> None:
    # A renamed entry point would leave the walk above with nothing to start from.
    missing = {name for name in roots() if module_path(name) is None}
    assert missing == set() and len(roots()) > 8, missing
    assert {"evals.gpqa", "pipeline.cluster.slurm_launcher", "backends.probe.jit"} <= reached()


def test_the_walk_sees_an_unreached_module(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import pipeline.cli.app\nARGV = ['python', '-m', 'backends.probe.jit']\n")
    assert {"pipeline", "pipeline.cli", "pipeline.cli.app", "backends.probe.jit"} <= imports_of(
        module
    )
