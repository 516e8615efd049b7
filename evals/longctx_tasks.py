"""RULER-style long-context tasks, generated at any length in the served model's tokens (pure).

Six tasks in the manner of RULER (Hsieh et al., 2024), written by this project:

- ``niah_single``: one needle ``One of the special magic numbers for misty-otter is: 4829173.``
  in the haystack; its number is asked.
- ``niah_multikey``: four needles with four keys; one key's number is asked.
- ``niah_multivalue``: four needles with one key; all four numbers are asked (any order).
- ``niah_multiquery``: four needles with four keys; every key's number is asked, in order.
- ``vt`` (variable tracking): ``VAR QWERT = 12345`` and a chain of four ``VAR X = VAR Y``
  hops, plus a distractor chain with another value; every variable holding the asked value is
  asked (any order).
- ``fwe`` (frequent-word extraction): a text of coded words drawn with Zipf weights (alpha 2);
  the three most frequent are asked (any order; the third is always strictly ahead of the fourth).

Every prompt ends with the answer's form, ``The final answer is <...>``, which the grader reads
exactly (``evals.longctx``). ``reply_text`` is what a model should write: the training text of
issue 41's long-context model comes from ``sample`` and ``reply_text``.
"""

from __future__ import annotations

import collections
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass

from evals.longctx_text import (
    coded_word,
    distinct,
    fit,
    magic_number,
    sentence,
    units_for,
    variable_name,
    word_key,
)
from evals.longctx_tokens import TokenCounter

# Bumped whenever a question's text or fields change for the same arguments (evals/longctx_cache.py
# keys the kept questions by it). 2: Sample.evidence.
GENERATOR_VERSION = 2
TASKS = ("niah_single", "niah_multikey", "niah_multivalue", "niah_multiquery", "vt", "fwe")
NEEDLES = 4  # keys (multikey, multiquery) or values (multivalue), as RULER's defaults
HOPS = 4  # variable tracking: the chain's assignments after the first
FWE_VOCAB = 400
FWE_WORDS_PER_LINE = 10
FWE_TRIES = 8
FINAL = "The final answer is"
NIAH_INTRO = (
    "Some special magic numbers are hidden within the following text. Make sure to memorize "
    "it. I will quiz you about the numbers afterwards."
)
VT_INTRO = "Memorize and track the chain(s) of variable assignment hidden in the following text."
FWE_INTRO = (
    "Read the following coded text and track the frequency of each coded word. Find the three "
    "most frequently appeared coded words."
)


@dataclass(frozen=True)
class Sample:
    """One generated question.

    Attributes:
        task: one of ``TASKS``.
        length: the length asked for, in the counter's tokens (the prompt is at most this).
        text: the user message.
        tokens: its prompt tokens as the counter counts them.
        gold: the answer's items.
        ordered: whether the items must come in order (``niah_multiquery``), else as a set.
        key: the end of ``text`` that tells it apart (its last filler line, then the question):
            the simulated server finds the question by it.
        depths: where in the haystack each hidden line sits (0: start, 1: end).
        evidence: the hidden lines that answer the question, in the order ``worked_reply``
            copies them (none for ``fwe``: counting has no line to quote).
    """

    task: str
    length: int
    text: str
    tokens: int
    gold: tuple[str, ...]
    ordered: bool
    key: str
    depths: tuple[float, ...] = ()
    evidence: tuple[str, ...] = ()


def answer_form(what: str) -> str:
    """The prompt's last line: how the answer must end."""
    return f'End your answer with "{FINAL} {what}".'


def niah_question(what: str, many: bool) -> str:
    """A needle question's last line: ``what`` is asked (``the special magic number for k``)."""
    form = "<numbers, separated by commas>" if many else "<number>"
    verb = "are" if many else "is"
    return f"What {verb} {what} mentioned in the provided text? " + answer_form(form)


def vt_question(value: str) -> str:
    """A variable-tracking question's last line: which variables hold ``value``."""
    return (
        f"Question: Find all variables that are assigned the value {value} in the text above. "
        + answer_form("<variable names, separated by commas>")
    )


def reply_text(sample: Sample) -> str:
    """The answer a model should give (graded correct): the training target of issue 41."""
    return f"{FINAL} {', '.join(sample.gold)}."


def worked_reply(sample: Sample) -> str:
    """``reply_text`` after a copy of the evidence lines: the training reply of issue 41's model.

    Quoting the needle first turns retrieval into copying (the key, then what follows it in the
    haystack), which a small model learns; the bare answer asks it to jump from the question to a
    number it has no context to match, which the first lease's model never learnt (all 0.0).
    """
    return "\n".join([*sample.evidence, reply_text(sample)])


def sample(
    task: str, length: int, seed: int, index: int, counter: TokenCounter, confusable: bool = False
) -> Sample:
    """Question ``index`` of ``task`` at ``length`` tokens, a pure function of its arguments.

    ``confusable`` (training text only; the eval never sets it): in ``niah_multikey`` and
    ``niah_multiquery`` every other key shares the first key's adjective or noun, so that only
    the whole key tells the needles apart (``confusable_keys``).

    Raises:
        ValueError: an unknown task, or a length too short for the task's question.
    """
    if task not in TASKS:
        raise ValueError(f"longctx.task={task!r} is unknown: use one of {', '.join(TASKS)}")
    rng = random.Random(f"longctx/{seed}/{task}/{length}/{index}")
    if task == "vt":
        return _vt(rng, length, counter)
    if task == "fwe":
        return _fwe(rng, length, counter)
    return _niah(task, rng, length, counter, confusable)


