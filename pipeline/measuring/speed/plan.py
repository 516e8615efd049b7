"""What the speed phase sends (pure): the shapes to time, their prompts and request bodies.

A shape is a phase (``prefill``: one new token; ``decode``: many, EOS ignored), a batch (prompts
sent together in one ``/generate`` call) and the prompt's length. Prompts are random token ids,
each request's first id its own, so no two requests share a prefix and the radix cache never
turns a prefill into a cache hit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.config.schema import SpeedConf

PREFILL, DECODE = "prefill", "decode"


@dataclass(frozen=True)
class SpeedShape:
    """One thing timed: ``batch`` prompts of ``prompt_tokens`` ids, ``new_tokens`` each."""

    phase: str  # prefill | decode
    batch: int
    prompt_tokens: int
    new_tokens: int

    @property
    def label(self) -> str:
        """``prefill 8 x 1024``: how notes and the console name it."""
        return f"{self.phase} {self.batch} x {self.prompt_tokens}"


@dataclass(frozen=True)
class TokenRange:
    """Where prompt ids come from: ``[low, high)`` of the tokenizer's vocabulary."""

    low: int
    high: int
    source: str  # speed.vocab_size | the model's config.json | default


def wanted_shapes(conf: SpeedConf) -> list[SpeedShape]:
    """Every shape ``conf`` asks for, in the order they run: prefill, batched prefill, decode."""
    single = [SpeedShape(PREFILL, 1, tokens, 1) for tokens in conf.prefill_tokens]
    batched = [SpeedShape(PREFILL, b, conf.prefill_batch_tokens, 1) for b in conf.prefill_batches]
    decode = [
        SpeedShape(DECODE, b, conf.decode_prompt_tokens, conf.decode_new_tokens)
        for b in conf.decode_batches
    ]
    return single + batched + decode


def fitting_shapes(
    shapes: list[SpeedShape], context_len: int | None
) -> tuple[list[SpeedShape], list[str]]:
    """The shapes whose prompt and new tokens fit the server's context, and a note per other one.

    Args:
        shapes: the shapes asked for.
        context_len: the server's ``max_model_len`` (None: unknown, every shape is kept).
    """
    if context_len is None:
        return list(shapes), []
    kept = [s for s in shapes if s.prompt_tokens + s.new_tokens <= context_len]
    notes = [
        f"{s.label} skipped: {s.prompt_tokens} + {s.new_tokens} tokens exceed the server's "
        f"context of {context_len} (max_model_len of /v1/models)"
        for s in shapes
        if s not in kept
    ]
    return kept, notes


def prompt_ids(ids: TokenRange, seed: int, serial: int, length: int) -> list[int]:
    """The token ids of request number ``serial``: its own first id, then random ones.

    The same (seed, serial, length) gives the same prompt, so every variant of a sweep prefills
    identical prompts.
    """
    span = ids.high - ids.low
    rng = np.random.default_rng([seed, serial])
    rest = rng.integers(ids.low, ids.high, size=max(length - 1, 0))
    return [ids.low + serial % span, *(int(i) for i in rest)]


def generate_body(shape: SpeedShape, prompts: list[list[int]]) -> dict[str, Any]:
    """The native ``/generate`` body: one prompt as a request, several as one batch."""
    return {
        "input_ids": prompts[0] if shape.batch == 1 else prompts,
        "sampling_params": {
            "max_new_tokens": shape.new_tokens,
            "ignore_eos": True,  # every request decodes the same number of tokens
            "temperature": 0.0,
        },
    }


def vocab_range(conf: SpeedConf, model_vocab: int | None) -> TokenRange:
    """The id range prompts are drawn from: ``speed.vocab_size``, the model's, or 32000.

    Raises:
        ValueError: the vocabulary ends at or below ``speed.first_token_id``.
    """
    if conf.vocab_size is not None:
        high, source = conf.vocab_size, "speed.vocab_size"
    elif model_vocab is not None:
        high, source = model_vocab, "vocab_size of the model's config.json"
    else:
        high, source = 32000, "default (no speed.vocab_size and no local config.json)"
    if high <= conf.first_token_id:
        raise ValueError(
            f"the vocabulary ({high} ids, {source}) ends at or below "
            f"speed.first_token_id={conf.first_token_id}: lower speed.first_token_id"
        )
    return TokenRange(conf.first_token_id, high, source)
