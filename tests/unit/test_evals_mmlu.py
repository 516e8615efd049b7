from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evals.base import EvalPrompt, make_eval
from evals.datasets import DATA_DIR, DatasetError
from evals.eval_conf import DatasetConf, EvalConf
from evals.gpqa import format_prompt as gpqa_prompt
from evals.mmlu import LETTERS, MmluEval, format_prompt, question_block
from pipeline.simserver.model import AnswerIndex, hash_units, plan_completion
from pipeline.simserver.simconfig import AnswerEntry


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def from_file(path: Path, repeats: int = 1) -> MmluEval:
    conf = EvalConf(
        kind="mmlu", dataset=DatasetConf(source="file", path=str(path)), repeats=repeats
    )
    return make_eval("m", conf)


def bundled(name: str) -> MmluEval:
    conf = EvalConf(kind="mmlu", dataset=DatasetConf(source="bundled", path=name), repeats=1)
    ev = make_eval(name, conf)
    assert isinstance(ev, MmluEval)
    return ev


TEN = [f"option {i}" for i in range(10)]


@pytest.mark.parametrize(
    ("row", "options", "letter"),
    [
        # MMLU (cais/mmlu): choices + 0-based index
        (
            {"question": "Q", "subject": "s", "choices": ["a", "b", "c", "d"], "answer": 2},
            ["a", "b", "c", "d"],
            "C",
        ),
        (
            {"question": "Q", "choices": ["a", "b", "c", "d"], "answer": "3"},
            ["a", "b", "c", "d"],
            "D",
        ),
        # MMLU-Pro: options + letter + answer_index (the index is the one read)
        (
            {"question": "Q", "options": TEN, "answer": "J", "answer_index": 9, "category": "x"},
            TEN,
            "J",
        ),
        ({"question": "Q", "options": TEN, "answer": "(h)"}, TEN, "H"),
        # CSV-style: a JSON list in a cell, or one column per letter
        ({"question": "Q", "choices": '["a", "b", "c"]', "answer": "B"}, ["a", "b", "c"], "B"),
        (
            {"question": "Q", "A": "x", "B": "y", "C": "z", "D": "w", "answer": "D"},
            ["x", "y", "z", "w"],
            "D",
        ),
        ({"question": "Q", "A": "x", "B": "y", "C": "", "D": "w", "answer": "B"}, ["x", "y"], "B"),
    ],
)
def test_layouts(tmp_path: Path, row: dict[str, Any], options: list[str], letter: str) -> None:
    ev = from_file(write_jsonl(tmp_path / "rows.jsonl", [row]))
    (prompt,) = ev.prompts()
    assert ev.questions[0]["options"] == options
    assert prompt.answer == letter
    assert prompt.meta["n_options"] == len(options)


def test_four_option_prompt_is_simple_evals_template() -> None:
    # With four options the prompt is exactly GPQA's (openai/simple-evals) template.
    options = ["w", "x", "y", "z"]
    assert format_prompt("Q?", options) == gpqa_prompt("Q?", options)


def test_ten_option_prompt_lists_a_to_j() -> None:
    text = format_prompt("Q?", TEN)
    assert "where LETTER is one of ABCDEFGHIJ." in text
    assert text.endswith(
        "\n\nQ?\n\nA) option 0\nB) option 1\n"
        + "".join(f"{c}) option {i}\n" for i, c in enumerate(LETTERS) if i >= 2).rstrip("\n")
    )


@pytest.mark.parametrize(
    ("n_options", "content", "extracted", "correct"),
    [
        (10, "Answer: J", "J", True),
        (10, "The answer is (J).", "J", True),
        (10, "**Answer:** \\boxed{J}", "J", True),
        (4, "Answer: J", None, False),  # J is not an option of a 4-option row
        (10, "Answer: B\nOn reflection, Answer: J", "J", True),  # the last one counts
        (10, "Answer: I", "I", False),
        (10, None, None, False),
    ],
)
def test_grade(n_options: int, content: str | None, extracted: str | None, correct: bool) -> None:
    ev = bundled("mmlu_pro_sample.jsonl")
    prompt = EvalPrompt("q", 0, [], "J", {"n_options": n_options, "subject": ""})
    assert ev.grade(prompt, content) == (extracted, correct)


