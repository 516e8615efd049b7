"""What ``speed.prompts`` names (pure): random token ids, or ``eval:NAME``, one of the cell's evals.

In the config layer so that the compose-time check and the sweep's pre-flight read it as the cell
does (``pipeline.measuring.speed.prompts`` builds the prompts). ``parity.prompts`` and
``serving.prompts`` read the same way (``key`` names the setting in messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from backends.backend_conf import ModelConf

RANDOM = "random"  # speed.prompts' default: random token ids (speed/plan.prompt_ids)
EVAL_PREFIX = "eval:"
SPEED_KEY = "speed.prompts"
SERVING_KEY = "serving.prompts"
# What ``random`` stands for where it is not random token ids (the message that names the fix).
RANDOM_MEANS = {SERVING_KEY: "random common words"}


class PromptSetting(Protocol):
    """A phase's prompt setting: ``speed``, ``parity`` and ``serving`` have these two fields."""

    enabled: bool
    prompts: str


def eval_name(prompts: str, key: str = SPEED_KEY) -> str | None:
    """The eval ``speed.prompts`` names (None for ``random``).

    Raises:
        ValueError: neither ``random`` nor ``eval:NAME``.
    """
    if prompts == RANDOM:
        return None
    name = prompts.removeprefix(EVAL_PREFIX)
    if name == prompts or not name:
        raise ValueError(
            f"{key}={prompts!r}: use {RANDOM} ({RANDOM_MEANS.get(key, 'random token ids')}) or "
            "eval:NAME (the prompts of the cell's eval NAME, e.g. eval:synth_retrieval)"
        )
    return name


def source_problems(conf: PromptSetting, evals: Sequence[str], key: str = SPEED_KEY) -> list[str]:
    """What is wrong with ``key`` (``speed.prompts``) against the cell's ``evals`` (empty: none)."""
    try:
        name = eval_name(conf.prompts, key)
    except ValueError as err:
        return [str(err)]
    if name is None or name in evals:
        return []
    return [
        f"{key}={conf.prompts} names an eval the cell does not run (evals="
        f"[{','.join(evals)}]): add {name} to evals, or name one of them"
    ]


def tokenizer_source(model: ModelConf) -> tuple[str | None, str]:
    """Where the model's tokenizer is read from and the config key that says so."""
    if model.tokenizer_path:
        return model.tokenizer_path, "model.tokenizer_path"
    return model.path, "model.path"