def confusable_keys(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct keys, each after the first sharing its adjective or its noun.

    The long-context model of 2026-12-06 answered multi-key questions with a key of the asked
    noun and another adjective, copying that distractor's number (``misty-beacon`` for
    ``windy-beacon``): keys that differ in one word make the whole key what the loss rewards.
    """
    first = word_key(rng)
    adjective, noun = first.split("-", 1)

    def near() -> str:
        other = word_key(rng).split("-", 1)
        return f"{adjective}-{other[1]}" if rng.random() < 0.5 else f"{other[0]}-{noun}"

    return [first, *[k for k in distinct(near, count) if k != first][: count - 1]]


def _with_hidden(
    units: list[str], hidden: list[str], depths: list[float]
) -> Callable[[int], list[str]]:
    """The first ``n`` filler units with each hidden line at its depth (in the given order)."""

    def lines(n: int) -> list[str]:
        out = list(units[:n])
        for line, depth in sorted(zip(hidden, depths, strict=True), key=lambda p: -p[1]):
            out.insert(round(depth * n), line)
        return out

    return lines


def _build(
    length: int,
    counter: TokenCounter,
    parts: tuple[str, str],
    filler: tuple[list[str], list[int]],
    hidden: tuple[list[str], list[float]],
) -> tuple[str, str, int, list[str]]:
    """(text, key, tokens, lines) of a prompt ``intro``, haystack, ``question`` at ``length``."""
    intro, question = parts
    lines_of = _with_hidden(filler[0], *hidden)

    def compose(n: int) -> str:
        return "\n".join([intro, *lines_of(n), question])

    fitted = fit(compose, filler[1], length, counter)
    lines = lines_of(fitted.units)
    key = "\n".join([*lines[-1:], question])
    return fitted.text, key, fitted.tokens, lines


def _niah(
    task: str, rng: random.Random, length: int, counter: TokenCounter, confusable: bool
) -> Sample:
    count = 1 if task == "niah_single" else NEEDLES
    if confusable and task in ("niah_multikey", "niah_multiquery"):
        keys = confusable_keys(rng, count)
    else:
        keys = distinct(lambda: word_key(rng), 1 if task == "niah_multivalue" else count)
    values = distinct(lambda: magic_number(rng), count)
    pairs = [(keys[i % len(keys)], values[i]) for i in range(count)]
    needles = [f"One of the special magic numbers for {k} is: {v}." for k, v in pairs]
    depths = [rng.random() for _ in needles]
    if task == "niah_multiquery":
        gold, what = tuple(values), "the numbers for " + ", ".join(keys) + ", in this order"
    elif task == "niah_multivalue":
        gold, what = tuple(values), f"all the special magic numbers for {keys[0]}"
    else:
        gold, what = (values[0],), f"the special magic number for {keys[0]}"
    question = niah_question(what, len(gold) > 1)
    filler = units_for(lambda: sentence(rng), length, counter)
    text, key, tokens, _ = _build(
        length, counter, (NIAH_INTRO, question), filler, (needles, depths)
    )
    by_value = {v: line for (_, v), line in zip(pairs, needles, strict=True)}
    evidence = tuple(by_value[v] for v in gold)
    return Sample(task, length, text, tokens, gold, task == "niah_multiquery", key, tuple(depths),
                  evidence)  # fmt: skip


def _vt(rng: random.Random, length: int, counter: TokenCounter) -> Sample:
    names = distinct(lambda: variable_name(rng), 2 * (HOPS + 1))
    value, other = distinct(lambda: str(rng.randint(10_000, 99_999)), 2)
    chains = [names[: HOPS + 1], names[HOPS + 1 :]]
    hidden: list[str] = []
    for chain, start in zip(chains, (value, other), strict=True):
        hidden += [f"VAR {chain[0]} = {start}."]
        hidden += [f"VAR {b} = VAR {a}." for a, b in itertools.pairwise(chain)]
    # Each chain's lines keep their order: sorted depths within the chain.
    depths = sorted(rng.random() for _ in range(HOPS + 1))
    depths += sorted(rng.random() for _ in range(HOPS + 1))
    question = vt_question(value)
    filler = units_for(lambda: sentence(rng), length, counter)
    text, key, tokens, _ = _build(length, counter, (VT_INTRO, question), filler,
                                  (hidden, depths))  # fmt: skip
    return Sample("vt", length, text, tokens, tuple(chains[0]), False, key, tuple(depths),
                  tuple(hidden[: HOPS + 1]))  # fmt: skip


def _fwe(rng: random.Random, length: int, counter: TokenCounter) -> Sample:
    vocab = distinct(lambda: coded_word(rng), FWE_VOCAB)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) ** 2 for rank in range(FWE_VOCAB)))

    def line() -> str:
        return " ".join(rng.choices(vocab, cum_weights=cumulative, k=FWE_WORDS_PER_LINE))

    question = (
        "Question: What are the three most frequently appeared coded words in the above coded "
        "text? " + answer_form("<three words, separated by commas>")
    )
    for _ in range(FWE_TRIES):  # a tie for third place is drawn again, from the same stream
        filler = units_for(line, length, counter)
        text, key, tokens, lines = _build(length, counter, (FWE_INTRO, question), filler,
                                          ([], []))  # fmt: skip
        counts = collections.Counter(w for ln in lines for w in ln.split()).most_common(4)
        if len(counts) == 4 and counts[2][1] > counts[3][1]:
            return Sample("fwe", length, text, tokens, tuple(w for w, _ in counts[:3]), False, key)
    raise ValueError(f"fwe at {length} tokens: the third word ties the fourth; use a longer length")
