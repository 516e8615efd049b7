"""Row-level checks shared by the GSM8K, MMLU and MT-Bench loaders (pure).

``evals.datasets.load_rows`` checks that required columns exist and are not empty; the values an
eval then reads (a list of options, an answer index, a list of turns) are checked here, and a
value that cannot be used stops the eval with the file, the row, the column and the fix.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.datasets import DATA_DIR, DatasetError
from evals.eval_conf import DatasetConf

log = logging.getLogger(__name__)


def describe_source(conf: DatasetConf) -> str:
    """The file or dataset an eval's rows came from, as error messages name it."""
    if conf.source == "bundled":
        return str(DATA_DIR / conf.path)
    if conf.source == "file":
        return str(Path(conf.path).expanduser())
    if conf.source == "hf":
        return f"HF dataset {conf.path!r} (subset={conf.subset!r}, split={conf.split!r})"
    return conf.path


def row_error(conf: DatasetConf, number: int, column: str, problem: str, fix: str) -> DatasetError:
    """A DatasetError naming the source, the row (from 1), the column, the problem and the fix."""
    return DatasetError(
        f"{describe_source(conf)}: row {number}, column {column!r}: {problem}. {fix}"
    )


def text_list(value: object, conf: DatasetConf, number: int, column: str) -> list[str]:
    """A non-empty list of non-empty strings from a list cell or a JSON list in a CSV cell.

    Args:
        value: the cell (a list from JSONL / Parquet / the hub, a JSON string from CSV).
        conf: the dataset, for messages.
        number: the row number (from 1).
        column: the column name.

    Raises:
        DatasetError: the cell is not such a list.
    """
    items = value
    if isinstance(value, str):
        try:
            items = json.loads(value)
        except json.JSONDecodeError:
            items = None
    if hasattr(items, "tolist"):  # numpy arrays from pandas-backed loaders
        items = items.tolist()
    fix = 'Write it as a list of strings, e.g. ["first", "second"].'
    if not isinstance(items, list | tuple) or not items:
        raise row_error(conf, number, column, f"expected a non-empty list, got {value!r:.80}", fix)
    out = []
    for position, item in enumerate(items):
        if (
            not isinstance(item, str | int | float)
            or isinstance(item, bool)
            or not str(item).strip()
        ):
            raise row_error(conf, number, column, f"item {position} is {item!r:.60}", fix)
        out.append(str(item).strip())
    return out


def answer_index(value: object, count: int, conf: DatasetConf, number: int, column: str) -> int:
    """The 0-based index of the correct option from an index (0, "2") or a letter ("C", "(c)").

    Raises:
        DatasetError: not an index or letter, or outside the ``count`` options.
    """
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:count]
    index: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        index = value
    elif isinstance(value, str):
        text = value.strip().strip("()").strip()
        if text.isdigit():
            index = int(text)
        elif len(text) == 1 and text.upper() in letters:
            index = letters.index(text.upper())
    if index is None or not 0 <= index < count:
        raise row_error(
            conf,
            number,
            column,
            f"{value!r:.40} is not an option of this row ({count} options)",
            f"Use a 0-based index below {count} or a letter in {letters}.",
        )
    return index


def skip_duplicate(seen: set[str], key: str, name: str, number: int) -> bool:
    """Whether row ``number`` repeats an earlier row (same id); logs a warning when it does.

    Pairing across variants is by question id, so two rows with one id would collide: the first
    is kept and the rest reported.
    """
    if key in seen:
        log.warning("%s: row %d repeats an earlier row (same question id); skipped", name, number)
        return True
    seen.add(key)
    return False


def check_repeats(name: str, repeats: int) -> None:
    """Raise when an eval's ``repeats`` is below 1."""
    if repeats < 1:
        raise ValueError(f"evals.{name}.repeats={repeats}: use 1 or more.")


def first_present(row: dict[str, Any], columns: Sequence[str]) -> str | None:
    """The first of ``columns`` that the row has with a value (None when none has)."""
    return next((c for c in columns if row.get(c) not in (None, "")), None)
