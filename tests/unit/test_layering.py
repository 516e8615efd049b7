"""Dependencies run one way, checked on the import statements of every module.

``pipeline`` may import ``backends`` and ``evals``; those two never import ``pipeline`` and never
each other. The simulated server stands in for a separate program: it imports nothing of the
client side, only itself, the standard library, a few third-party packages and the one reader of
config files that every file outside Hydra goes through (``backends.config_file``: no client logic).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.helpers.imports import imported_modules

REPO = Path(__file__).resolve().parents[2]
SIMSERVER = REPO / "pipeline" / "simserver"
SIMSERVER_THIRD_PARTY = {"aiohttp", "numpy"}
SIMSERVER_SHARED = {"backends.config_file"}
# Top-level packages of this project each package must not import.
FORBIDDEN = {"backends": {"pipeline", "evals"}, "evals": {"pipeline", "backends"}}


def modules_of(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


@pytest.mark.parametrize(
    "path",
    [p for package in FORBIDDEN for p in modules_of(package)],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_backends_and_evals_import_neither_pipeline_nor_each_other(path: Path) -> None:
    package = path.relative_to(REPO).parts[0]
    for name in imported_modules(path):
        assert name.split(".")[0] not in FORBIDDEN[package], f"{path} imports {name}"


@pytest.mark.parametrize("path", sorted(SIMSERVER.rglob("*.py")), ids=lambda p: p.name)
def test_imports_stay_inside_the_simulated_server(path: Path) -> None:
    for name in imported_modules(path):
        top = name.split(".")[0]
        if top == "pipeline":
            assert name.startswith("pipeline.simserver"), f"{path.name} imports {name}"
        elif top == "backends":
            assert name in SIMSERVER_SHARED, f"{path.name} imports {name}"
        elif top == "typing_extensions":  # the type checker's, never imported when it runs
            assert name not in _run_time_imports(path), f"{path.name} imports {name} at run time"
        else:
            assert top in SIMSERVER_THIRD_PARTY or top == "__future__" or _is_stdlib(top), (
                f"{path.name} imports {name}"
            )


def _run_time_imports(path: Path) -> set[str]:
    """The modules ``path`` imports outside ``if TYPE_CHECKING:`` blocks."""
    found: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text())]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            todo += node.orelse  # the body runs for the type checker only
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        todo += ast.iter_child_nodes(node)
    return found


def test_the_rules_see_the_modules() -> None:
    # A moved package would leave the parametrized tests above with nothing to check.
    assert len(modules_of("backends")) > 10 and len(modules_of("evals")) > 10
    assert len(list(SIMSERVER.glob("*.py"))) > 5


def _is_stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names


def test_the_shared_config_reader_imports_nothing_of_the_project() -> None:
    # The simulated server may import it only because it stands alone.
    names = imported_modules(REPO / "backends" / "config_file.py")
    assert not {n.split(".")[0] for n in names} & {"pipeline", "backends", "evals"}, names


# What each sub-package of ``pipeline`` may import of the others (itself always); the table has no
# cycle (``test_the_sub_package_table_has_no_cycle``). The result contract sits at the bottom: the
# cell writes it and the report reads it, so it imports neither; resume reads it too. The report
# reads only what cells wrote; serving, cluster (SLURM, nodes, GPU slots) and config know nothing
# of the cell job or the report (the error kinds, SequentialConf and a sweep's jobs live below
# them). Measuring runs
# sequential stopping, which judges each look with the report's own pairing and statistics.
PIPELINE_ALLOWED = {
    "results": set(),
    "stats": set(),
    "report": {"results", "stats"},
    "config": {"results"},
    "serving": {"config", "results"},
    "cluster": {"results", "serving"},
    "measuring": {"config", "report", "results", "serving", "stats"},
    "cell": {"cluster", "config", "measuring", "results", "serving"},
    "cli": {"cell", "cluster", "config", "report", "results", "serving"},
}


@pytest.mark.parametrize(
    "path",
    [p for sub in PIPELINE_ALLOWED for p in modules_of(f"pipeline/{sub}")],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_pipeline_sub_packages_import_only_what_lies_below(path: Path) -> None:
    sub = path.relative_to(REPO).parts[1]
    allowed = PIPELINE_ALLOWED[sub] | {sub}
    for name in imported_modules(path):
        parts = name.split(".")
        if parts[0] == "pipeline":
            assert len(parts) > 1 and parts[1] in allowed, f"{path} imports {name}"


def test_the_sub_package_table_has_no_cycle() -> None:
    # Each sub-package in turn must be importable once all it may import is: a cycle never is.
    placed: set[str] = set()
    while len(placed) < len(PIPELINE_ALLOWED):
        ready = {sub for sub, deps in PIPELINE_ALLOWED.items() if deps <= placed} - placed
        assert ready, f"a cycle among {sorted(set(PIPELINE_ALLOWED) - placed)}"
        placed |= ready


def test_every_pipeline_sub_package_has_a_rule() -> None:
    # A new sub-package must say what it may import (the simulated server has its own test).
    subs = {p.name for p in (REPO / "pipeline").iterdir() if (p / "__init__.py").exists()}
    assert subs - {"simserver"} == set(PIPELINE_ALLOWED)


def test_the_pipeline_root_holds_only_the_entry_point() -> None:
    # Every module lives in a sub-package whose name says which part it is (docs/architecture.md).
    assert sorted(p.name for p in (REPO / "pipeline").glob("*.py")) == [
        "__init__.py",
        "__main__.py",
    ]


# The report's rooms, by job, and what each may import of the others (itself always). Judging
# never imports speed: a speed ratio reads the accuracy checks' baseline and verdicts, never the
# other way. ``assemble`` makes the one ``Report`` the writers read; the report's root holds only
# the entry point (``cli.py``), which may import every room and which no room imports.
REPORT = REPO / "pipeline" / "report"
REPORT_ALLOWED = {
    "load": set(),
    "judge": {"load"},
    "speed": {"load", "judge"},
    "assemble": {"load", "judge", "speed"},
    "write": {"load", "judge", "speed", "assemble"},
}


def report_room_of(name: str) -> str | None:
    """The report room a ``pipeline.report.<room>...`` name lies in (None: not in a room)."""
    parts = name.split(".")
    if parts[:2] != ["pipeline", "report"] or len(parts) < 3:
        return None
    return parts[2]


@pytest.mark.parametrize(
    "path",
    [p for room in REPORT_ALLOWED for p in sorted((REPORT / room).rglob("*.py"))],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_report_rooms_import_only_what_lies_below(path: Path) -> None:
    room = path.relative_to(REPORT).parts[0]
    allowed = REPORT_ALLOWED[room] | {room}
    for name in imported_modules(path):
        inside = report_room_of(name)
        if name == "pipeline.report" or inside is not None:
            assert inside in allowed, f"{path} imports {name}"


def test_the_report_room_table_has_no_cycle() -> None:
    placed: set[str] = set()
    while len(placed) < len(REPORT_ALLOWED):
        ready = {room for room, deps in REPORT_ALLOWED.items() if deps <= placed} - placed
        assert ready, f"a cycle among {sorted(set(REPORT_ALLOWED) - placed)}"
        placed |= ready


def test_every_report_room_has_a_rule_and_the_root_holds_the_entry_point() -> None:
    rooms = {p.name for p in REPORT.iterdir() if (p / "__init__.py").exists()}
    assert rooms == set(REPORT_ALLOWED)
    assert sorted(p.name for p in REPORT.glob("*.py")) == ["__init__.py", "cli.py"]


def test_the_report_rule_sees_a_judge_module_importing_speed() -> None:
    # The room rule must fail on the import it exists for.
    allowed = REPORT_ALLOWED["judge"] | {"judge"}
    assert report_room_of("pipeline.report.speed.ratios") not in allowed
    assert report_room_of("pipeline.report.judge.pairing") in allowed
    assert report_room_of("pipeline.results.result_types") is None


RESULT_NAMES = {"result", "res", "other", "baseline_result"}  # what a loaded result is called


def string_keyed_results(path: Path) -> list[int]:
    """Lines where a variable named like a result is indexed with a string (``result["x"]``)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in RESULT_NAMES
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ]


def test_results_are_read_through_their_types_outside_the_results_package() -> None:
    """Only ``pipeline/results/`` turns result.json into types; the others read attributes."""
    outside = [p for p in modules_of("pipeline") if "results" not in p.relative_to(REPO).parts]
    found = {str(p.relative_to(REPO)): lines for p in outside if (lines := string_keyed_results(p))}
    assert found == {}, f"result['...'] outside pipeline/results/ (use CellResult): {found}"


def test_the_string_key_rule_sees_an_offender(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('def f(result):\n    return result["status"], result.status\n')
    assert string_keyed_results(module) == [2]
