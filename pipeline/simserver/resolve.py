"""Resolve parsed launch flags the way SGLang's argument hooks do (pure).

Covers what ``/server_info`` shows for an attention-backend / speculative-decoding sweep:
NEXTN -> EAGLE, the automatic (steps, topk, draft tokens), topk == 1 forcing ``steps + 1`` draft
tokens, ``max_running_requests`` -> 48 under speculation, ``prefill == decode`` -> attention
backend, fa3 + fp8_e5m2 -> triton, trtllm_mha page sizes and the deterministic-mode checks. The
simulated GPU is a Hopper (SM90, CUDA >= 12.3) unless ``MTP_EVAL_SIM_GPU_SM`` names another family;
it only picks the default attention backend. Messages are SGLang's own.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Mapping
from typing import Any

# Architectures whose MTP heads live in the target checkpoint (draft path = model path).
_MTP_ARCHS = frozenset(
    {"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "Glm4MoeForCausalLM"}
    | {"BailingMoeForCausalLM"}
)
# (path substring, model_type, architecture), first match wins; unknown models are Qwen3-like.
_ARCH_TABLE = (
    ("deepseek", "deepseek_v3", "DeepseekV3ForCausalLM"),
    ("qwen3-next", "qwen3_next", "Qwen3NextForCausalLM"),
    ("glm", "glm4_moe", "Glm4MoeForCausalLM"),
    ("mimo", "mimo", "MiMoForCausalLM"),
    ("llama", "llama", "LlamaForCausalLM"),
    ("grok", "grok", "Grok1ForCausalLM"),
)
_DEFAULT_ARCH = ("qwen3", "Qwen3ForCausalLM")
_EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "STANDALONE", "DFLASH", "DSPARK", "UNO"})
_TRTLLM_PAGE_SIZES = (16, 32, 64, 128)
DETERMINISTIC_ATTENTION_BACKENDS = ["ascend", "fa3", "fa4", "flashinfer", "intel_xpu", "triton"]
_RADIX_DETERMINISTIC = ("ascend", "fa3", "fa4", "triton")

SIM_GPU_ENV = "MTP_EVAL_SIM_GPU_SM"
SKIP_SOFTMAX_ENV = (
    "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR",
    "SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR",
)

MSG_TOPK1_DRAFT_TOKENS = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 "
    "when speculative_eagle_topk == 1"
)
MSG_MAX_RUNNING = (
    "Max running requests is reset to 48 for speculative decoding. You can override this by "
    "explicitly setting --max-running-requests."
)
MSG_FA3_FP8_E5M2 = (
    "FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton."
)


def model_architecture(model_path: str) -> tuple[str, str]:
    """(model_type, architecture) the simulated checkpoint at ``model_path`` pretends to have."""
    low = model_path.lower()
    for needle, model_type, arch in _ARCH_TABLE:
        if needle in low:
            return model_type, arch
    return _DEFAULT_ARCH


def resolve_server_args(
    ns: argparse.Namespace, env: Mapping[str, str], warnings: list[str] | None = None
) -> dict[str, Any]:
    """Resolve launch flags into the values ``/server_info`` reports.

    Args:
        ns: the namespace of ``args.parse_argv``.
        env: the server's environment (read for ``SGLANG_*`` switches).
        warnings: if given, SGLang's warning messages are appended to it.

    Returns:
        The resolved flags, keyed as in ``/server_info``.

    Raises:
        ValueError, AssertionError: where SGLang rejects the combination (its messages).
    """
    warn = warnings if warnings is not None else []
    _check_float_env(env)
    d = {k: v for k, v in vars(ns).items() if k != "sim_config"}
    d["served_model_name"] = d["served_model_name"] or d["model_path"]
    d["tokenizer_path"] = d["tokenizer_path"] or d["model_path"]
    _resolve_speculative(d, model_architecture(d["model_path"])[1], warn)
    _resolve_attention(d, env, warn)
    _resolve_page_size(d, warn)
    _resolve_deterministic(d, warn)
    d["mem_fraction_static"] = d["mem_fraction_static"] or 0.85
    d["chunked_prefill_size"] = d["chunked_prefill_size"] or 8192
    d["grammar_backend"] = d["grammar_backend"] or "xgrammar"
    if d["random_seed"] is None:  # SGLang draws one, so an unset seed is not reproducible
        d["random_seed"] = random.randint(0, 1 << 30)
    return d


def _check_float_env(env: Mapping[str, str]) -> None:
    """SGLang parses its EnvFloat variables with ``float()`` and rejects anything else."""
    for name in SKIP_SOFTMAX_ENV:
        raw = env.get(name)
        if raw is not None:
            try:
                float(raw)
            except ValueError:
                raise ValueError(f'"{raw}" is not a valid float value') from None


def _resolve_speculative(d: dict[str, Any], arch: str, warn: list[str]) -> None:
    algo = d["speculative_algorithm"]
    if algo is None:
        return
    if algo == "NEXTN":
        algo = d["speculative_algorithm"] = "EAGLE"
    if algo == "NGRAM":
        _resolve_ngram(d, warn)
    elif algo in _EAGLE_FAMILY:
        _resolve_eagle_family(d, arch, warn)
    else:
        raise ValueError(f"Unknown speculative algorithm name: {algo}")
    if d["speculative_draft_model_path"] is not None:
        d["speculative_draft_model_revision"] = "main"
    if d["max_running_requests"] is None:
        d["max_running_requests"] = 48
        warn.append(MSG_MAX_RUNNING)


def _resolve_eagle_family(d: dict[str, Any], arch: str, warn: list[str]) -> None:
    if arch in _MTP_ARCHS:
        if d["speculative_draft_model_path"] is not None:
            warn.append("DeepSeek MTP does not require setting speculative_draft_model_path.")
        d["speculative_draft_model_path"] = d["model_path"]
    if d["speculative_num_steps"] is None:
        assert d["speculative_eagle_topk"] is None and d["speculative_num_draft_tokens"] is None
        auto = (5, 4, 8) if arch in ("LlamaForCausalLM", "Grok1ForCausalLM") else (3, 1, 4)
        steps, topk, draft = auto
    else:
        steps = d["speculative_num_steps"]
        topk = d["speculative_eagle_topk"] or 1
        draft = d["speculative_num_draft_tokens"] or steps + 1
    if topk == 1 and draft != steps + 1:
        warn.append(MSG_TOPK1_DRAFT_TOKENS)
        draft = steps + 1
    if draft > topk * steps + 1:
        raise ValueError(
            f"speculative_num_draft_tokens={draft} exceeds speculative_eagle_topk * "
            f"speculative_num_steps + 1 = {topk * steps + 1}."
        )
    d.update(speculative_num_steps=steps, speculative_eagle_topk=topk)
    d["speculative_num_draft_tokens"] = draft


def _resolve_ngram(d: dict[str, Any], warn: list[str]) -> None:
    topk = 10  # --speculative-ngram-max-bfs-breadth default
    draft = d["speculative_num_draft_tokens"]
    if draft is None:
        draft = 12
        warn.append("speculative_num_draft_tokens is set to 12 by default for ngram speculative.")
    d.update(speculative_eagle_topk=topk, speculative_num_draft_tokens=draft)
    d["speculative_num_steps"] = draft // topk


def _resolve_attention(d: dict[str, Any], env: Mapping[str, str], warn: list[str]) -> None:
    prefill, decode = d["prefill_attention_backend"], d["decode_attention_backend"]
    if prefill is not None and prefill == decode:
        d["attention_backend"] = prefill
    if d["attention_backend"] is None:
        d["attention_backend"] = default_attention_backend(
            _sim_gpu_sm(env), d["speculative_eagle_topk"], d["enable_deterministic_inference"]
        )
    backends = _effective_backends(d)
    topk = d["speculative_eagle_topk"] or 1
    if d["speculative_algorithm"] and topk > 1 and "trtllm_mha" in backends:
        raise ValueError("trtllm_mha backend only supports topk = 1 for speculative decoding.")
    if d["kv_cache_dtype"] == "fp8_e5m2" and "fa3" in backends:
        warn.append(MSG_FA3_FP8_E5M2)
        for key in ("attention_backend", "prefill_attention_backend", "decode_attention_backend"):
            if d[key] == "fa3":
                d[key] = "triton"


def default_attention_backend(sm: int, topk: int | None, deterministic: bool) -> str:
    """SGLang's ``get_default_attn_backend`` for an MHA model on a GPU of family ``sm``."""
    chain = topk in (None, 1)
    if deterministic:
        return "flashinfer" if sm in (100, 120) else "fa3"
    if sm == 90 and chain:
        return "fa3"
    if sm == 100 and chain:
        return "trtllm_mha"
    return "flashinfer"


