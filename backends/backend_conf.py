"""Typed config nodes for what the server runs: model, backend variant, KV dtype, skip-softmax, GPU.

These dataclasses are the schema under the YAML in ``conf/`` (registered in Hydra's ConfigStore by
``pipeline.config.schema``) and the typed objects the pure functions of ``backends`` take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SpeculativeConf:
    """SGLang's speculative-decoding recipe (``--speculative-*`` flags)."""

    algorithm: str | None = None  # EAGLE, EAGLE3, NEXTN, STANDALONE, ...; None = no speculation
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None  # verify width, includes the bonus slot
    draft_model_path: str | None = None  # None: SGLang falls back to the target (MTP heads)
    extra_args: list[str] = field(default_factory=list)


@dataclass
class AttentionGeometry:
    """Per-model attention shape, used by the kernel probe and the page-size rules."""

    num_heads: int = 8
    num_kv_heads: int = 2
    head_dim: int = 128
    page_size: int | None = None  # None: SGLang's default for the backend
    v_head_dim: int | None = None  # None: equal to head_dim (trtllm-gen page 128 needs equal dims)


@dataclass
class ModelConf:
    """One checkpoint and how it is served and sampled."""

    name: str = "tiny-sim"  # short name used in cell names and reports
    path: str = "tiny-sim"  # --model-path
    # --load-format; None: SGLang's default (auto: the checkpoint's weights). dummy: random
    # weights sized from config.json alone, for production shapes with no checkpoint.
    load_format: str | None = None
    tokenizer_path: str | None = None  # --tokenizer-path; None: the tokenizer beside the model
    served_model_name: str | None = None
    tp: int = 1
    context_length: int | None = None
    trust_remote_code: bool = False
    reasoning_parser: str | None = None
    is_mla: bool = False  # MLA models cannot use trtllm_mha
    # Mamba / linear-attention state (Qwen3-Next): SGLang then picks a mamba radix-cache strategy.
    hybrid_mamba: bool = False
    # The checkpoint's quant_config.kv_cache_quant_algo: "FP8" makes --kv-cache-dtype auto fp8_e4m3.
    kv_cache_quant_algo: str | None = None
    extra_args: list[str] = field(default_factory=list)  # further launch flags for this model
    speculative: SpeculativeConf = field(default_factory=SpeculativeConf)
    attention: AttentionGeometry = field(default_factory=AttentionGeometry)
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class BackendConf:
    """An attention-backend variant: the name users sweep over and the SGLang flags it maps to."""

    name: str = "fa3"  # variant name (fa3, fmha_v2, flashinfer, triton, trtllm_mha)
    attention_backend: str | None = "fa3"  # --attention-backend
    prefill_attention_backend: str | None = (
        None  # --prefill-attention-backend (wins over the above)
    )
    decode_attention_backend: str | None = None  # --decode-attention-backend
    draft_attention_backend: str | None = None  # --speculative-draft-attention-backend
    speculative_attention_mode: str | None = None  # prefill | decode: who runs verify
    # Where verify goes when the variant must route it away (fmha_v2 before SGLang 0.5.22);
    # None: fa3 on SM90, flashinfer on SM120. flashinfer where SGLang's fa3 is not installed.
    verify_backend: str | None = None
    description: str = ""


@dataclass
class KvDtypeConf:
    """KV-cache dtype (``--kv-cache-dtype``)."""

    name: str = "auto"


@dataclass
class SkipSoftmaxConf:
    """Skip-softmax threshold scale factors; None or 0 leaves the kernel exact."""

    prefill: float | None = None  # SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR
    decode: float | None = None  # SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR


@dataclass
class GpuConf:
    """Which GPU to plan for: ``auto`` detects it, anything else overrides detection."""

    detect: bool = True  # False: use the fields below instead of nvidia-smi / torch
    name: str = "unknown"
    compute_capability: str = "0.0"  # e.g. "9.0" for H200
    count: int = 1
    memory_mib: int = 0
    driver_version: str = ""
