"""``result.json``'s layout stated once: it covers every committed result, checks and types."""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import NodeJson, ResultJson, shape_problems

REPO = Path(__file__).parents[2]
COMMITTED = sorted(
    p for d in ("benchmarks/results", "tests/data") for p in (REPO / d).rglob("result.json")
)
SCHEMA_KEYS = list(typing.get_type_hints(ResultJson))


def _typed_dict(hint: Any) -> Any:
    """The TypedDict a hint names (``X``, ``X | None``), else None."""
    options = [hint, *(typing.get_args(hint) if typing.get_origin(hint) is not dict else ())]
    return next((h for h in options if isinstance(h, type) and typing.is_typeddict(h)), None)


def _undeclared(schema: Any, data: dict[str, Any], at: str) -> list[str]:
    """Keys of ``data`` that ``schema`` (a TypedDict) does not declare, nested blocks included."""
    hints = typing.get_type_hints(schema)
    found = [f"{at}{k}" for k in data if k not in hints]
    for key, value in data.items():
        if not isinstance(value, dict) or key not in hints:
            continue
        if inner := _typed_dict(hints[key]):
            found += _undeclared(inner, value, f"{at}{key}.")
        elif typing.get_origin(hints[key]) is dict and (
            each := _typed_dict(typing.get_args(hints[key])[1])
        ):  # evals: one block per eval
            found += [
                k for name, v in value.items() for k in _undeclared(each, v, f"{at}{key}.{name}.")
            ]
    return found


def test_the_committed_results_are_there():
    assert len(COMMITTED) >= 20  # a moved folder would leave the tests below with nothing


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_key_a_committed_result_holds_is_declared_in_its_order(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    if path.parent.name.startswith("node-"):  # a non-zero node's own result
        assert _undeclared(NodeJson, data, "") == []
        return
    assert _undeclared(ResultJson, data, "") == []
    written = [k for k in data if k in SCHEMA_KEYS]
    assert written == sorted(written, key=SCHEMA_KEYS.index)  # the schema lists the file order
    assert shape_problems(data) == {}


def test_the_draft_starts_with_the_schema_order():
    draft = ResultDraft.start(
        {"name": "m/v"}, "h", {}, simulated=True, slurm=None, started_at="t"
    ).to_json()
    assert list(draft) == [k for k in SCHEMA_KEYS if k in draft]


OK = {"status": "ok", "cell": {}, "evals": {}}


@pytest.mark.parametrize(
    ("changed", "problems"),
    [
        ({}, {}),
        ({"status": "failed", "cell": None}, {}),  # only an ok cell is judged
        ({"cell": None}, {"cell": "must be an object"}),
        ({"evals": []}, {"evals": "must be an object"}),
        ({"timing": None, "error": None, "server": None}, {}),
        ({"timing": "soon"}, {"timing": "must be an object or null"}),
        ({"accept": [1]}, {"accept": "must be an object or null"}),
        ({"config": [1]}, {"config": "must be an object or null"}),
        ({"cell": {"gpu": "H200", "skip_softmax": None}},
         {"cell": "cell.gpu must be an object or null"}),
        ({"evals": {"a": {}, "b": 1}}, {"evals": "evals.b must be an object"}),
        ({"provenance": {"slurm": 3}},
         {"provenance": "provenance.slurm must be an object or null"}),
        ({"warnings": "w"}, {}),  # arrays are read leniently, as before
    ],
)  # fmt: skip
def test_shape_problems(changed, problems):
    assert shape_problems(OK | changed) == problems


def test_mypy_sees_a_renamed_key_on_the_writers_side(tmp_path):
    # The draft holds a ResultJson: a key the schema does not declare is a type error.
    snippet = tmp_path / "writer.py"
    snippet.write_text(
        "from pipeline.results.result_schema import ResultJson, TimingJson\n"
        "def write(data: ResultJson, timing: TimingJson) -> None:\n"
        "    data['warnings'] = []\n"
        "    data['warning'] = []\n"
        "    timing['ended'] = 'now'\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
         str(snippet)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    assert '"ResultJson" has no key "warning"' in run.stdout, run.stdout
    assert '"TimingJson" has no key "ended"' in run.stdout, run.stdout
    assert "writer.py:3" not in run.stdout