def _sim_gpu_sm(env: Mapping[str, str]) -> int:
    """The simulated GPU family: ``MTP_EVAL_SIM_GPU_SM`` (90, 100, 120, ...), Hopper by default."""
    raw = env.get(SIM_GPU_ENV, "90")
    try:
        return int(raw)
    except ValueError as exc:
        raise ValueError(f"{SIM_GPU_ENV}={raw!r} is not an SM number such as 90 or 100") from exc


def _effective_backends(d: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """(prefill, decode, draft) backends as SGLang's ``attention_backends_of`` picks them."""
    attn = d["attention_backend"]
    return (
        d["prefill_attention_backend"] or attn,
        d["decode_attention_backend"] or attn,
        d["speculative_draft_attention_backend"],
    )


def _resolve_page_size(d: dict[str, Any], warn: list[str]) -> None:
    page = d["page_size"]
    if "trtllm_mha" in (d["attention_backend"], *_effective_backends(d)):
        if page not in _TRTLLM_PAGE_SIZES:
            warn.append(
                "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, "
                f"changing page_size from {page} to 64."
            )
            d["page_size"] = 64
    elif page is None:
        d["page_size"] = 1


def _resolve_deterministic(d: dict[str, Any], warn: list[str]) -> None:
    if not d["enable_deterministic_inference"]:
        return
    explicit = d["attention_backend"]
    if explicit not in DETERMINISTIC_ATTENTION_BACKENDS:
        raise ValueError(
            f"Currently only {DETERMINISTIC_ATTENTION_BACKENDS} attention backends are supported "
            f"for deterministic inference, but you explicitly specified '{explicit}'."
        )
    d["sampling_backend"] = "pytorch"
    if explicit not in _RADIX_DETERMINISTIC and not d["disable_radix_cache"]:
        warn.append(
            f"Currently radix cache is not compatible with {explicit} attention backend "
            "for deterministic inference. It will be supported in the future."
        )
        d["disable_radix_cache"] = True
