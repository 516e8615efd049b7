"""The training stream of the project's trained model (pure, no torch).

Byte-level chat encoding, seeded conversations of the synthetic tasks, packed rows and the length
curriculum.

The model reads bytes: token ``b`` is byte ``b`` (0-255), then six special tokens and two spare
ones (264 in all). The chat template below and ``encode_chat`` give the same ids; the trained
model's tokenizer (``benchmarks/live_h200/train_model.py``) is built from ``byte_vocab``, so SGLang,
transformers and this stream agree on every id. Only assistant turns (and the ``<|eot|>`` that
ends them) carry loss.

The curriculum (``batch_plan``): rows of 2,048 tokens packed with whole conversations of all three
tasks (retrieval lists of 4 to 180 lines, several questions each) for the first quarter of the
steps; after that 40% of the steps are single long retrieval conversations whose longest allowed
length grows from 4k to 18k tokens, so 4k-17k prompts are seen before the end.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.live_h200 import synth_tasks as tasks
from evals.gpqa import LETTERS
from evals.gpqa import format_prompt as gpqa_prompt
from evals.gsm8k import format_prompt as gsm8k_prompt

BOS, EOS, PAD = "<|begin_of_text|>", "<|end_of_text|>", "<|pad|>"
HEADER_START, HEADER_END, EOT = "<|start_header|>", "<|end_header|>", "<|eot|>"
SPECIAL = (BOS, EOS, PAD, HEADER_START, HEADER_END, EOT, "<|spare_0|>", "<|spare_1|>")
SPECIAL_ID = {token: 256 + i for i, token in enumerate(SPECIAL)}
VOCAB_SIZE = 256 + len(SPECIAL)
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "<|start_header|>{{ m['role'] }}<|end_header|>\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for p in m['content'] %}{% if p['type'] == 'text' %}{{ p['text'] }}"
    "{% endif %}{% endfor %}{% endif %}<|eot|>"
    "{% endfor %}{% if add_generation_prompt %}<|start_header|>assistant<|end_header|>\n"
    "{% endif %}"
)
SHORT_LEN = 2048
LONG_LENS = (4096, 8192, 12288, 18432)
TASKS = ("arith", "mcq", "retrieval", "drill", "letters")
# Share of conversations per task in packed rows. Drills (a list, then many codes asked at once)
# give the lookup that retrieval and the multiple-choice letter need many supervised tokens a row.
# Letter drills (lists of ``number=letter`` lines, every number asked) teach the lookup keyed by
# a number that the multiple-choice answer needs; the key drills alone taught only letter keys.
SHORT_MIX = (0.28, 0.28, 0.12, 0.16, 0.16)
LETTER_INTRO = "Each line below gives a number and its letter."
LETTER_ASK = "Give the letter for each of these numbers: "
DRILL_ASK = "Give the number for each of these keys: "
LONG_QUESTIONS = 4

Message = dict[str, str]


def byte_vocab() -> dict[str, int]:
    """GPT-2's byte-to-character map as a vocabulary: byte ``b`` has id ``b``."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return {chars[b]: b for b in range(256)}


def encode_chat(messages: Sequence[Message], generation_prompt: bool = False) -> tuple[
        list[int], list[bool]]:  # fmt: skip
    """Token ids of ``CHAT_TEMPLATE`` applied to ``messages``, and which ids carry loss."""
    ids, loss = [SPECIAL_ID[BOS]], [False]
    for message in messages:
        head = [SPECIAL_ID[HEADER_START], *message["role"].encode(), SPECIAL_ID[HEADER_END], 10]
        body = [*message["content"].encode(), SPECIAL_ID[EOT]]
        ids += head + body
        loss += [False] * len(head) + [message["role"] == "assistant"] * len(body)
    if generation_prompt:
        tail = [SPECIAL_ID[HEADER_START], *b"assistant", SPECIAL_ID[HEADER_END], 10]
        ids, loss = ids + tail, loss + [False] * len(tail)
    return ids, loss


def arith_chat(rng: random.Random) -> list[Message]:
    """One chained-arithmetic conversation at a random level, in the GSM8K eval's prompt."""
    ex = tasks.arith_example(rng, rng.choice(list(tasks.ARITH_LEVELS)))
    return [{"role": "user", "content": gsm8k_prompt(ex.question)},
            {"role": "assistant", "content": tasks.numeric_response(ex)}]  # fmt: skip


