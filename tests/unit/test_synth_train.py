"""The trained model's training stream: chat encoding, packed rows, curriculum, accept steps."""

from __future__ import annotations

import random

import jinja2
import pytest

from benchmarks.live_h200 import synth_train as st
from benchmarks.live_h200.synth_data import held_out_questions

SPECIAL_BY_TEXT = {token: i for token, i in st.SPECIAL_ID.items()}


def render_ids(messages: list[dict[str, str]], generation_prompt: bool) -> list[int]:
    """CHAT_TEMPLATE rendered by jinja2 (as transformers does), then tokenized byte by byte."""
    text = jinja2.Template(st.CHAT_TEMPLATE).render(
        messages=messages, bos_token=st.BOS, add_generation_prompt=generation_prompt
    )
    ids, pos = [], 0
    while pos < len(text):
        special = next((t for t in SPECIAL_BY_TEXT if text.startswith(t, pos)), None)
        if special:
            ids.append(SPECIAL_BY_TEXT[special])
            pos += len(special)
        else:
            ids += list(text[pos].encode())
            pos += 1
    return ids


@pytest.mark.parametrize("generation_prompt", [False, True])
def test_encode_chat_equals_the_chat_template(generation_prompt: bool) -> None:
    rng = random.Random(1)
    for messages in (st.arith_chat(rng), st.mcq_chat(rng), st.retrieval_chat(rng, 20, 3),
                     [{"role": "user", "content": "naïve 7 x 46?"}]):  # fmt: skip
        ids, loss = st.encode_chat(messages, generation_prompt)
        assert ids == render_ids(messages, generation_prompt)
        assert len(loss) == len(ids)


def test_loss_falls_on_assistant_turns_and_their_end_only() -> None:
    messages = st.retrieval_chat(random.Random(2), 30, 3)
    ids, loss = st.encode_chat(messages)
    taught = bytes(i for i, f in zip(ids, loss, strict=True) if f and i < 256).decode()
    assert taught == "".join(m["content"] for m in messages if m["role"] == "assistant")
    assert sum(f for i, f in zip(ids, loss, strict=True) if i == st.SPECIAL_ID[st.EOT]) == 3


def test_byte_vocab_maps_every_byte_to_its_own_id() -> None:
    vocab = st.byte_vocab()
    assert sorted(vocab.values()) == list(range(256)) and len(set(vocab)) == 256
    assert st.VOCAB_SIZE == 264 and min(st.SPECIAL_ID.values()) == 256


def test_rows_are_reproducible_full_length_and_hold_no_eval_question() -> None:
    held = frozenset(q for q in held_out_questions() if len(q) < 1000)
    first = st.batch_rows(3, 100, 0, 16384, held)
    assert [r.ids for r in first] == [r.ids for r in st.batch_rows(3, 100, 0, 16384, held)]
    assert all(len(r.ids) == st.SHORT_LEN for r in first)
    text = "".join(bytes(i for i in r.ids if i < 256).decode() for r in first)
    assert not any(q in text for q in held if q.startswith("What is"))


@pytest.mark.parametrize(
    ("step", "steps", "allowed"),
    [(0, 100, {2048}), (24, 100, {2048}), (30, 100, {2048, 4096}),
     (95, 100, {2048, *st.LONG_LENS})],
)  # fmt: skip
def test_curriculum_starts_short_and_grows(step: int, steps: int, allowed: set[int]) -> None:
    seen = {st.batch_plan(step, steps, seed) for seed in range(60)}
    assert seen <= allowed and 2048 in seen


def test_long_rows_end_with_a_drill_over_the_same_list() -> None:
    row = st.long_row(random.Random(4), 8192)
    assert len(row.ids) == 8192 and 3 in row.task and 2 in row.task
    text = bytes(i for i in row.ids if i < 256).decode()
    assert st.DRILL_ASK in text and text.count(st.tasks.RETRIEVAL_INTRO) == 1


@pytest.mark.parametrize(
    ("matches", "steps"),
    [([True] * 8, 2), ([False] * 5, 5), ([True, True, True, False, True], 2),
     ([True, False, True, True, True, True], 2), ([False, True, True, True, True], 2),
     ([], 0), ([True] * 3, 1)],
)  # fmt: skip
def test_spec_steps(matches: list[bool], steps: int) -> None:
    assert st.spec_steps(matches) == steps
