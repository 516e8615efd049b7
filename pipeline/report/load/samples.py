"""``samples/<eval>.jsonl`` read back and validated (one line per request)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.config_file import ConfigFileError, check_record
from pipeline.results.cell_paths import samples_path


class SampleError(ConfigFileError):
    """A samples file is unusable; the message names file, line and field."""


@dataclass(frozen=True)
class SampleRow:
    """The fields of a sample line the report pairs and grades by (a line holds many more)."""

    question_id: Any  # a string, or a number in files written by hand
    repeat: int
    correct: bool


@dataclass(frozen=True)
class SampleQuestion:
    """The ``question`` object a repeat-0 line carries (lines written before it have none).

    Besides ``text``: ``options`` (a list of strings, in the dataset's order), ``gold`` (the
    right answer as text) and ``permuted`` (each repeat shows the options in its line's
    ``permutation``), each left out when empty.
    """

    text: str


def read_samples(folder: Path, eval_name: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Samples keyed by (question_id, repeat); a repeated key keeps its last line (a resume).

    Raises:
        SampleError: missing file, bad JSON, or a line whose ``SampleRow`` fields are missing or
            of the wrong type.
    """
    path = samples_path(folder, eval_name)
    if not path.is_file():
        raise SampleError(
            f"{path}: missing; the cell's result lists eval {eval_name!r} but its "
            "samples are gone, so it cannot be paired (re-run the cell)"
        )
    out: dict[tuple[str, int], dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            record = _parse(path, number, line)
            out[(str(record["question_id"]), int(record["repeat"]))] = record
    return out


def _parse(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise SampleError(f"{path}:{number}: not valid JSON ({err})") from err
    if not isinstance(record, dict):
        raise SampleError(f"{path}:{number}: expected a JSON object")
    check_record(SampleRow, record, f"{path}:{number}", SampleError)
    question = record.get("question")
    if question is not None:
        if not isinstance(question, dict):
            raise SampleError(f"{path}:{number}: question = {question!r} must be a JSON object")
        check_record(SampleQuestion, question, f"{path}:{number}: question", SampleError)
    return record
