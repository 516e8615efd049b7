"""Per-cell accuracy and accept length: the base values plus every matching effect (pure).

An effect key is a resolved server argument (``kv_cache_dtype``, ``prefill_attention_backend``,
...) or an environment variable (``SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR``). Values
compare as numbers when both sides parse as floats, else as strings; a missing variable is null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.simserver.simconfig import Effect

# Split backends fall back to --attention-backend (SGLang's attention_backends_of), so an effect on
# prefill_attention_backend also matches a cell that only set --attention-backend.
_FALLBACK = {
    "prefill_attention_backend": "attention_backend",
    "decode_attention_backend": "attention_backend",
}


@dataclass(frozen=True)
class CellTargets:
    """What the simulated model does in this cell."""

    accuracy: float  # clipped to [0, 1]
    accept_length: float  # clipped to [1, num_steps + 1]; 1.0 without speculation
    matched: tuple[int, ...]  # indices of the cell-level effects that applied
    # Matching effects with a request-level condition (``Effect.per_request``): applied by
    # ``request_targets`` to the prompts they name.
    per_request: tuple[Effect, ...] = ()
    top: float = 1.0  # the accept length's ceiling: num_steps + 1 (1.0 without speculation)
    latency_s: float = 0.0  # the matching cell-level effects' added seconds per request


def lookup(key: str, resolved: Mapping[str, Any], env: Mapping[str, str]) -> Any:
    """The cell's value for an effect key.

    Raises:
        KeyError: when ``key`` is neither a server argument nor an upper-case variable name.
    """
    if key in resolved:
        value = resolved[key]
        if value is None and key in _FALLBACK:
            value = resolved.get(_FALLBACK[key])
        return value
    if key.isupper():
        return env.get(key)
    raise KeyError(key)


def values_equal(observed: Any, expected: Any) -> bool:
    """Compare as floats when both parse as floats, else as strings (None only equals None)."""
    if observed is None or expected is None:
        return observed is None and expected is None
    a, b = _as_float(observed), _as_float(expected)
    if a is not None and b is not None:
        return a == b
    return _as_text(observed) == _as_text(expected)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _as_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def effect_matches(effect: Effect, resolved: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """True when every key of ``effect.match`` equals the cell's value."""
    return all(values_equal(lookup(k, resolved, env), v) for k, v in effect.match.items())


def check_effect_keys(effects: Sequence[Effect], resolved: Mapping[str, Any]) -> None:
    """Reject effect keys that name nothing, so a typo does not silently never match.

    Raises:
        ValueError: naming the effect index and the key.
    """
    for index, effect in enumerate(effects):
        for key in effect.match:
            if key not in resolved and not key.isupper():
                raise ValueError(
                    f"effects[{index}].match.{key}: not a server argument of /server_info nor an "
                    "environment variable name (upper case); fix the key"
                )


def cell_targets(
    accuracy: float,
    accept_length: float,
    effects: Sequence[Effect],
    resolved: Mapping[str, Any],
    env: Mapping[str, str],
) -> CellTargets:
    """Add up the matching effects and clip to the valid ranges."""
    found = [i for i, e in enumerate(effects) if effect_matches(e, resolved, env)]
    matched = tuple(i for i in found if not effects[i].per_request)
    acc = accuracy + sum(effects[i].accuracy_delta for i in matched)
    acc_len = accept_length + sum(effects[i].accept_length_delta for i in matched)
    steps = resolved.get("speculative_num_steps") if resolved.get("speculative_algorithm") else None
    top = float(steps) + 1.0 if steps else 1.0
    return CellTargets(
        accuracy=min(max(acc, 0.0), 1.0),
        accept_length=min(max(acc_len, 1.0), top),
        matched=matched,
        per_request=tuple(effects[i] for i in found if effects[i].per_request),
        top=top,
        latency_s=sum(effects[i].latency_s for i in matched),
    )


def applies_to(effect: Effect, prompt: str, prompt_tokens: int) -> bool:
    """Whether a request-level effect's condition holds for this prompt."""
    if effect.above_prompt_tokens is not None and prompt_tokens <= effect.above_prompt_tokens:
        return False
    return effect.prompt_contains is None or effect.prompt_contains in prompt


def request_targets(cell: CellTargets, prompt: str, prompt_tokens: int) -> tuple[float, float]:
    """This request's accuracy and accept length: the cell's plus its request-level effects."""
    hits = [e for e in cell.per_request if applies_to(e, prompt, prompt_tokens)]
    if not hits:
        return cell.accuracy, cell.accept_length
    acc = cell.accuracy + sum(e.accuracy_delta for e in hits)
    accept = cell.accept_length + sum(e.accept_length_delta for e in hits)
    return min(max(acc, 0.0), 1.0), min(max(accept, 1.0), cell.top)