def mcq_chat(rng: random.Random) -> list[Message]:
    """One multiplication question with shuffled options, in the GPQA eval's prompt."""
    ex = tasks.mcq_example(rng, rng.choice(list(tasks.MCQ_LEVELS)))
    options = [ex.gold, *ex.distractors]
    rng.shuffle(options)
    return [{"role": "user", "content": gpqa_prompt(ex.question, options)},
            {"role": "assistant", "content": tasks.mcq_response(ex, options, LETTERS)}]  # fmt: skip


Entries = tasks.Entries


def retrieval_chat(rng: random.Random, lines: int, questions: int,
                   listing: tuple[Entries, Entries] | None = None) -> list[Message]:  # fmt: skip
    """A list of ``lines`` entries whose keys are asked ``questions`` times (list in turn 1)."""
    entries, keyed = listing or tasks.haystack(rng, lines, rng.randint(4, len(tasks.KEYS)))
    messages = []
    for turn, (key, value) in enumerate(rng.sample(keyed, min(questions, len(keyed)))):
        question = tasks.retrieval_question(entries, key) if turn == 0 else tasks.retrieval_ask(key)
        answer = tasks.numeric_response(tasks.Example(question, tasks.entry_text(key, value),
                                                      str(value)))  # fmt: skip
        messages += [{"role": "user", "content": gsm8k_prompt(question)},
                     {"role": "assistant", "content": answer}]  # fmt: skip
    return messages


def drill_turn(rng: random.Random, keyed: Entries) -> list[Message]:
    """One user turn asking every key at once, and one ``K=7`` answer line per key."""
    asked = rng.sample(keyed, len(keyed))
    return [{"role": "user", "content": DRILL_ASK + ", ".join(k for k, _ in asked)},
            {"role": "assistant",
             "content": "\n".join(tasks.entry_text(k, v) for k, v in asked)}]  # fmt: skip


def drill_chat(rng: random.Random, lines: int) -> list[Message]:
    """A list of ``lines`` entries in the first turn, then all its keys asked in one turn."""
    entries, keyed = tasks.haystack(rng, lines, min(lines, rng.randint(8, len(tasks.KEYS))))
    body = "\n".join(tasks.entry_text(n, v) for n, v in entries)
    turn = drill_turn(rng, keyed)
    turn[0]["content"] = f"{tasks.RETRIEVAL_INTRO}\n{body}\n{turn[0]['content']}"
    return turn


def letter_drill_chat(rng: random.Random) -> list[Message]:
    """Two or three multiple-choice option sets as ``number=letter`` lines, every number asked."""
    numbers: list[str] = []
    for _ in range(rng.randint(2, 3)):
        ex = tasks.mcq_example(rng, rng.choice(list(tasks.MCQ_LEVELS)))
        numbers += [n for n in (ex.gold, *ex.distractors) if n not in numbers]
    lines = list(zip(numbers, rng.sample(tasks.KEYS, len(numbers)), strict=True))
    asked = rng.sample(lines, len(lines))
    body = "\n".join(f"{n}={k}" for n, k in lines)
    return [{"role": "user", "content": f"{LETTER_INTRO}\n{body}\n{LETTER_ASK}"
                                        + ", ".join(n for n, _ in asked)},
            {"role": "assistant", "content": "\n".join(f"{n}={k}" for n, k in asked)}]  # fmt: skip


def short_chat(rng: random.Random) -> tuple[int, list[Message]]:
    """A task drawn by ``SHORT_MIX`` and one conversation of it (lists of 8-180 lines)."""
    task = rng.choices(range(len(TASKS)), weights=SHORT_MIX)[0]
    if task == 0:
        return task, arith_chat(rng)
    if task == 1:
        return task, mcq_chat(rng)
    lines = int(math.exp(rng.uniform(math.log(30), math.log(180))))
    if task == 2:
        return task, retrieval_chat(rng, lines, rng.randint(2, 6))
    if task == 3:
        return task, drill_chat(rng, lines)
    return task, letter_drill_chat(rng)


@dataclass
class Row:
    """One packed training row: ids, loss mask and the task of each id (-1: no loss)."""

    ids: list[int]
    loss: list[bool]
    task: list[int]


