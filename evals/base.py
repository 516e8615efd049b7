"""The eval interface and the registry that maps ``EvalConf.kind`` to an implementation."""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from evals.config import EvalConf

# kind -> "module:factory". Modules are imported on use, so an eval's heavy imports stay lazy.
# Adding an eval is one line here, e.g. "gsm8k": "evals.gsm8k:Gsm8kEval".
_REGISTRY: dict[str, str] = {
    "gpqa": "evals.gpqa:GpqaEval",
    "gsm8k": "evals.gsm8k:Gsm8kEval",
    "mmlu": "evals.mmlu:MmluEval",
    "mtbench": "evals.mtbench:MtBenchEval",
    "lm_eval": "evals.lm_eval_bridge:LmEvalEval",
}


@dataclass(frozen=True)
class EvalPrompt:
    """One request of an eval: a question at one repeat."""

    question_id: str  # stable hash of the question text
    repeat: int
    messages: list[dict[str, Any]]
    answer: str  # the correct letter / number
    meta: dict[str, Any]  # permutation etc.


class Eval(Protocol):
    """What the cell job needs from an eval."""

    name: str

    def prompts(self) -> list[EvalPrompt]:
        """All (question, repeat) prompts, in a deterministic order."""
        ...

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Extract the answer from ``content`` and say whether it is correct."""
        ...

    def answer_key(self) -> list[dict[str, Any]]:
        """``{"question", "answer", "kind"}`` per question, for the simulated server."""
        ...


def question_id(text: str) -> str:
    """Stable short id of a question: the first 16 hex digits of its SHA-256.

    Args:
        text: the question text as it appears in the prompt.

    Returns:
        16 lowercase hex characters.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def known_kinds() -> list[str]:
    """The eval kinds ``make_eval`` accepts."""
    return sorted(_REGISTRY)


def make_eval(name: str, conf: EvalConf) -> Eval:
    """Build the eval named ``name`` from its config.

    Args:
        name: the eval's key under ``evals`` (used for sample files and reports).
        conf: its config; ``conf.kind`` selects the implementation.

    Returns:
        The eval, with its rows loaded.

    Raises:
        ValueError: ``conf.kind`` is not registered.
        evals.datasets.DatasetError: the rows cannot be loaded.
    """
    target = _REGISTRY.get(conf.kind)
    if target is None:
        raise ValueError(f"evals.{name}.kind={conf.kind!r} is unknown; use one of {known_kinds()}.")
    module_name, factory = target.split(":")
    built: Eval = getattr(importlib.import_module(module_name), factory)(name, conf)
    return built
