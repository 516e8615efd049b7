"""Follow-up questions on a long question's own haystack: more whole-key lookups a row (pure).

A long row of the 2026-12-06 recipe holds one long-context question and its one worked reply, the
rest of the row short synthetic chats: at 32k, about 100 answer bytes of retrieval in 32,768. The
model learnt to copy *a* needle, not the asked one (``reply_copy.py``'s reading of its replies).
A follow-up asks, in a later turn over the same haystack, for another needle's number (every
other key of a multi-key question, each key of a multi-query one) or for the other variable
chain's names: the same context, another key, another answer, which is what tells the keys
apart. Follow-ups only use the room the row would fill with short chats; the long question's
length is drawn as before (``longctx_stream.long_row``), and the eval asks no follow-up.
"""

from __future__ import annotations

import random
import re

from benchmarks.live_h200.synth_train import Message
from evals.longctx_tasks import FINAL, Sample, niah_question, vt_question

# What one follow-up takes in a row, chat tokens included: a vt question (about 175 bytes) and its
# five-line reply (about 155) are the longest; a needle's about 250.
FOLLOW_UP_ROOM = 400
NEEDLE = re.compile(r"One of the special magic numbers for (\S+) is: (\d+)\.")
ASSIGN = re.compile(r"VAR (\w+) = (?:VAR (\w+)|(\d+))\.")


def follow_ups(sample: Sample, rng: random.Random, most: int) -> list[Message]:
    """Up to ``most`` follow-up turns (user, then worked assistant reply) on ``sample``'s text.

    Multi-key: each other key's number; multi-query: each key's alone; vt: the other chain; the
    other tasks have none (one key, or nothing to quote). Drawn in ``rng``'s order.
    """
    if most <= 0:
        return []
    if sample.task in ("niah_multikey", "niah_multiquery"):
        pairs = _needle_pairs(sample)
    elif sample.task == "vt":
        pairs = _chain_pairs(sample)
    else:
        return []
    rng.shuffle(pairs)
    return [m for question, reply in pairs[:most]
            for m in ({"role": "user", "content": question},
                      {"role": "assistant", "content": reply})]  # fmt: skip


def _needle_pairs(sample: Sample) -> list[tuple[str, str]]:
    """A question and worked reply per needle the first question did not ask alone."""
    pairs = []
    for line in sample.text.split("\n"):
        m = NEEDLE.fullmatch(line)
        if m and (sample.task == "niah_multiquery" or line not in sample.evidence):
            question = niah_question(f"the special magic number for {m[1]}", many=False)
            pairs.append((question, f"{line}\n{FINAL} {m[2]}."))
    return pairs


def _chain_pairs(sample: Sample) -> list[tuple[str, str]]:
    """A question and worked reply per chain whose value the first question did not ask."""
    lines = [ln for ln in sample.text.split("\n") if ASSIGN.fullmatch(ln)]
    copies = {m[2]: (m[1], ln) for ln in lines if (m := ASSIGN.fullmatch(ln)) and m[2]}
    pairs = []
    for line in lines:
        m = ASSIGN.fullmatch(line)
        if not m or not m[3] or line in sample.evidence:
            continue
        names, chain = [m[1]], [line]
        while names[-1] in copies:
            name, step = copies[names[-1]]
            names, chain = [*names, name], [*chain, step]
        reply = "\n".join([*chain, f"{FINAL} {', '.join(names)}."])
        pairs.append((vt_question(m[3]), reply))
    return pairs
