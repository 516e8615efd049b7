"""Token counts of a long-context prompt in the served model's own tokens.

A long-context eval's lengths (4k ... 128k) are counted as the server counts a chat request's
``prompt_tokens``, so a 64k question is 64k tokens to the model that answers it. Three counters:

- ``sim``: the simulated server (``pipeline/simserver/jobs.py`` ``parse_chat``): the
  whitespace-separated words of every message plus 4 per message.
- ``bytes``: ``model=synth_llama``'s byte-level tokenizer (``benchmarks/live_h200/synth_train.py``):
  one token per UTF-8 byte, its chat template's six special tokens and 15 bytes of role names
  around one user message. Equal to ``hf`` on that tokenizer (a unit test checks it) and needs no
  ``transformers``.
- ``hf``: any HF tokenizer with its chat template (``evals.chat_tokens``), as SGLang renders a
  chat request: ``model.tokenizer_path``, else ``model.path``.

``auto`` (the default of ``conf/evals/longctx.yaml``) is ``sim`` on the simulated server, else
``hf``. Every counter also counts pieces alone (``pieces``): a haystack is filled by summing its
units' counts and then corrected by counting the whole prompt (``evals.longctx_fit``).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evals.chat_tokens import TOKENIZER_FILES, chat_ids, load_tokenizer

COUNTERS = ("auto", "sim", "bytes", "hf")
SIM_TOKENS_PER_MESSAGE = 4  # pipeline/simserver/jobs.py parse_chat
# synth_llama's template around one user message: <|begin_of_text|><|start_header|>user
# <|end_header|>\n ... <|eot|><|start_header|>assistant<|end_header|>\n: 6 specials, 15 bytes.
BYTE_CHAT_OVERHEAD = 6 + len("user\n") + len("assistant\n")


class TokenCounter(Protocol):
    """Counts one user message's prompt tokens, and pieces of text alone."""

    @property
    def name(self) -> str:
        """How the count is made: sim | bytes | hf."""
        ...

    @property
    def identity(self) -> str:
        """What the counts depend on (hf: the tokenizer's files), for the question cache."""
        ...

    def chat(self, content: str) -> int:
        """Prompt tokens of a chat request whose one message is ``content`` from the user."""
        ...

    def pieces(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text on its own (no template, no special tokens)."""
        ...


@dataclass(frozen=True)
class SimCounter:
    """The simulated server's count: words plus 4 per message."""

    name: str = "sim"
    identity: str = "sim"

    def chat(self, content: str) -> int:
        """Words of ``content`` plus the per-message 4."""
        return len(content.split()) + SIM_TOKENS_PER_MESSAGE

    def pieces(self, texts: Sequence[str]) -> list[int]:
        """Words of each text."""
        return [len(t.split()) for t in texts]


@dataclass(frozen=True)
class ByteCounter:
    """synth_llama's byte-level tokenizer: a token per UTF-8 byte plus its chat template."""

    name: str = "bytes"
    identity: str = "bytes"

    def chat(self, content: str) -> int:
        """Bytes of ``content`` plus the template's tokens around one user message."""
        return len(content.encode("utf-8")) + BYTE_CHAT_OVERHEAD

    def pieces(self, texts: Sequence[str]) -> list[int]:
        """Bytes of each text."""
        return [len(t.encode("utf-8")) for t in texts]


@dataclass(frozen=True)
class HfCounter:
    """An HF tokenizer with its chat template, as SGLang renders a chat request."""

    tokenizer: Any
    identity: str  # "hf:" and a digest of the tokenizer's files
    name: str = "hf"

    def chat(self, content: str) -> int:
        """Ids of the one-message chat prompt, generation prompt added."""
        return len(chat_ids(self.tokenizer, [{"role": "user", "content": content}]))

    def pieces(self, texts: Sequence[str]) -> list[int]:
        """Ids of each text without special tokens (one batched call)."""
        if not texts:
            return []
        ids = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(i) for i in ids]


def counter_for(tokens: str, server_kind: str, tokenizer_path: str | None) -> TokenCounter:
    """The counter a long-context eval's ``tokens`` setting names.

    Args:
        tokens: ``auto`` | ``sim`` | ``bytes`` | ``hf``.
        server_kind: the cell's ``server.kind`` (``auto`` on ``simulated`` counts as it does).
        tokenizer_path: the folder ``hf`` reads (``model.tokenizer_path``, else ``model.path``).

    Raises:
        ValueError: an unknown setting, or no local tokenizer for ``hf`` (naming the fix).
    """
    if tokens not in COUNTERS:
        raise ValueError(f"longctx.tokens={tokens!r} is unknown: use one of {', '.join(COUNTERS)}")
    if tokens == "sim" or (tokens == "auto" and server_kind == "simulated"):
        return SimCounter()
    if tokens == "bytes":
        return ByteCounter()
    return HfCounter(_tokenizer(tokenizer_path), f"hf:{files_digest(tokenizer_path)}")


def files_digest(folder: str | None) -> str:
    """A digest of the tokenizer files and chat template in ``folder`` (what the counts read)."""
    digest = hashlib.sha256()
    for name in (*TOKENIZER_FILES, "chat_template.jinja", "special_tokens_map.json"):
        path = Path(folder or ".") / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def _tokenizer(path: str | None) -> Any:
    """The HF tokenizer at ``path``, loaded once a process (a cell's six tasks share it)."""
    tok = load_tokenizer(path, "model.tokenizer_path / model.path")
    # Counting a 128k prompt is what it is for: no warning that it is longer than the model's.
    tok.model_max_length = 1 << 40
    return tok
