from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

import pytest

from evals.base import EvalPrompt, make_eval, question_id
from evals.eval_conf import DatasetConf, EvalConf
from evals.gpqa import COLUMNS, QUERY_TEMPLATE, GpqaEval, permutation

# openai/simple-evals common.QUERY_TEMPLATE_MULTICHOICE (SGLang's in-tree GPQA), verbatim.
SIMPLE_EVALS = """
Answer the following multiple choice question. The last line of your response should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering.

{Question}

A) {A}
B) {B}
C) {C}
D) {D}
""".strip()  # noqa: E501

ROWS = [
    {
        "Question": f"  Question number {i}?\nSecond line {i}. ",
        "Correct Answer": f"right {i}",
        "Incorrect Answer 1": f"wrong {i}a",
        "Incorrect Answer 2": f"wrong {i}b ",
        "Incorrect Answer 3": f"wrong {i}c",
    }
    for i in range(6)
]


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def gpqa(tmp_path: Path, rows: list[dict[str, str]], **kw: object) -> GpqaEval:
    path = write_csv(tmp_path / f"rows{len(list(tmp_path.iterdir()))}.csv", rows)
    conf = EvalConf(kind="gpqa", dataset=DatasetConf(source="file", path=str(path)))
    ev = make_eval("gpqa_test", dataclasses.replace(conf, **kw))  # type: ignore[arg-type]
    assert isinstance(ev, GpqaEval)
    return ev


def by_key(prompts: list[EvalPrompt]) -> dict[tuple[str, int], EvalPrompt]:
    return {(p.question_id, p.repeat): p for p in prompts}


def test_template_is_simple_evals_verbatim() -> None:
    assert QUERY_TEMPLATE == SIMPLE_EVALS


def test_prompt_text_answer_and_permutation(tmp_path: Path) -> None:
    ev = gpqa(tmp_path, ROWS[:1], repeats=3, seed=7)
    for prompt in ev.prompts():
        perm = prompt.meta["permutation"]
        choices = ["right 0", "wrong 0a", "wrong 0b", "wrong 0c"]
        shown = [choices[i] for i in perm]
        text = SIMPLE_EVALS.format(
            Question="Question number 0?\nSecond line 0.",
            A=shown[0],
            B=shown[1],
            C=shown[2],
            D=shown[3],
        )
        assert prompt.messages == [{"role": "user", "content": text}]
        assert shown["ABCD".index(prompt.answer)] == "right 0"
        assert prompt.question_id == question_id("Question number 0?\nSecond line 0.")
        assert perm == permutation(7, prompt.question_id, prompt.repeat)


def test_permutations_do_not_depend_on_row_order_or_limit(tmp_path: Path) -> None:
    forward = by_key(gpqa(tmp_path, ROWS, repeats=4).prompts())
    backward = by_key(gpqa(tmp_path, ROWS[::-1], repeats=4).prompts())
    limited = by_key(gpqa(tmp_path, ROWS[::-1][:2], repeats=4).prompts())
    assert forward == backward
    assert all(forward[key] == prompt for key, prompt in limited.items())


def test_permutations_vary_with_repeat_and_seed(tmp_path: Path) -> None:
    perms = {tuple(p.meta["permutation"]) for p in gpqa(tmp_path, ROWS, repeats=4).prompts()}
    assert len(perms) > 4  # 24 samples from 24 orders: not all the same
    seed0 = [p.meta["permutation"] for p in gpqa(tmp_path, ROWS, seed=0).prompts()]
    seed1 = [p.meta["permutation"] for p in gpqa(tmp_path, ROWS, seed=1).prompts()]
    assert seed0 != seed1


@pytest.mark.parametrize(
    ("seed", "qid", "repeat", "expected"),
    [(0, "0123456789abcdef", 0, [1, 0, 3, 2]), (3, "fedcba9876543210", 5, [2, 3, 0, 1])],
)
def test_permutation_is_pinned(seed: int, qid: str, repeat: int, expected: list[int]) -> None:
    # Pinned so a Python or code change that reshuffles every sweep's prompts is caught.
    assert permutation(seed, qid, repeat) == expected


def test_correct_letters_are_spread_over_abcd() -> None:
    letters = [permutation(0, f"{i:016x}", 0).index(0) for i in range(400)]
    assert all(60 < letters.count(k) < 140 for k in range(4))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("Answer: {right}", ("{right}", True)),
        ("Answer: {wrong}", ("{wrong}", False)),
        ("no idea", (None, False)),
        (None, (None, False)),
    ],
)
def test_grade(tmp_path: Path, content: str | None, expected: tuple[str | None, bool]) -> None:
    ev = gpqa(tmp_path, ROWS[:1])
    prompt = ev.prompts()[0]
    fill = {"right": prompt.answer, "wrong": next(x for x in "ABCD" if x != prompt.answer)}
    text = content.format(**fill) if content else None
    letter = expected[0].format(**fill) if expected[0] else None
    assert ev.grade(prompt, text) == (letter, expected[1])


def test_answer_key_lets_the_simulated_server_find_the_answer(tmp_path: Path) -> None:
    ev = gpqa(tmp_path, ROWS, repeats=2)
    key = {entry["question"].strip().splitlines()[0]: entry for entry in ev.answer_key()}
    assert len(key) == len(ROWS) and {e["kind"] for e in key.values()} == {"mcq"}
    for prompt in ev.prompts():
        text = prompt.messages[0]["content"]
        first_line = next(line for line in text.split("\n\n")[1].splitlines())
        entry = key[first_line.strip()]
        option = re.search(rf"^([A-D])\) {re.escape(entry['answer'])}$", text, re.MULTILINE)
        assert option is not None and option.group(1) == prompt.answer


def test_duplicate_questions_are_kept_once(tmp_path: Path) -> None:
    ev = gpqa(tmp_path, [ROWS[0], ROWS[1], dict(ROWS[0], **{"Correct Answer": "other"})])
    assert len(ev.answer_key()) == 2 and ev.answer_key()[0]["answer"] == "right 0"


def test_prompts_are_repeat_major(tmp_path: Path) -> None:
    prompts = gpqa(tmp_path, ROWS[:3], repeats=2).prompts()
    assert [p.repeat for p in prompts] == [0, 0, 0, 1, 1, 1]


def test_bundled_sample_builds() -> None:
    sample = DatasetConf(source="bundled", path="mcq_sample.csv")
    ev = make_eval("mcq_sample", EvalConf(dataset=sample, repeats=2))
    assert len(ev.prompts()) == 2 * len(ev.answer_key()) >= 96


@pytest.mark.parametrize(
    ("conf", "error"),
    [
        (EvalConf(kind="gsm9k"), "evals.x.kind='gsm9k' is unknown; use one of \\['gpqa'"),
        (EvalConf(repeats=0), "evals.x.repeats=0"),
    ],
)
def test_bad_eval_config_is_named(conf: EvalConf, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        make_eval("x", conf)
