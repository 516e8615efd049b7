"""The simulated model: finds the question in a prompt and writes a deterministic answer (pure).

Correctness depends only on ``(seed, prompt)``: ``u = hash(seed, prompt)`` and the answer is right
iff ``u < accuracy``. Cells with the same accuracy therefore answer identically, and a cell with a
lower accuracy gets a subset of the questions right, which is what paired comparisons rely on.
With ``sampling_spread`` > 0 the caller passes a per-request uniform and the question's
difficulty instead (``pipeline.simserver.sampling``): repeats and server starts then differ.
One whitespace-separated word is one token.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.simserver.simconfig import AnswerEntry

_OPTION = re.compile(r"^\s*\(?([A-Z])[).:]\s+(.*\S)\s*$")
_FILLER = [
    "let", "us", "work", "through", "the", "problem", "step", "by", "step", "and", "weigh",
    "each", "option", "carefully", "before", "settling", "on", "a", "final", "choice", "while",
    "checking", "units", "signs", "and", "the", "known", "facts", "that", "apply", "here", "so",
    "the", "reasoning", "stays", "consistent", "with", "the", "question", "as", "it", "was",
    "asked",
]  # fmt: skip
# Lower case on purpose: graders read a lone capital letter as an MCQ answer.
_NO_ANSWER = ("unable", "to", "decide.")
_UNIT = 1.0 / float(1 << 64)
# The filler words, space-prefixed and repeated: a completion's words are one slice of this.
_SPACED = tuple(" " + _FILLER[i % len(_FILLER)] for i in range(8192))


def hash_units(*parts: str) -> tuple[float, float, float, float]:
    """Four independent uniforms in [0, 1) from one 32-byte BLAKE2b digest of ``parts``."""
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=32).digest()
    return tuple(  # type: ignore[return-value]
        int.from_bytes(digest[i : i + 8], "little") * _UNIT for i in range(0, 32, 8)
    )


@dataclass(frozen=True)
class Completion:
    """One generated answer, already cut to the token limit."""

    tokens: tuple[str, ...]  # words with their leading separator; "".join(tokens) is the text
    finish_reason: str  # stop | length
    question_key: str | None  # first line of the matched question
    kind: str | None  # mcq | numeric | None (prompt not in the answer key)
    correct: bool | None  # whether the text states the right answer (None: nothing to grade)
    answer: str | None  # the answer the text states, None when cut off or unknown


class AnswerIndex:
    """Answer key entries by the stripped first line of their question."""

    def __init__(self, entries: Sequence[AnswerEntry]) -> None:
        self._by_first: dict[str, list[AnswerEntry]] = {}
        for entry in entries:
            first = entry.question.strip().splitlines()[0].strip()
            self._by_first.setdefault(first, []).append(entry)

    def find(self, text: str) -> tuple[str, AnswerEntry] | None:
        """The (first line, entry) of the first prompt line that starts a known question."""
        for line in text.splitlines():
            hits = self._by_first.get(line.strip())
            if hits:
                best = next((e for e in hits if e.question.strip() in text), hits[0])
                return line.strip(), best
        return None


def plan_completion(
    index: AnswerIndex,
    question_text: str,
    units: tuple[float, float, float, float],
    accuracy: float,
    mean_tokens: int,
    cap: int | None,
) -> Completion:
    """Write the answer to ``question_text``.

    Args:
        index: the answer key.
        question_text: where to look for the question (the last user message).
        units: ``hash_units(seed, prompt)``: correctness, length, wrong pick, filler offset.
        accuracy: the cell's accuracy.
        mean_tokens: mean completion length; the target is 0.5x to 1.5x of it by hash.
        cap: max tokens (request limit or a truncation fault); hitting it finishes with "length".
    """
    u_correct, u_len, u_wrong, u_offset = units
    found = index.find(question_text)
    tail: tuple[str, ...] = _NO_ANSWER
    if found is None:
        key, kind, correct, answer = None, None, None, None
    else:
        key, entry = found
        kind = entry.kind
        correct = u_correct < accuracy
        answer = _answer(entry, question_text, correct, u_wrong)
        if answer is None:
            correct = None
        elif kind == "mcq":
            tail = ("Answer:", answer)
        else:
            tail = ("The", "final", "answer", "is", answer)
    target = max(len(tail) + 1, round(mean_tokens * (0.5 + u_len)))
    words = _filler(target - len(tail), int(u_offset * len(_FILLER)))
    tokens = (*words, "\n" + tail[0], *(" " + w for w in tail[1:]))
    return truncate(Completion(tokens, "stop", key, kind, correct, answer), cap)


def truncate(completion: Completion, cap: int | None) -> Completion:
    """Cut ``completion`` to ``cap`` tokens; a cut answer states nothing, so it is not correct."""
    if cap is None or cap >= len(completion.tokens):
        return completion
    correct = None if completion.correct is None else False
    tokens = completion.tokens[: max(cap, 0)]
    return Completion(tokens, "length", completion.question_key, completion.kind, correct, None)


def run_on(completion: Completion, cap: int | None) -> Completion:
    """``completion`` run on with filler to ``cap`` tokens (``ignore_eos``: no stop before)."""
    if cap is None or cap <= len(completion.tokens):
        return completion
    more = _filler(cap - len(completion.tokens), len(completion.tokens))
    more[0] = " " + more[0]  # it follows the text, so it keeps its separator
    tokens = (*completion.tokens, *more)
    return Completion(tokens, "length", completion.question_key, completion.kind,
                      completion.correct, completion.answer)  # fmt: skip


def _filler(count: int, offset: int) -> list[str]:
    if count <= 0:
        return []
    if offset + count <= len(_SPACED):
        words = list(_SPACED[offset : offset + count])
    else:
        words = [" " + _FILLER[(offset + i) % len(_FILLER)] for i in range(count)]
    words[0] = words[0][1:]
    return words


def _answer(entry: AnswerEntry, text: str, correct: bool, u_wrong: float) -> str | None:
    if entry.kind in ("numeric", "text"):  # a wrong text gets a digit on its last item
        return entry.answer if correct else _wrong_number(entry.answer, u_wrong)
    options = _options(text)
    # Options are matched line by line, so a multi-line answer is known by its first line.
    wanted = entry.answer.strip().splitlines()[0].strip().casefold()
    right = next((k for k, v in options.items() if v.casefold() == wanted), None)
    if right is None and len(entry.answer) == 1 and entry.answer.isupper():
        right = entry.answer  # the key gives the letter itself
    if right is None:
        return None
    if correct:
        return right
    others = [k for k in options if k != right] or [chr((ord(right) - 64) % 26 + 65)]
    return others[int(u_wrong * len(others))]


def _options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for line in text.splitlines():
        m = _OPTION.match(line)
        if m:
            options.setdefault(m.group(1), m.group(2).strip())
    return options


def _wrong_number(answer: str, u_wrong: float) -> str:
    plain = answer.replace(",", "")
    shift = 1 + int(u_wrong * 9)
    try:
        return str(int(plain) + shift)
    except ValueError:
        pass
    try:
        return f"{float(plain) + shift:g}"
    except ValueError:
        return answer + str(shift)
