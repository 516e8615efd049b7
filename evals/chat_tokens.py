"""The token ids an eval's chat prompt becomes under the model's own tokenizer and chat template.

One code path for everything that needs the ids a cell's chat request turns into on the server:
SGLang renders ``/v1/chat/completions`` messages with the HF tokenizer's chat template
(``apply_chat_template``, generation prompt added), so this does the same with the same library.
Used by the speed phase's eval prompts (``speed.prompts=eval:NAME``) and by the live benchmarks
that run the trained model in HF (``benchmarks/live_h200/model_eval.py``, ``skip_fraction.py``).

``transformers`` is imported only here and only when called: SGLang brings it on a GPU host; the
dev extra has it for the CPU tests.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from evals.sample_line import ChatMessage

# What a local folder must hold for AutoTokenizer to load it without the hub.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


class TokenizerError(ValueError):
    """No tokenizer to load: the message names the setting and the fix."""


def tokenizer_problem(path: str | None, key: str) -> str | None:
    """Why ``path`` (the value of config ``key``) holds no local tokenizer, or None when it does."""
    if not path:
        return (
            f"{key} is unset: set model.tokenizer_path to a local folder with the model's tokenizer"
        )
    folder = Path(path)
    if not folder.is_dir():
        return (
            f"{key}={path!r} is not a local folder, so its tokenizer cannot be read here: set "
            "model.tokenizer_path to a folder with the model's tokenizer.json (and chat template)"
        )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return (
            f"{key}={path!r} holds none of {', '.join(TOKENIZER_FILES)}: set "
            "model.tokenizer_path to a folder with the model's tokenizer"
        )
    if importlib.util.find_spec("transformers") is None:
        return (
            f"reading the tokenizer of {key}={path!r} needs transformers: pip install transformers"
        )
    return None


def load_tokenizer(path: str | None, key: str) -> Any:
    """The HF tokenizer of the local folder ``path`` (config ``key``), chat template included.

    Raises:
        TokenizerError: no local tokenizer there, or ``transformers`` is not installed (SGLang
            installs it).
    """
    problem = tokenizer_problem(path, key)
    if problem is not None:
        raise TokenizerError(problem)
    from transformers import AutoTokenizer  # found by tokenizer_problem

    return AutoTokenizer.from_pretrained(path)


def chat_ids(
    tok: Any, messages: list[ChatMessage], template_kwargs: dict[str, Any] | None = None
) -> list[int]:
    """The prompt ids of ``messages`` as SGLang's chat endpoint builds them (generation prompt on).

    Args:
        tok: an HF tokenizer (``load_tokenizer``).
        messages: the chat messages of one request.
        template_kwargs: ``model.chat_template_kwargs``, which the cell sends with each request.
    """
    ids = tok.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=True, return_dict=False,
        **(template_kwargs or {}),
    )  # fmt: skip
    return list(ids["input_ids"]) if not isinstance(ids, list) else list(ids)
