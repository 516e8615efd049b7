"""Checking that a started server runs what the cell asked for, from its ``GET /server_info``.

The body is read by ``backends.server_info.ServerInfo`` (resolved settings, and ``env_vars``: the
SGLANG_* variables the server saw, with ``SGLANG_EXPOSE_OWN_ENV_VARS=1``). Requested keys are
server-info keys, or ``env:NAME`` for an environment variable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from backends.backend_conf import ModelConf
from backends.launch import (
    ALGORITHM_ALIASES,
    ENV_KEY_PREFIX,
    EXPOSE_ENV,
    SKIP_SOFTMAX_DECODE_ENV,
    SKIP_SOFTMAX_PREFILL_ENV,
)
from backends.server_info import ServerInfo
from backends.variants import AttentionFlags, runs_of

OBSERVED_KEYS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "kv_cache_dtype",
    "page_size",
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_attention_mode",
    "speculative_draft_attention_backend",
    "model_path",
    "served_model_name",
    "speculative_draft_model_path",
    "device",
    "dp_size",
    "version",
    # The KV pool, so a speed figure says what fmha_v2's whole-pool copy (0.5.19-0.5.22) had to
    # copy: the memory fraction asked or resolved, and the pool's tokens SGLang sized from it.
    "mem_fraction_static",
    "max_total_num_tokens",
)
# The algorithm a server without speculative decoding reports (None in 0.5.19, "NONE" in enums).
NO_SPECULATION = (None, "", "NONE")
MODELS_KEY = "/v1/models"
DRAFT_KEY = "speculative_draft_model_path"
OBSERVED_ENV = (SKIP_SOFTMAX_PREFILL_ENV, SKIP_SOFTMAX_DECODE_ENV)


@dataclass(frozen=True)
class Mismatch:
    """A requested setting the server does not confirm.

    ``verifiable`` is False when the server does not report the setting at all (an older SGLang
    without the key, or ``env_vars`` not exposed): the value could not be checked, which is not
    the same as a wrong value.
    """

    key: str
    requested: object
    observed: object
    verifiable: bool = True


def observed_settings(server_info: ServerInfo) -> dict[str, object]:
    """The settings a cell cares about, as the server reports them.

    Args:
        server_info: The server's ``GET /server_info``.

    Returns:
        The keys of ``OBSERVED_KEYS`` the server reports, plus ``env:NAME`` for each skip-softmax
        variable present in ``internal_states[0].env_vars``.
    """
    observed: dict[str, object] = {}
    for key in OBSERVED_KEYS:
        found, value = server_info.setting(key)
        if found:
            observed[key] = value
    env = server_info.env_vars or {}
    for name in OBSERVED_ENV:
        if name in env:
            observed[ENV_KEY_PREFIX + name] = env[name]
    return observed


def _as_number(value: object) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def values_match(requested: object, observed: object) -> bool:
    """Equality that accepts numbers written as strings (env values): ``"0.5"`` matches 0.5."""
    if isinstance(requested, bool) or isinstance(observed, bool):  # True == 1 in Python
        return type(requested) is type(observed) and requested == observed
    a, b = _as_number(requested), _as_number(observed)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return requested == observed


def _compare_env(key: str, requested: object, server_info: ServerInfo) -> Mismatch | None:
    env = server_info.env_vars
    if env is None:
        return Mismatch(key, requested, None, verifiable=False)
    observed = env.get(key[len(ENV_KEY_PREFIX) :])
    if requested is None:  # must be unset
        return None if observed is None else Mismatch(key, None, observed)
    if observed is None or not values_match(requested, observed):
        return Mismatch(key, requested, observed)
    return None


def compare_server_info(requested: dict[str, object], server_info: ServerInfo) -> list[Mismatch]:
    """Compare the requested settings with ``/server_info``.

    Args:
        requested: ``LaunchPlan.requested``: server-info keys, or ``env:NAME`` (None = unset).
        server_info: The server's ``GET /server_info``.

    Returns:
        One ``Mismatch`` per requested key the server does not confirm, in request order. Keys the
        server does not report at all come back with ``verifiable=False``.
    """
    mismatches = []
    for key, want in requested.items():
        if key.startswith(ENV_KEY_PREFIX):
            mismatch = _compare_env(key, want, server_info)
        else:
            found, got = server_info.setting(key)
            if key == DRAFT_KEY:
                got = _draft_as_asked(requested, server_info, got)
            if key == "attention_backend" and got is None:
                got = _split_attention(server_info)
            if not found:
                mismatch = Mismatch(key, want, None, verifiable=False)
            else:
                same = values_match(_canonical(key, want), _canonical(key, got))
                mismatch = None if same else Mismatch(key, want, got)
        if mismatch is not None:
            mismatches.append(mismatch)
    return mismatches


def _split_attention(server_info: ServerInfo) -> object:
    """The backend of both phases where a server leaves ``attention_backend`` unset.

    SGLang sets it to that value when both phases name one; an SGLang-like server need not.
    """
    prefill = server_info.setting("prefill_attention_backend")[1]
    decode = server_info.setting("decode_attention_backend")[1]
    return prefill if prefill is not None and prefill == decode else None


def _draft_as_asked(requested: dict[str, object], server_info: ServerInfo, draft: object) -> object:
    """The server's draft model, the target standing for itself where the cell asked for it.

    SGLang drafts with the target when ``--speculative-draft-model-path`` is unset. A cell asking
    for the target's own heads on a server drafting with its target agrees, whatever the target is
    called: ``model_path`` is checked (and named) on its own.
    """
    target = server_info.setting("model_path")[1]
    draft = target if draft is None else draft
    if draft == target and requested.get(DRAFT_KEY) == requested.get("model_path"):
        return requested.get(DRAFT_KEY)
    return draft


# Names SGLang takes for the same thing: it upper-cases the algorithm and runs NEXTN as EAGLE
# (``speculative_hook.py``); ``bf16`` and ``bfloat16`` are one KV dtype (both in its choice list).
_SPELLINGS: dict[str, tuple[Callable[[str], str], dict[str, str]]] = {
    "speculative_algorithm": (str.upper, ALGORITHM_ALIASES),
    "kv_cache_dtype": (str.lower, {"bfloat16": "bf16"}),
}


def _canonical(key: str, value: object) -> object:
    """One spelling per value: a server reporting ``NEXTN`` runs the EAGLE a cell asked for."""
    if key not in _SPELLINGS or not isinstance(value, str):
        return value
    normal, aliases = _SPELLINGS[key]
    return aliases.get(normal(value), normal(value))


def model_requested(model: ModelConf, launched: bool) -> dict[str, object]:
    """The ``/server_info`` model keys a server serving ``model`` reports.

    Args:
        model: the cell's model config.
        launched: whether the pipeline started the server (it then passed ``--served-model-name``
            ``served_model_name or name``); a server started by someone else is held to
            ``served_model_name`` only where the config sets one.
    """
    requested: dict[str, object] = {"model_path": model.path}
    if model.load_format is not None:  # random weights must say so: /server_info load_format
        requested["load_format"] = model.load_format
    served = model.served_model_name or (model.name if launched else None)
    if served is not None:
        requested["served_model_name"] = served
    if model.speculative.algorithm is not None:  # no draft path: the target's own MTP heads
        requested[DRAFT_KEY] = model.speculative.draft_model_path or model.path
    return requested


def compare_models_list(expected: str, models: object) -> Mismatch | None:
    """``GET /v1/models``: the served name must be one of its ids (None: it agrees)."""
    data = models.get("data") if isinstance(models, dict) else None
    if not isinstance(data, list):
        return Mismatch(MODELS_KEY, expected, None, verifiable=False)
    ids = [card.get("id") for card in data if isinstance(card, dict)]
    return None if expected in ids else Mismatch(MODELS_KEY, expected, ids)


def speculation_off(server_info: ServerInfo) -> bool | None:
    """Whether the server runs without speculative decoding (None: it does not say)."""
    found, algorithm = server_info.setting("speculative_algorithm")
    if not found:
        return None
    return algorithm in NO_SPECULATION or str(algorithm).upper() == "NONE"


def observed_runs(server_info: ServerInfo, family: str, speculative: bool) -> dict[str, str] | None:
    """The kernels the server's reported attention backends run (None: no backend reported)."""
    keys = ("attention_backend", "prefill_attention_backend", "decode_attention_backend",
            "speculative_draft_attention_backend", "speculative_attention_mode")  # fmt: skip
    values = {k: server_info.setting(k)[1] for k in keys}
    if not any(values[k] for k in keys[:3]):
        return None
    flags = AttentionFlags(*(v if isinstance(v, str) else None for v in values.values()))
    return runs_of(flags, family, speculative)


