"""What ``speed.prompts`` names (pure): random token ids, or ``eval:NAME``, one of the cell's evals.

In the config layer so that the compose-time check and the sweep's pre-flight read it as the cell
does (``pipeline.measuring.speed.prompts`` builds the prompts). ``parity.prompts`` and
``serving.prompts`` read the same way (``key`` names the setting in messages). Only
``serving.prompts`` takes a pattern, ``eval:speed_bench_throughput_*``: each bucket of its sweep
draws from one matched eval (``serving/bucket_sources``); the speed and parity phases send one
eval's prompts to every shape, so a pattern there would have no single meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Protocol

from backends.backend_conf import ModelConf

RANDOM = "random"  # speed.prompts' default: random token ids (speed/plan.prompt_ids)
EVAL_PREFIX = "eval:"
SPEED_KEY = "speed.prompts"
SERVING_KEY = "serving.prompts"
# What ``random`` stands for where it is not random token ids (the message that names the fix).
RANDOM_MEANS = {SERVING_KEY: "random common words"}
PATTERN_KEYS = (SERVING_KEY,)  # the settings whose eval:NAME may be a pattern
PATTERN_CHARS = "*?["  # fnmatch's; no eval name holds one


class PromptSetting(Protocol):
    """A phase's prompt setting: ``speed``, ``parity`` and ``serving`` have these two fields."""

    enabled: bool
    prompts: str


def is_pattern(name: str) -> bool:
    """Whether an ``eval:`` name is a pattern (``speed_bench_throughput_*``), not one eval."""
    return any(c in name for c in PATTERN_CHARS)


def eval_name(prompts: str, key: str = SPEED_KEY) -> str | None:
    """The eval ``speed.prompts`` names (None for ``random``); for ``serving.prompts``, a pattern.

    Raises:
        ValueError: neither ``random`` nor ``eval:NAME``, or a pattern where ``key`` takes none.
    """
    if prompts == RANDOM:
        return None
    name = prompts.removeprefix(EVAL_PREFIX)
    if name == prompts or not name:
        raise ValueError(
            f"{key}={prompts!r}: use {RANDOM} ({RANDOM_MEANS.get(key, 'random token ids')}) or "
            "eval:NAME (the prompts of the cell's eval NAME, e.g. eval:synth_retrieval)"
        )
    if is_pattern(name) and key not in PATTERN_KEYS:
        raise ValueError(
            f"{key}={prompts!r}: patterns ({PATTERN_CHARS}) are for {SERVING_KEY} only, whose "
            f"buckets each draw from one matched eval; {key} takes eval:NAME, one eval of the cell"
        )
    return name


def matched_evals(name: str, evals: Sequence[str]) -> list[str]:
    """The cell's evals ``name`` names, in the cell's order: itself, or those it matches."""
    if not is_pattern(name):
        return [name] if name in evals else []
    return [e for e in evals if fnmatchcase(e, name)]


def source_problems(conf: PromptSetting, evals: Sequence[str], key: str = SPEED_KEY) -> list[str]:
    """What is wrong with ``key`` (``speed.prompts``) against the cell's ``evals`` (empty: none)."""
    try:
        name = eval_name(conf.prompts, key)
    except ValueError as err:
        return [str(err)]
    if name is None or matched_evals(name, evals):
        return []
    if is_pattern(name):
        return [
            f"{key}={conf.prompts} matches none of the evals the cell runs (evals="
            f"[{','.join(evals)}]): add an eval it matches to evals, or change the pattern"
        ]
    return [
        f"{key}={conf.prompts} names an eval the cell does not run (evals="
        f"[{','.join(evals)}]): add {name} to evals, or name one of them"
    ]


def tokenizer_source(model: ModelConf) -> tuple[str | None, str]:
    """Where the model's tokenizer is read from and the config key that says so."""
    if model.tokenizer_path:
        return model.tokenizer_path, "model.tokenizer_path"
    return model.path, "model.path"
