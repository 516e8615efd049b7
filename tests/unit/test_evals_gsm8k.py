from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evals.base import EvalPrompt, make_eval, question_id
from evals.datasets import DATA_DIR, DatasetError
from evals.eval_conf import DatasetConf, EvalConf
from evals.grading import extract_number
from evals.gsm8k import Gsm8kEval, format_prompt, gold_number, numbers_match
from pipeline.simserver.model import AnswerIndex, hash_units, plan_completion
from pipeline.simserver.simconfig import AnswerEntry

SAMPLE = DATA_DIR / "word_problems_sample.jsonl"
# "a op b (op c ...) = d" inside a worked solution; parentheses allowed.
EQUATION = re.compile(
    r"((?:\(?-?[0-9][0-9.,]*\)?\s*[-+*/]\s*)+\(?-?[0-9][0-9.,]*\)?)\s*=\s*(-?[0-9][0-9,]*(?:\.[0-9]+)?)"
)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def sample_eval(repeats: int = 1) -> Gsm8kEval:
    conf = EvalConf(
        kind="gsm8k",
        dataset=DatasetConf(source="bundled", path="word_problems_sample.jsonl"),
        repeats=repeats,
    )
    ev = make_eval("gsm8k_sample", conf)
    assert isinstance(ev, Gsm8kEval)
    return ev


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Natalia sold 48/2 = 24 clips in May.\n#### 72", "72"),
        ("so 1,000 + 415 = 1,415\n#### 1,415", "1415"),
        ("It fell below zero.\n#### -2", "-2"),
        ("#### $18.50", "18.5"),
        ("####5", "5"),
        ("first #### 3 then #### 4", "4"),  # the last marker wins
        ("5.75", "5.75"),
        (" 42 ", "42"),
        (42, "42"),
        (2.5, "2.5"),
        ("no final number here", None),
        ("the answer is 12 apples", None),  # a bare cell must be only a number
        (True, None),
        (None, None),
    ],
)
def test_gold_number(answer: object, gold: str | None) -> None:
    assert gold_number(answer) == gold


@pytest.mark.parametrize(
    ("extracted", "gold", "match"),
    [
        ("72", "72", True),
        ("72.0", "72", True),
        ("0.5", ".5", True),
        ("73", "72", False),
        (None, "72", False),
        ("-2", "2", False),
    ],
)
def test_numbers_match(extracted: str | None, gold: str, match: bool) -> None:
    assert numbers_match(extracted, gold) is match


@pytest.mark.parametrize(
    ("content", "gold", "extracted", "correct"),
    [
        ("18 - 4 = 14 ... The final answer is 72", "72", "72", True),
        ("**The final answer is $1,415.**", "1415", "1415", True),
        ("The final answer is 1415.00", "1415", "1415", True),
        ("The final answer is -2 degrees", "-2", "-2", True),
        ("The final answer is 5.750", "5.75", "5.75", True),
        ("#### 72", "72", "72", True),
        ("Answer: 71\nWait, recount. The final answer is 72", "72", "72", True),  # last wins
        ("The final answer is 72. Check: 70 + 2", "72", "72", True),  # keyword beats a number
        ("I get \\boxed{72}", "72", "72", True),
        ("so it is 71", "72", "71", False),
        ("no digits at all", "72", None, False),
        ("", "72", None, False),
        (None, "72", None, False),
    ],
)
def test_grade(content: str | None, gold: str, extracted: str | None, correct: bool) -> None:
    prompt = EvalPrompt("q", 0, [{"role": "user", "content": format_prompt("Q")}], gold, {})
    assert sample_eval().grade(prompt, content) == (extracted, correct)


def test_prompt_is_llama_gsm8k_chat_prompt() -> None:
    # lm-eval tasks/gsm8k/gsm8k-cot-llama.yaml doc_to_text, zero-shot.
    assert format_prompt("How many?") == (
        "Given the following problem, reason and give a final answer to the problem.\n"
        "Problem: How many?\n"
        'Your response should end with "The final answer is [answer]" where [answer] is the '
        "response to the problem."
    )


