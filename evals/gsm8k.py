r"""GSM8K: grade-school maths word problems, zero-shot chat, graded on the final number.

The prompt is lm-eval's ``gsm8k_cot_llama`` chat prompt (Llama-3's evals), asking for a last
line "The final answer is N". The gold number is what follows GSM8K's ``####``. The answer is
extracted as the anchors do (``evals.grading.extract_number``): ``#### N``, "The final answer is
N", ``Answer: N`` and ``\boxed{N}``, the last one in the text, else the last number (lm-eval's
flexible-extract). Numbers compare after dropping ``$``, thousands separators and trailing zeros.
Rows: ``question`` and ``answer`` (``openai/gsm8k`` ``main``, split ``test``), or any file with
those columns whose ``answer`` is a GSM8K solution or a bare number.
"""

from __future__ import annotations

import re
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
from evals.grading import extract_number, normalize_number
from evals.rows import row_error, skip_duplicate

COLUMNS = ("question", "answer")
# lm-eval tasks/gsm8k/gsm8k-cot-llama.yaml doc_to_text (zero-shot here; no trailing newline).
PROMPT_TEMPLATE = (
    "Given the following problem, reason and give a final answer to the problem.\n"
    "Problem: {question}\n"
    'Your response should end with "The final answer is [answer]" where [answer] is the '
    "response to the problem."
)
_GOLD = re.compile(r"####\s*(\$?\s*-?[0-9][0-9,]*(?:\.[0-9]+)?)")
_BARE_NUMBER = re.compile(r"^\s*\$?\s*[-+]?[0-9][0-9,]*(?:\.[0-9]+)?\s*$")


def gold_number(answer: object) -> str | None:
    """The normalized gold answer of a row: after ``####``, or the whole cell if it is a number.

    Args:
        answer: the ``answer`` cell (a GSM8K solution, a number or a numeric string).

    Returns:
        The normalized number, or None when the cell holds none.
    """
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int | float):
        return normalize_number(repr(answer))
    if not isinstance(answer, str):
        return None
    matches = _GOLD.findall(answer)
    if matches:
        return normalize_number(matches[-1])
    return normalize_number(answer) if _BARE_NUMBER.match(answer) else None


def numbers_match(extracted: str | None, gold: str) -> bool:
    """Whether an extracted (normalized) number equals the gold one, as numbers."""
    if extracted is None:
        return False
    if extracted == gold:
        return True
    try:
        return float(extracted) == float(gold)
    except ValueError:
        return False


def format_prompt(question: str) -> str:
    """The user message for one problem."""
    return PROMPT_TEMPLATE.format(question=question)


class Gsm8kEval(RowsEval):
    """GSM8K or any file of word problems with a numeric answer."""

    answer_kinds: tuple[AnswerKind, ...] = ("numeric",)
    columns: ClassVar[tuple[str, ...]] = COLUMNS

    def __init__(self, name: str, conf: EvalConf, rows: Sequence[dict[str, Any]]) -> None:
        """Build the questions from ``rows`` (see ``RowsEval``)."""
        super().__init__(name, conf)
        self.problems = _problems(rows, conf, name)

    def prompts(self) -> list[EvalPrompt]:
        """Every problem at every repeat, repeat-major."""
        return [
            EvalPrompt(
                question_id=p["id"],
                repeat=repeat,
                messages=[{"role": "user", "content": format_prompt(p["question"])}],
                answer=p["gold"],
                meta={},
                question=QuestionText(p["question"], gold=p["gold"]),
            )
            for repeat in range(self.conf.repeats)
            for p in self.problems
        ]

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Extract the final number from ``content`` (never reasoning) and compare it."""
        extracted = extract_number(content)
        return extracted, numbers_match(extracted, prompt.answer)

    def answer_key(self) -> list[AnswerKeyEntry]:
        """``kind: numeric`` entries; the question as its line of the prompt reads."""
        return [
            {"question": f"Problem: {p['question']}", "answer": p["gold"], "kind": "numeric"}
            for p in self.problems
        ]


class Gsm8kProblem(TypedDict):
    """A dataset row made a problem: its id, text and the number that answers it."""

    id: str
    question: str
    gold: str  # the final number as the solution writes it after '####'


def _problems(rows: Sequence[dict[str, Any]], conf: EvalConf, name: str) -> list[Gsm8kProblem]:
    problems: list[Gsm8kProblem] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        gold = gold_number(row["answer"])
        if gold is None:
            raise row_error(
                conf.dataset,
                number,
                "answer",
                f"no number after '####' and not a number: {str(row['answer'])[-80:]!r}",
                "End the solution with '#### <number>' or give the number alone.",
            )
        text = str(row["question"]).strip()
        qid = question_id(text)
        if not skip_duplicate(seen, qid, name, number):
            problems.append({"id": qid, "question": text, "gold": gold})
    return problems


_CHECKED: type[Eval] = Gsm8kEval  # mypy checks the class against the eval protocol
