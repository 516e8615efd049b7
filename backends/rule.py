"""The shape of a compatibility rule (the rules themselves: ``compat_rules``, ``spec_rules``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backends.resolved import ResolvedCell

REJECT, ADJUST, NO_EFFECT, CRASH = "reject", "adjust", "no-effect", "crash-at-start"
FATAL = frozenset({REJECT, CRASH})  # outcomes with which the server does not start
SILENT = ""  # SGLang logs nothing for this rule


@dataclass(frozen=True)
class Rule:
    """One compatibility check, true for SGLang versions ``since <= version < until``."""

    id: str
    outcome: str  # reject | adjust | no-effect | crash-at-start
    message: str  # SGLang's text; {fields} are filled from the cell (compat_rules.message_fields)
    detail: str  # our one-line explanation
    when: Callable[[ResolvedCell], bool]
    since: str | None = None
    until: str | None = None
    adjust: Callable[[ResolvedCell], ResolvedCell] | None = None  # what SGLang changes
    # The wheel file the message was read from, package first ("sglang/srt/...", "flashinfer/...");
    # benchmarks/sglang_rules/read_wheels.py looks for the message there in every release.
    source: str = ""


def uses_trtllm_mha(cell: ResolvedCell) -> bool:
    """Whether any attention flag of the cell (draft backend included) names trtllm_mha."""
    f = cell.flags
    named = (f.attention_backend, f.prefill_attention_backend, f.decode_attention_backend)
    return "trtllm_mha" in {*named, f.draft_attention_backend}


def on(factor: float | None) -> bool:
    """Whether a skip-softmax factor is set and non-zero (SGLang: ``(factor or 0.0) > 0``)."""
    return (factor or 0.0) > 0
