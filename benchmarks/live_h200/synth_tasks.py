"""Seeded synthetic tasks that the project's own small model is trained on and evaluated with.

Three tasks, each a pure function of a ``random.Random`` and a difficulty, so the bundled eval
files and the training stream come from the same code (``synth_data.py`` beside this file writes
the files, ``train_model.py`` draws the training rows):

- **chained arithmetic** (graded like GSM8K): a word problem of 2 to 5 additions and
  subtractions; the worked answer writes one ``a + b = c.`` step per sentence.
- **multiplication, multiple choice** (graded like GPQA, options shuffled by the GPQA eval): the
  worked answer splits the product into digit products, adds them up, names the value
  ("The answer is 322.") and only then the letter, so the letter is a lookup, not a guess.
- **key retrieval** (graded like GSM8K): a list of ``abc: 47`` lines, 4k to 17k tokens for the
  eval, with 16 one-letter keys (``K=7``) among them, and one key asked for; the answer repeats
  ``K=`` and copies the digit after it. (Three-letter codes as the asked keys were not learned in
  the 5 minutes of training: matching several tokens at once formed too slowly.)

Texts are ASCII, so under the model's byte-level tokenizer a text's tokens are its characters.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = (
    "Ana", "Ben", "Cara", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun",
    "Kai", "Lea", "Max", "Nia", "Omar", "Pia", "Raj", "Sol", "Tess", "Uma",
)  # fmt: skip
ITEMS = ("coins", "apples", "stamps", "marbles", "shells", "cards", "beads", "books")
GAINS = ("gets {n} more", "finds {n} more", "buys {n} more", "wins {n} more")
LOSSES = ("gives away {n}", "loses {n}", "sells {n}", "uses {n}")

# Arithmetic levels: (steps after the start, start range, amount range).
ARITH_LEVELS = {
    1: (2, (10, 99), (2, 99)),
    2: (3, (10, 99), (10, 99)),
    3: (4, (100, 999), (10, 999)),
    4: (5, (100, 999), (10, 999)),
}
# Multiplication levels: (first factor range, second factor range).
MCQ_LEVELS = {1: ((2, 9), (11, 99)), 2: ((2, 9), (101, 999)), 3: ((11, 99), (11, 99))}
RETRIEVAL_INTRO = "Each line below gives a code or a key and its number."
CODE_LETTERS = "abcdefghijklmnopqrstuvwxyz"
KEYS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # one token each: the lookup is a one-token match
EVAL_KEYS = 16
CHARS_PER_LINE = 8  # "abc: 47" and its newline


@dataclass(frozen=True)
class Example:
    """One generated problem.

    Attributes:
        question: the problem text, as it goes into the eval's prompt template.
        working: the worked answer the model is taught to write before its final line.
        gold: the final answer: a number, or the correct option's text for multiple choice.
        distractors: the three wrong options (multiple choice only).
        level: the difficulty the problem was drawn at.
    """

    question: str
    working: str
    gold: str
    distractors: tuple[str, ...] = field(default=())
    level: int = 1


def arith_example(rng: random.Random, level: int) -> Example:
    """A chained add/subtract word problem of ``ARITH_LEVELS[level]``; never goes below zero."""
    steps, (lo0, hi0), (lo, hi) = ARITH_LEVELS[level]
    name, item = rng.choice(NAMES), rng.choice(ITEMS)
    total = rng.randint(lo0, hi0)
    sentences, working = [f"{name} has {total} {item}."], []
    for _ in range(steps):
        if total > lo and rng.random() < 0.5:
            n = rng.randint(lo, min(hi, total))
            sentences.append(f"{name} {rng.choice(LOSSES).format(n=n)}.")
            working.append(f"{total} - {n} = {total - n}.")
            total -= n
        else:
            n = rng.randint(lo, hi)
            sentences.append(f"{name} {rng.choice(GAINS).format(n=n)}.")
            working.append(f"{total} + {n} = {total + n}.")
            total += n
    sentences.append(f"How many {item} does {name} have now?")
    return Example(" ".join(sentences), "\n".join(working), str(total), level=level)


def digit_terms(n: int) -> list[int]:
    """``n`` split by place into its nonzero parts, largest first (346 -> [300, 40, 6])."""
    text = str(n)
    terms = [int(d) * 10 ** (len(text) - i - 1) for i, d in enumerate(text)]
    return [t for t in terms if t]


def product_working(a: int, b: int) -> str:
    """Digit products of ``a x b``, then their running sum, then the named value."""
    lines, parts = [], []
    for x in digit_terms(a):
        for y in digit_terms(b):
            lines.append(f"{x} x {y} = {x * y}.")
            parts.append(x * y)
    total = parts[0]
    for part in parts[1:]:
        lines.append(f"{total} + {part} = {total + part}.")
        total += part
    lines.append(f"The answer is {total}.")
    return "\n".join(lines)


def near_misses(rng: random.Random, gold: int, a: int) -> tuple[str, ...]:
    """Three distinct positive wrong values a slip in the working would give.

    One shares the gold value's last digit (a slip in a higher digit), the other two end in
    digits of their own, so the last digit narrows the four options to two and only the digit
    before it tells those two apart.
    """
    text = str(gold)
    higher = {gold + d for d in (10, -10, 20, -20, 100, -100)}
    for i, digit in enumerate(text[:-1]):
        higher |= {int(text[:i] + o + text[i + 1 :]) for o in "0123456789"
                   if o != digit and not (i == 0 and o == "0")}  # fmt: skip
    last = {gold + d for d in (1, -1, 2, -2, 3, -3, a, -a)}
    last |= {int(text[:-1] + o) for o in "0123456789" if o != text[-1]}
    twin = rng.choice(sorted(c for c in higher if c > 0 and c != gold))
    pool = sorted(c for c in last if c > 0 and c % 10 != gold % 10)
    first = rng.choice(pool)
    second = rng.choice([c for c in pool if c % 10 != first % 10])
    return (str(twin), str(first), str(second))


def mcq_example(rng: random.Random, level: int) -> Example:
    """A multiplication question of ``MCQ_LEVELS[level]`` with three near-miss distractors."""
    (lo_a, hi_a), (lo_b, hi_b) = MCQ_LEVELS[level]
    a, b = rng.randint(lo_a, hi_a), rng.randint(lo_b, hi_b)
    gold = a * b
    question = f"What is {a} x {b}?"
    return Example(question, product_working(a, b), str(gold), near_misses(rng, gold, a), level)


def random_codes(rng: random.Random, count: int) -> list[str]:
    """``count`` distinct three-letter lower-case codes."""
    if count > len(CODE_LETTERS) ** 3:
        raise ValueError(f"{count} codes asked for; at most {len(CODE_LETTERS) ** 3} exist")
    codes: set[str] = set()
    while len(codes) < count:
        codes.add("".join(rng.choice(CODE_LETTERS) for _ in range(3)))
    # Sorted first: a set's order of strings changes with PYTHONHASHSEED from process to process.
    return sorted(sorted(codes), key=lambda _: rng.random())


Entries = list[tuple[str, int]]


def haystack(rng: random.Random, lines: int, keys: int) -> tuple[Entries, Entries]:
    """``lines`` list entries: ``keys`` one-letter keys with a digit, among coded numbers.

    Returns:
        All entries in list order, and the keyed ones (the only ones ever asked for).
    """
    filler = [(code, rng.randint(10, 99)) for code in random_codes(rng, max(0, lines - keys))]
    keyed = [(key, rng.randint(0, 9)) for key in rng.sample(KEYS, keys)]
    entries = list(filler)
    for entry in keyed:
        entries.insert(rng.randint(0, len(entries)), entry)
    return entries, keyed


def entry_text(name: str, value: int) -> str:
    """One list line: ``abc: 47`` for a code, ``K=7`` for a key."""
    return f"{name}={value}" if name in KEYS else f"{name}: {value}"


def retrieval_question(entries: list[tuple[str, int]], key: str) -> str:
    """The list as text, then the question for ``key``."""
    body = "\n".join(entry_text(n, v) for n, v in entries)
    return f"{RETRIEVAL_INTRO}\n{body}\n{retrieval_ask(key)}"


def retrieval_ask(key: str) -> str:
    """The question line alone (later turns of a training conversation ask only this)."""
    return f"What is the number for key {key}?"


def retrieval_example(rng: random.Random, chars: int, level: int = 1,
                      keys: int = EVAL_KEYS) -> Example:  # fmt: skip
    """A list of about ``chars`` characters (its question included) and one key asked for."""
    codes = (chars - len(RETRIEVAL_INTRO) - 40 - keys * len("K=7\n")) // CHARS_PER_LINE
    lines = keys + max(0, codes)
    entries, keyed = haystack(rng, lines, keys)
    key, value = rng.choice(keyed)
    return Example(retrieval_question(entries, key), entry_text(key, value), str(value),
                   level=level)  # fmt: skip


def numeric_response(example: Example) -> str:
    """What the model is taught to answer a GSM8K-style prompt with (graded on the last line)."""
    return f"{example.working}\nThe final answer is {example.gold}"


def mcq_response(example: Example, options: list[str], letters: str = "ABCD") -> str:
    """What the model is taught to answer a GPQA-style prompt with (options in shown order).

    The working and the value, then each option as ``value=letter`` (a copy of the prompt's
    lines turned around), then ``So <value>=`` whose letter is a lookup of that line, then
    ``Answer: <letter>``: the letter is found by matching the value's last digits, as a key is
    matched in the retrieval task.
    """
    letter = letters[options.index(example.gold)]
    listing = "\n".join(f"{option}={mark}" for option, mark in zip(options, letters, strict=False))
    return f"{example.working}\n{listing}\nSo {example.gold}={letter}.\nAnswer: {letter}"


def gsm8k_answer(example: Example) -> str:
    """The ``answer`` cell of a GSM8K-layout row: the working, then ``#### N``."""
    return f"{example.working}\n#### {example.gold}"