def compare_runs(label: dict[str, str], runs: dict[str, str]) -> list[Mismatch]:
    """Phases whose kernel differs from the one the cell's variant name stands for."""
    return [
        Mismatch(f"runs.{phase}", kernel, runs.get(phase))
        for phase, kernel in label.items()
        if kernel != "default" and phase in runs and runs[phase] != kernel
    ]


def unverified_reason(mismatch: Mismatch) -> str:
    """Why a requested setting could not be checked, and what would let it be."""
    if mismatch.key.startswith(ENV_KEY_PREFIX):
        return (
            "the server does not report its environment (start it with "
            f"{EXPOSE_ENV}=1 so that /server_info lists env_vars)"
        )
    if mismatch.key == MODELS_KEY:
        return "GET /v1/models gave no model list"
    return f"/server_info has no key {mismatch.key!r} (an SGLang release that does not report it)"


def exact_softmax_requested(requested: dict[str, object]) -> dict[str, object]:
    """The skip-softmax variables a cell leaves unset, as "must be unset" (None) requests.

    A cell labelled exact softmax whose server has a factor set in its environment (from
    ``server.env`` or the shell that started it) did not run what its label says.
    """
    names = (ENV_KEY_PREFIX + n for n in OBSERVED_ENV)
    return {key: None for key in names if key not in requested}
