"""The training stream of the long-context model (issue 41; pure, no torch).

Rows are packed byte-level chats (``synth_train.encode_chat``: loss on assistant turns and their
``<|eot|>`` only) of two kinds:

- the long-context tasks (``evals.longctx_tasks``: the six RULER-style tasks, generated in bytes,
  from seeds the eval never draws: ``TRAIN_SEED_BASE`` and up, the eval's is 0);
- the existing synthetic tasks (``synth_train.short_chat``: arithmetic, multiple choice, retrieval
  and the lookup drills), which fill every row after its long conversation, so every row carries
  dense supervision besides the one short long-context answer.

The length curriculum (``row_length``): the row length of step ``s`` of ``n`` grows through
``LENGTHS`` (2k -> 32k): during the first ``WARM`` of the steps every row is 2,048 tokens; after
that each step draws its length from the lengths unlocked so far (one more every ``STAGE`` of the
steps), so the last 15% of the run sees 32k rows on about half its steps. A step holds about
``tokens`` tokens: one 32k row, or sixteen 2k rows at 32k tokens a step.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.live_h200 import longctx_followups as lf
from benchmarks.live_h200 import synth_train as st
from evals.longctx_tasks import TASKS, sample, worked_reply
from evals.longctx_tokens import ByteCounter

LENGTHS = (2048, 4096, 8192, 16384, 32768)
# The first lease (2026-12-05, H100) ran 1,500 steps with WARM 0.15, STAGE 0.12 and a long question
# in a third of the 2k rows: the long-context loss sat at 1.1 from step 300 on and every task scored
# 0.0 at every length (benchmarks/results/live-h200/longctx-model-0.5.23/). Retrieval is learnt at
# short length from many questions first, so the 2k stage is longer and two rows in three hold one.
WARM = 0.4
STAGE = 0.15
LONG_SHARE_2K = 2 / 3
TRAIN_SEED_BASE = 1000  # the eval draws from seed 0: training questions are other questions
MIN_TASK_LENGTH = 1024  # every task's prompt without haystack fits in 1,024 bytes
REPLY_ROOM = 448  # the worked reply: up to four quoted needles (about 260 bytes) and the answer
LONG_TASK = len(st.TASKS)  # task index of the long-context conversations in Row.task
TASK_NAMES = (*st.TASKS, "longctx")


def row_length(step: int, steps: int, seed: int) -> int:
    """The row length of training step ``step`` of ``steps`` (one of ``LENGTHS``)."""
    frac = step / max(1, steps)
    if frac < WARM:
        return LENGTHS[0]
    unlocked = min(len(LENGTHS), 2 + int((frac - WARM) / STAGE))
    rng = random.Random(f"{seed}:len:{step}")
    # The longest unlocked length half the time: long rows are what the run is for.
    return LENGTHS[unlocked - 1] if rng.random() < 0.5 else rng.choice(LENGTHS[:unlocked])


MULTI_NEEDLE = ("niah_multikey", "niah_multivalue", "niah_multiquery")


@dataclass(frozen=True)
class Mix:
    """Which long-context questions the rows hold; the defaults are the recipe of 2026-12-06.

    ``multi_needle_weight``: the multi-needle NIAH tasks' weight against 1 for each other task.
    ``confusable``: the share of multi-key questions whose keys differ in one word
    (``evals.longctx_tasks.confusable_keys``). ``follow_ups``: at most this many later turns on
    the same haystack (``longctx_followups``), as many as the row's room after the question holds.
    At the defaults the stream draws exactly as before.
    """

    multi_needle_weight: float = 1.0
    confusable: float = 0.0
    follow_ups: int = 0

    def task(self, rng: random.Random) -> str:
        """The next question's task."""
        if self.multi_needle_weight == 1.0:
            return rng.choice(TASKS)
        weights = [self.multi_needle_weight if t in MULTI_NEEDLE else 1.0 for t in TASKS]
        return rng.choices(TASKS, weights=weights)[0]

    def confuse(self, rng: random.Random) -> bool:
        """Whether the next question's keys are confusable."""
        return self.confusable > 0 and rng.random() < self.confusable


RECIPE_MIX = Mix()


