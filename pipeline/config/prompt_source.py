"""What ``speed.prompts`` names (pure): random token ids, or ``eval:NAME``, one of the cell's evals.

In the config layer so that the compose-time check and the sweep's pre-flight read it as the cell
does (``pipeline.measuring.speed.prompts`` builds the prompts).
"""

from __future__ import annotations

from collections.abc import Sequence

from backends.backend_conf import ModelConf
from pipeline.config.schema import SpeedConf

RANDOM = "random"  # speed.prompts' default: random token ids (speed/plan.prompt_ids)
EVAL_PREFIX = "eval:"


def eval_name(prompts: str) -> str | None:
    """The eval ``speed.prompts`` names (None for ``random``).

    Raises:
        ValueError: neither ``random`` nor ``eval:NAME``.
    """
    if prompts == RANDOM:
        return None
    name = prompts.removeprefix(EVAL_PREFIX)
    if name == prompts or not name:
        raise ValueError(
            f"speed.prompts={prompts!r}: use {RANDOM} (random token ids) or eval:NAME (the "
            "prompts of the cell's eval NAME, e.g. eval:synth_retrieval)"
        )
    return name


def source_problems(conf: SpeedConf, evals: Sequence[str]) -> list[str]:
    """What is wrong with ``speed.prompts`` against the cell's ``evals`` (empty: nothing)."""
    try:
        name = eval_name(conf.prompts)
    except ValueError as err:
        return [str(err)]
    if name is None or name in evals:
        return []
    return [
        f"speed.prompts={conf.prompts} names an eval the cell does not run (evals="
        f"[{','.join(evals)}]): add {name} to evals, or name one of them"
    ]


def tokenizer_source(model: ModelConf) -> tuple[str | None, str]:
    """Where the model's tokenizer is read from and the config key that says so."""
    if model.tokenizer_path:
        return model.tokenizer_path, "model.tokenizer_path"
    return model.path, "model.path"