def pack_row(length: int, draw: Callable[[], tuple[int, list[Message]]],
             skip: Callable[[list[Message]], bool]) -> Row:  # fmt: skip
    """Whole conversations from ``draw`` until the next would not fit; padding after them."""
    row = Row([], [], [])
    while True:
        task, messages = draw()
        if skip(messages):
            continue
        ids, loss = encode_chat(messages)
        if len(ids) > length:
            continue
        if len(row.ids) + len(ids) > length:
            break
        row.ids += ids
        row.loss += loss
        row.task += [task if flag else -1 for flag in loss]
    pad = length - len(row.ids)
    return Row(row.ids + [SPECIAL_ID[PAD]] * pad, row.loss + [False] * pad, row.task + [-1] * pad)


def long_row(rng: random.Random, length: int) -> Row:
    """One retrieval conversation whose list fills 60-100% of a ``length``-token row.

    A drill turn asking every key of the list again follows the questions.
    """
    room = length - LONG_QUESTIONS * 300 - 26 * 8 - len(gsm8k_prompt("")) - 60
    lines = max(32, int(room * rng.uniform(0.6, 1.0)) // tasks.CHARS_PER_LINE)
    entries, keyed = tasks.haystack(rng, lines, rng.randint(8, len(tasks.KEYS)))
    chat = retrieval_chat(rng, lines, LONG_QUESTIONS, (entries, keyed))
    ids, loss = encode_chat(chat + drill_turn(rng, keyed))
    task = [(3 if i >= len(encode_chat(chat)[0]) else 2) if f else -1 for i, f in enumerate(loss)]
    pad = max(0, length - len(ids))
    return Row((ids + [SPECIAL_ID[PAD]] * pad)[:length], (loss + [False] * pad)[:length],
               (task + [-1] * pad)[:length])  # fmt: skip


def batch_plan(step: int, steps: int, seed: int) -> int:
    """The row length of training step ``step`` of ``steps`` (``SHORT_LEN`` or a long one)."""
    frac = step / max(1, steps)
    rng = random.Random(f"{seed}:plan:{step}")
    if frac < 0.25 or rng.random() >= 0.4:
        return SHORT_LEN
    longest = min(len(LONG_LENS) - 1, int((frac - 0.25) / 0.15))
    return rng.choice(LONG_LENS[: longest + 1])


def batch_rows(step: int, steps: int, seed: int, tokens: int,
               held_out: set[str] | frozenset[str] = frozenset(),
               max_len: int | None = None) -> list[Row]:  # fmt: skip
    """The rows of one training step (about ``tokens`` tokens), reproducible from its index.

    ``max_len`` caps the row length (a CPU check packs short rows only).
    """
    length = min(batch_plan(step, steps, seed), max_len or LONG_LENS[-1])
    rng = random.Random(f"{seed}:rows:{step}")
    count = max(1, tokens // length)
    if length > SHORT_LEN:
        return [long_row(rng, length) for _ in range(count)]

    def seen(messages: list[Message]) -> bool:
        return any(q in messages[0]["content"] for q in held_out) if held_out else False

    return [pack_row(length, lambda: short_chat(rng), seen) for _ in range(count)]


def spec_steps(matches: Sequence[bool], draft_tokens: int = 3) -> int:
    """Verify steps chain speculative decoding at temperature 0 needs for ``len(matches)`` tokens.

    ``matches[j]`` says whether the draft's greedy token after the target's first ``j`` tokens
    equals the target's token ``j``. A step accepts the drafted tokens up to the first miss (at
    most ``draft_tokens``) and adds the target's own next token, so a draft that keeps matching
    only ever sees the target's prefix and one teacher-forced draft pass decides every step.

    Args:
        matches: per completion token, draft argmax == target token.
        draft_tokens: drafted tokens per step (SGLang's ``--speculative-num-steps``).

    Returns:
        The number of verify steps; tokens / steps is the accept length.
    """
    pos, steps = 0, 0
    while pos < len(matches):
        accepted = 0
        while accepted < draft_tokens and pos + accepted < len(matches) and matches[pos + accepted]:
            accepted += 1
        pos += accepted + 1
        steps += 1
    return steps