def longctx_chat(
    rng: random.Random, length: int, seed: int, mix: Mix = RECIPE_MIX, follow_ups: int = 0
) -> list[st.Message] | None:
    """One long-context question whose prompt is at most ``length`` bytes, and its graded reply.

    Then up to ``follow_ups`` follow-up turns on the same text (``FOLLOW_UP_ROOM`` bytes each).
    None when no task fits (rows under about 600 tokens: most tasks' fixed text is longer).
    """
    counter = ByteCounter()
    for _ in range(8):  # fwe refuses a few lengths (a tie for third place): draw another
        task, confuse = mix.task(rng), mix.confuse(rng)
        try:
            s = sample(task, length, TRAIN_SEED_BASE + seed, rng.randrange(1 << 30), counter,
                       confuse)  # fmt: skip
        except ValueError:
            continue
        return [{"role": "user", "content": s.text},
                {"role": "assistant", "content": worked_reply(s)},
                *lf.follow_ups(s, rng, follow_ups)]  # fmt: skip
    return None


Draw = Callable[[], tuple[int, list[st.Message]]]


def fill(row: st.Row, length: int, draw: Draw) -> st.Row:
    """``row``, then whole conversations from ``draw`` until the next would not fit, padded."""
    ids, loss, task = list(row.ids), list(row.loss), list(row.task)
    misses = 0
    while misses < 4:
        kind, messages = draw()
        more, flags = st.encode_chat(messages)
        if len(ids) + len(more) > length:
            misses += 1  # a shorter conversation may still fit
            continue
        ids, loss = ids + more, loss + flags
        task += [kind if f else -1 for f in flags]
    pad = length - len(ids)
    return st.Row(ids + [st.SPECIAL_ID[st.PAD]] * pad, loss + [False] * pad, task + [-1] * pad)


def long_row(
    rng: random.Random, length: int, seed: int, draw: Draw, mix: Mix = RECIPE_MIX
) -> st.Row:
    """A long-context conversation of 40-95% of ``length``, then chats from ``draw`` to the end."""
    # The prompt's budget leaves REPLY_ROOM for the reply and its chat tokens.
    room = length - REPLY_ROOM
    prompt = min(room, max(MIN_TASK_LENGTH, int(length * rng.uniform(0.4, 0.95))))
    # Follow-ups take the room short chats would, after a question as long as without them.
    more = min(mix.follow_ups, (room - prompt) // lf.FOLLOW_UP_ROOM)
    chat = longctx_chat(rng, prompt, seed, mix, more)
    if chat is None:
        return fill(st.Row([], [], []), length, draw)
    ids, flags = st.encode_chat(chat)
    start = st.Row(ids, flags, [LONG_TASK if f else -1 for f in flags])
    return fill(start, length, draw)


def short_row(
    rng: random.Random, length: int, seed: int, draw: Draw, mix: Mix = RECIPE_MIX
) -> st.Row:
    """Synthetic chats with a 1k-2k long-context question in ``LONG_SHARE_2K`` of the rows."""
    if rng.random() < LONG_SHARE_2K:
        return long_row(rng, length, seed, draw, mix)
    return fill(st.Row([], [], []), length, draw)


def batch_rows(step: int, steps: int, seed: int, tokens: int,
               held_out: frozenset[str] = frozenset(), max_len: int | None = None,
               mix: Mix = RECIPE_MIX) -> list[st.Row]:  # fmt: skip
    """The rows of training step ``step`` (about ``tokens`` tokens), reproducible from its index.

    ``held_out``: synthetic eval questions no row may hold. ``max_len`` caps the row length (a CPU
    check trains on short rows only). ``mix``: which long-context questions (``Mix``).
    """
    length = min(row_length(step, steps, seed), max_len or LENGTHS[-1])
    rng = random.Random(f"{seed}:longrows:{step}")

    def draw() -> tuple[int, list[st.Message]]:
        while True:
            task, messages = st.short_chat(rng)
            if not any(q in messages[0]["content"] for q in held_out):
                return task, messages

    make = short_row if length <= LENGTHS[0] else long_row
    return [make(rng, length, seed, draw, mix) for _ in range(max(1, tokens // length))]
