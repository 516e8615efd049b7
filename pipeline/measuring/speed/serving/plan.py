"""What the serving phase sends (pure): its levels, buckets and prompts.

A prompt is ``bucket`` words drawn from a list of common short English words (about one token
each under the usual BPE vocabularies) behind its own serial, so no two requests share a prefix
beyond the chat template's and the radix cache never turns a prompt into a hit. What the server
counted (``usage.prompt_tokens``) is recorded beside the nominal length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.config.schema import ServingConf

# Common words that BPE vocabularies hold whole (with their leading space).
_WORD_TEXT = (
    "the of and to in is was for on are with as his they be at one have this from or had by "
    "word but what some we can out other were all there when up use your how said an each she "
    "which do their time if will way about many then them write would like so these her long "
    "make thing see him two has look more day could go come did number sound no most people my "
    "over know water than call first who may down side been now find any new work part take "
    "get place made live where after back little only round man year came show every good me "
    "give our under name very through just form great think say help low line turn cause much "
    "mean before move right boy old too same tell does set three want air well also play small "
    "end put home read hand port large spell add even land here must big high such follow act"
)
WORDS = tuple(_WORD_TEXT.split())


@dataclass(frozen=True)
class Level:
    """One run: ``concurrency`` requests in flight over ``requests`` prompts of ``bucket``."""

    bucket: int
    concurrency: int
    requests: int


def levels(conf: ServingConf, context_len: int | None) -> tuple[list[Level], list[str]]:
    """Every (bucket, level) that fits the server's context, in order, and a note per other bucket.

    A level sends ``serving.requests`` prompts, at least twice its concurrency, so its batch is
    full for most of the run.
    """
    notes, out = [], []
    for bucket in conf.buckets:
        if context_len is not None and bucket + conf.output_tokens + 64 > context_len:
            notes.append(
                f"bucket {bucket} skipped: {bucket} + {conf.output_tokens} tokens exceed the "
                f"server's context of {context_len}"
            )
            continue
        out += [Level(bucket, c, max(conf.requests, 2 * c)) for c in conf.concurrency]
    return out, notes


def prompt_text(seed: int, serial: int, words: int) -> str:
    """Prompt number ``serial``: its own serial, then ``words`` random common words."""
    rng = np.random.default_rng([seed, serial])
    picks = rng.integers(0, len(WORDS), size=max(words - 4, 1))
    return f"Request {serial}: " + " ".join(WORDS[int(i)] for i in picks)


def chat_body(text: str, output_tokens: int) -> dict[str, object]:
    """A streaming chat request that decodes exactly ``output_tokens`` (EOS ignored)."""
    return {
        "messages": [{"role": "user", "content": text}],
        "max_tokens": output_tokens,
        "temperature": 0.0,
        "ignore_eos": True,  # every request decodes the same number of tokens
    }
