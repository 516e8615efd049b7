"""The speed phase's plan (pure): shapes, what fits the context, prompts, bodies, the vocabulary."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.config.schema import SpeedConf
from pipeline.measuring.speed.plan import (
    DECODE,
    PREFILL,
    SpeedShape,
    TokenRange,
    fitting_shapes,
    generate_body,
    prompt_ids,
    vocab_range,
    wanted_shapes,
)


def test_the_default_shapes_are_the_five_lengths_the_batch_and_three_decode_batches() -> None:
    shapes = wanted_shapes(SpeedConf())
    assert [(s.phase, s.batch, s.prompt_tokens, s.new_tokens) for s in shapes] == [
        (PREFILL, 1, 1024, 1), (PREFILL, 1, 4096, 1), (PREFILL, 1, 16384, 1),
        (PREFILL, 1, 65536, 1), (PREFILL, 1, 131072, 1), (PREFILL, 8, 1024, 1),
        (DECODE, 1, 512, 256), (DECODE, 8, 512, 256), (DECODE, 32, 512, 256),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("context", "kept", "skipped"),
    [
        (None, [1024, 131072], []),  # unknown context: everything is tried
        (131073, [1024, 131072], []),  # 131072 + 1 new token fits exactly
        (131072, [1024], ["prefill 1 x 131072"]),
        (1024, [], ["prefill 1 x 1024", "prefill 1 x 131072"]),  # 1024 + 1 > 1024
    ],
)
def test_a_shape_longer_than_the_context_is_skipped_with_a_note(
    context: int | None, kept: list[int], skipped: list[str]
) -> None:
    shapes = [SpeedShape(PREFILL, 1, n, 1) for n in (1024, 131072)]
    fits, notes = fitting_shapes(shapes, context)
    assert [s.prompt_tokens for s in fits] == kept
    assert [n.split(" skipped")[0] for n in notes] == skipped
    assert all(f"context of {context}" in n for n in notes)


def test_every_request_has_its_own_first_id_and_a_repeatable_prompt() -> None:
    ids = TokenRange(1000, 1010, "test")
    prompts = [prompt_ids(ids, 0, serial, 50) for serial in range(10)]
    assert len({p[0] for p in prompts}) == 10  # no two share a prefix: no radix-cache hit
    assert all(len(p) == 50 and all(1000 <= i < 1010 for i in p) for p in prompts)
    assert prompt_ids(ids, 0, 3, 50) == prompts[3]  # every variant prefills the same prompts
    assert prompt_ids(ids, 1, 3, 50) != prompts[3]
    assert prompt_ids(ids, 0, 3, 1) == [1003]


@pytest.mark.parametrize(("batch", "flat"), [(1, True), (4, False)])
def test_one_prompt_is_a_request_and_several_are_a_batch(batch: int, flat: bool) -> None:
    prompts = [[1, 2], [3, 4], [5, 6], [7, 8]][:batch]
    body = generate_body(SpeedShape(DECODE, batch, 2, 256), prompts)
    assert body["input_ids"] == (prompts[0] if flat else prompts)
    assert body["sampling_params"] == {"max_new_tokens": 256, "ignore_eos": True,
                                       "temperature": 0.0}  # fmt: skip


@pytest.mark.parametrize(
    ("vocab_size", "model_vocab", "want"),
    [
        (50000, 128256, (50000, "speed.vocab_size")),
        (None, 128256, (128256, "vocab_size of the model's config.json")),
        (None, None, (32000, "default (no speed.vocab_size and no local config.json)")),
    ],
)
def test_the_vocabulary_comes_from_the_config_the_model_or_a_default(
    vocab_size: int | None, model_vocab: int | None, want: tuple[int, str]
) -> None:
    found = vocab_range(dataclasses.replace(SpeedConf(), vocab_size=vocab_size), model_vocab)
    assert (found.low, found.high, found.source) == (1000, *want)


def test_a_vocabulary_below_the_first_id_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"lower speed\.first_token_id"):
        vocab_range(SpeedConf(), 900)
