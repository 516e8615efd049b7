"""MMLU-style multiple choice: MMLU's 4 options and MMLU-Pro's up to 10 (letters A-J).

Rows are read in either layout and in the dataset's option order (MMLU results are reported
without shuffling):
- MMLU (``cais/mmlu``): ``question``, ``choices`` (list), ``answer`` (0-based index), ``subject``;
- MMLU-Pro (``TIGER-Lab/MMLU-Pro``): ``question``, ``options`` (list), ``answer`` (letter),
  ``answer_index``, ``category``;
- or columns ``A``, ``B``, ... with ``answer`` as a letter or an index.

The prompt is simple-evals' multiple-choice template (the GPQA one) with the letters widened to
the row's options ("where LETTER is one of ABCDEFGHIJ"), as sgl-eval and Artificial Analysis run
MMLU-Pro zero-shot; grading is ``extract_mcq_letter`` over the row's letters, last match wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypedDict

from evals.base import (
    AnswerKeyEntry,
    AnswerKind,
    Eval,
    EvalPrompt,
    QuestionText,
    RowsEval,
    question_id,
)
from evals.eval_conf import EvalConf
from evals.grading import extract_mcq_letter
from evals.rows import answer_index, row_error, skip_duplicate, text_list

LETTERS = "ABCDEFGHIJ"
QUERY_TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of "
    "{letters}. Think step by step before answering.\n\n{block}"
)


def question_block(question: str, options: list[str]) -> str:
    """The question and its lettered options, as the prompt shows them."""
    lines = "\n".join(f"{letter}) {text}" for letter, text in zip(LETTERS, options, strict=False))
    return f"{question}\n\n{lines}"


def format_prompt(question: str, options: list[str]) -> str:
    """The user message for one question."""
    letters = LETTERS[: len(options)]
    return QUERY_TEMPLATE.format(letters=letters, block=question_block(question, options))


class MmluEval(RowsEval):
    """MMLU, MMLU-Pro or any file in one of their layouts."""

    answer_kinds: tuple[AnswerKind, ...] = ("mcq",)
    columns: ClassVar[tuple[str, ...]] = ("question",)  # the options: in one of three layouts

    def __init__(self, name: str, conf: EvalConf, rows: Sequence[dict[str, Any]]) -> None:
        """Build the questions from ``rows`` (see ``RowsEval``)."""
        super().__init__(name, conf)
        self.questions = _questions(rows, conf, name)

    def prompts(self) -> list[EvalPrompt]:
        """Every question at every repeat, repeat-major."""
        return [
            EvalPrompt(
                question_id=q["id"],
                repeat=repeat,
                messages=[{"role": "user", "content": format_prompt(q["question"], q["options"])}],
                answer=LETTERS[q["answer"]],
                meta={"subject": q["subject"], "n_options": len(q["options"])},
                question=_shown(q),
            )
            for repeat in range(self.conf.repeats)
            for q in self.questions
        ]

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Extract a letter among the row's options from ``content`` and compare it."""
        letter = extract_mcq_letter(content, LETTERS[: prompt.meta["n_options"]])
        return letter, letter is not None and letter == prompt.answer

    def answer_key(self) -> list[AnswerKeyEntry]:
        """``kind: mcq`` answer-key entries.

        The question is the whole block with its options (it tells apart MMLU's rows that share
        a question text); the answer is the correct option's text, or its letter when that text
        appears twice among the options.
        """
        entries: list[AnswerKeyEntry] = []
        for q in self.questions:
            correct = q["options"][q["answer"]]
            answer = correct if q["options"].count(correct) == 1 else LETTERS[q["answer"]]
            block = question_block(q["question"], q["options"])
            entries.append({"question": block, "answer": answer, "kind": "mcq"})
        return entries


def _shown(q: MmluQuestion) -> QuestionText:
    return QuestionText(q["question"], tuple(q["options"]), gold=q["options"][q["answer"]])


def _options(row: dict[str, Any], conf: EvalConf, number: int) -> list[str]:
    for column in ("options", "choices"):
        if row.get(column) is not None:
            options = text_list(row[column], conf.dataset, number, column)
            break
    else:
        options = []
        for column in LETTERS:  # contiguous from A: a gap would shift every later letter
            if not str(row.get(column) or "").strip():
                break
            options.append(str(row[column]).strip())
        if not options:
            raise row_error(
                conf.dataset, number, "options", "no options (columns options, choices or A-J)",
                "Give the options as a list in 'choices' / 'options' or as columns A, B, ...",
            )  # fmt: skip
    if not 2 <= len(options) <= len(LETTERS):
        column = "options" if "options" in row else "choices"
        raise row_error(
            conf.dataset, number, column, f"{len(options)} options",
            f"Give between 2 and {len(LETTERS)} options.",
        )  # fmt: skip
    return options


def _answer(row: dict[str, Any], count: int, conf: EvalConf, number: int) -> int:
    # MMLU-Pro carries both; its integer answer_index is the unambiguous one.
    column = "answer_index" if row.get("answer_index") not in (None, "") else "answer"
    if row.get(column) in (None, ""):
        raise row_error(
            conf.dataset, number, "answer", "missing",
            "Give the correct option as a 0-based index or a letter.",
        )  # fmt: skip
    return answer_index(row[column], count, conf.dataset, number, column)


class MmluQuestion(TypedDict):
    """A dataset row made a question: its id, text, options, correct index and subject."""

    id: str
    question: str
    options: list[str]
    answer: int  # the correct option's 0-based index
    subject: str


def _questions(rows: Sequence[dict[str, Any]], conf: EvalConf, name: str) -> list[MmluQuestion]:
    questions: list[MmluQuestion] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        options = _options(row, conf, number)
        text = str(row["question"]).strip()
        qid = question_id(question_block(text, options))
        if skip_duplicate(seen, qid, name, number):
            continue
        subject = str(row.get("subject") or row.get("category") or "")
        answer = _answer(row, len(options), conf, number)
        questions.append(
            {"id": qid, "question": text, "options": options, "answer": answer, "subject": subject}
        )
    return questions


_CHECKED: type[Eval] = MmluEval  # mypy checks the class against the eval protocol
