from __future__ import annotations

import csv
from pathlib import Path

import pytest

from evals.datasets import DATA_DIR
from evals.gpqa import COLUMNS

SAMPLE = DATA_DIR / "mcq_sample.csv"


def rows() -> list[dict[str, str]]:
    with SAMPLE.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_sample_has_gpqa_columns_and_enough_rows() -> None:
    loaded = rows()
    assert len(loaded) >= 48
    assert set(COLUMNS) <= set(loaded[0])
    domains = {r["High-level domain"] for r in loaded}
    assert domains == {"Physics", "Chemistry", "Biology"}


@pytest.mark.parametrize("number", range(len(rows())))
def test_every_row_has_four_distinct_nonempty_options(number: int) -> None:
    row = rows()[number]
    options = [row[c].strip().lower() for c in COLUMNS[1:]]
    assert row["Question"].strip() and all(options)
    assert len(set(options)) == 4, row
    assert "\n" not in row["Question"] + "".join(options)  # one-line options for the answer key


def test_questions_are_unique() -> None:
    questions = [r["Question"].strip() for r in rows()]
    assert len(set(questions)) == len(questions)


def test_readme_says_it_is_not_gpqa() -> None:
    text = Path(DATA_DIR / "README.md").read_text()
    assert "NOT GPQA" in text and "written for" in text and "mcq_sample.csv" in text
