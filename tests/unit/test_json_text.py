"""Strict JSON out: a non-finite float is null, never a bare NaN."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evals.json_text import strict_dumps
from pipeline.results.store import write_json_atomic


def _refuse(constant: str) -> None:
    raise ValueError(constant)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (math.nan, "null"),
        ({"p": math.inf, "q": [-math.inf, 1.5]}, '{"p": null, "q": [null, 1.5]}'),
        ({"n": np.float64("nan"), "k": np.int64(3)}, '{"n": null, "k": 3}'),
        ((1, "a", None, True), '[1, "a", null, true]'),
        ({"path": Path("/x")}, '{"path": "/x"}'),  # unknown objects as text, as default=str did
    ],
)
def test_strict_dumps(value: object, text: str) -> None:
    assert strict_dumps(value) == text
    json.loads(text, parse_constant=_refuse)


def test_result_files_are_written_strict(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    write_json_atomic(path, {"evals": {"e": {"stderr": math.nan, "accuracy": 0.5}}})
    data = json.loads(path.read_text(), parse_constant=_refuse)
    assert data == {"evals": {"e": {"stderr": None, "accuracy": 0.5}}}