@pytest.mark.parametrize(
    ("row", "fragments"),
    [
        ({"question": "Q", "choices": ["a", "b"], "answer": 2}, ["row 1", "'answer'", "2 options"]),
        ({"question": "Q", "options": TEN, "answer": "K"}, ["row 1", "'answer'", "ABCDEFGHIJ"]),
        ({"question": "Q", "choices": "a, b, c", "answer": 0}, ["row 1", "'choices'", "list"]),
        ({"question": "Q", "choices": ["a"], "answer": 0}, ["row 1", "'choices'", "1 options"]),
        ({"question": "Q", "choices": ["a", ""], "answer": 0}, ["row 1", "'choices'", "item 1"]),
        ({"question": "Q", "answer": 0}, ["row 1", "no options"]),
        ({"question": "Q", "choices": ["a", "b"]}, ["row 1", "'answer'", "missing"]),
        ({"question": "Q", "options": [*TEN, "k"], "answer": 0}, ["row 1", "11 options"]),
    ],
)
def test_unparseable_row_names_file_row_and_column(
    tmp_path: Path, row: dict[str, Any], fragments: list[str]
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [row])
    with pytest.raises(DatasetError) as err:
        from_file(path)
    message = str(err.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_csv_file_with_letter_columns(tmp_path: Path) -> None:
    path = tmp_path / "mmlu.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "A", "B", "C", "D", "answer"])
        writer.writerow(["2 + 2?", "3", "4", "5", "6", "B"])
    (prompt,) = from_file(path).prompts()
    assert prompt.answer == "B" and "B) 4" in prompt.messages[0]["content"]


def test_rows_sharing_a_question_text_stay_apart(tmp_path: Path) -> None:
    rows = [
        {"question": "Which is true?", "choices": ["a", "b", "c", "d"], "answer": 0},
        {"question": "Which is true?", "choices": ["e", "f", "g", "h"], "answer": 1},
        {"question": "Which is true?", "choices": ["a", "b", "c", "d"], "answer": 0},  # duplicate
    ]
    ev = from_file(write_jsonl(tmp_path / "rows.jsonl", rows))
    assert len(ev.questions) == 2
    ids = {p.question_id for p in ev.prompts()}
    assert len(ids) == 2
    key = ev.answer_key()
    assert [k["answer"] for k in key] == ["a", "f"]
    assert key[0]["question"] != key[1]["question"]  # the options tell them apart


def test_answer_key_gives_the_letter_when_the_correct_text_repeats(tmp_path: Path) -> None:
    row = {"question": "Q", "options": ["same", "other", "same", "x"], "answer_index": 2}
    (entry,) = from_file(write_jsonl(tmp_path / "r.jsonl", [row])).answer_key()
    assert entry == {"question": question_block("Q", row["options"]), "answer": "C", "kind": "mcq"}


@pytest.mark.parametrize("name", ["mmlu_sample.jsonl", "mmlu_pro_sample.jsonl"])
@pytest.mark.parametrize("accuracy", [0.0, 1.0])
def test_simulated_answers_grade_as_the_server_meant(name: str, accuracy: float) -> None:
    ev = bundled(name)
    index = AnswerIndex([AnswerEntry(**e) for e in ev.answer_key()])
    for prompt in ev.prompts():
        text = prompt.messages[0]["content"]
        done = plan_completion(index, text, hash_units("0", text), accuracy, 40, None)
        assert done.kind == "mcq" and done.answer is not None
        assert ev.grade(prompt, "".join(done.tokens)) == (done.answer, accuracy == 1.0)


def test_bundled_samples_structure() -> None:
    mmlu = [json.loads(x) for x in (DATA_DIR / "mmlu_sample.jsonl").read_text().splitlines()]
    pro = [json.loads(x) for x in (DATA_DIR / "mmlu_pro_sample.jsonl").read_text().splitlines()]
    assert len(mmlu) + len(pro) >= 30
    for row in mmlu:
        assert len(row["choices"]) == 4 and len(set(row["choices"])) == 4
        assert 0 <= row["answer"] < 4 and row["subject"]
    assert sum(len(r["options"]) == 10 for r in pro) >= 10
    for row in pro:
        assert len(set(row["options"])) == len(row["options"]) >= 4
        assert row["answer"] == LETTERS[row["answer_index"]]
    assert {r["answer"] for r in pro} >= {"H", "I", "J"}  # late letters are exercised
    questions = [r["question"] for r in mmlu + pro]
    assert len(set(questions)) == len(questions)
    assert "not MMLU" in (DATA_DIR / "README.md").read_text()


@pytest.mark.parametrize(
    "row",
    [
        {"question": "Q", "subject": "s", "choices": ["a", "b", "c", "d"], "answer": 1},
        {"question": "Q", "options": TEN, "answer": "B", "answer_index": 1, "category": "c"},
    ],
)
def test_hub_loader_reads_both_layouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: dict[str, Any]
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "mmlu"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", [row])
    dataset = DatasetConf(source="hf", path=str(folder), split="test")
    (prompt,) = make_eval("m", EvalConf(kind="mmlu", dataset=dataset)).prompts()
    assert prompt.answer == "B"