def test_prompts_are_repeat_major_with_stable_ids() -> None:
    ev = sample_eval(repeats=2)
    prompts = ev.prompts()
    n = len(ev.problems)
    assert len(prompts) == 2 * n
    assert [p.repeat for p in prompts] == [0] * n + [1] * n
    first = prompts[0]
    assert first.question_id == question_id(ev.problems[0]["question"])
    assert first.messages == [
        {"role": "user", "content": format_prompt(ev.problems[0]["question"])}
    ]
    assert prompts[n].messages == first.messages  # no permutation: repeats send the same prompt


def test_answer_key_first_line_is_a_line_of_the_prompt() -> None:
    # The simulated server finds a question by the stripped first line of the key's question.
    ev = sample_eval()
    for entry, prompt in zip(ev.answer_key(), ev.prompts(), strict=True):
        assert entry["kind"] == "numeric" and entry["answer"] == prompt.answer
        first = entry["question"].splitlines()[0].strip()
        assert first in [line.strip() for line in prompt.messages[0]["content"].splitlines()]


@pytest.mark.parametrize("accuracy", [0.0, 1.0])
def test_simulated_answers_grade_as_the_server_meant(accuracy: float) -> None:
    ev = sample_eval()
    index = AnswerIndex([AnswerEntry(**e) for e in ev.answer_key()])
    for prompt in ev.prompts():
        text = prompt.messages[0]["content"]
        done = plan_completion(index, text, hash_units("0", text), accuracy, 40, None)
        assert done.kind == "numeric"
        assert ev.grade(prompt, "".join(done.tokens))[1] is (accuracy == 1.0)


def test_bundled_sample_is_not_gsm8k_and_every_solution_checks_out() -> None:
    rows = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert len(rows) >= 30
    assert len({r["question"] for r in rows}) == len(rows)
    for number, row in enumerate(rows, start=1):
        solution, _, _ = row["answer"].rpartition("####")
        for expr, value in EQUATION.findall(solution):
            assert eval(expr.replace(",", "")) == pytest.approx(float(value.replace(",", ""))), (
                number,
                expr,
            )
        # The worked solution ends on the gold number.
        assert extract_number(solution) == gold_number(row["answer"]), number
    readme = (DATA_DIR / "README.md").read_text()
    assert "word_problems_sample.jsonl" in readme and "not GSM8K" in readme


@pytest.mark.parametrize(
    ("rows", "fragments"),
    [
        ([{"question": "Q1", "answer": "no number"}], ["row 1", "'answer'", "####"]),
        (
            [{"question": "Q1", "answer": "#### 3"}, {"question": "Q2", "answer": "x"}],
            ["row 2", "'answer'"],
        ),
        ([{"question": "Q1"}], ["missing column", "answer"]),
        ([{"question": "", "answer": "#### 1"}], ["row 1", "'question'"]),
    ],
)
def test_unparseable_row_names_file_row_and_column(
    tmp_path: Path, rows: list[dict], fragments: list[str]
) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as err:
        make_eval("g", EvalConf(kind="gsm8k", dataset=DatasetConf(source="file", path=str(path))))
    message = str(err.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_duplicate_problem_is_kept_once(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "dup.jsonl",
        [{"question": "Q", "answer": "#### 1"}, {"question": " Q ", "answer": "#### 2"}],
    )
    ev = make_eval("g", EvalConf(kind="gsm8k", dataset=DatasetConf(source="file", path=str(path))))
    assert [p["gold"] for p in ev.problems] == ["1"]


def test_repeats_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"evals\.g\.repeats=0"):
        make_eval("g", EvalConf(kind="gsm8k", repeats=0))


def test_hub_loader_reads_gsm8k_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "gsm8k"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", [{"question": "Q?", "answer": "2 + 2 = 4\n#### 4"}])
    dataset = DatasetConf(source="hf", path=str(folder), split="test")
    (prompt,) = make_eval("g", EvalConf(kind="gsm8k", dataset=dataset)).prompts()
    assert prompt.answer == "4"
