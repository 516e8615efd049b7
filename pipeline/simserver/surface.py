"""What the simulated server does differently for each SGLang release it imitates, in one table.

Shaped like ``backends.server_info.SURFACE_BY_VERSION`` (the client's key table), but kept apart
on purpose: the simulated server stands in for SGLang, so it must not share the client's reading
of it. Imitating a new release is a new entry here (its parser's choice lists from the wheel's
``server_args.py``, what its bodies add or drop; benchmarks/results/sglang-rules.md reads them from
the wheels) plus its recorded bodies under ``tests/data/live-sglang-<release>/`` (built into
``sglang_<release>.json``). The response fields below are the 0.5.23 recording's differences from
0.5.19 (``tests/data/live-sglang-0.5.23/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

_ATTENTION_COMMON = (
    "triton", "torch_native", "flex_attention", "dsa", "nsa", "dsv4", "compressed", "fa3", "fa4",
    "flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla", "trtllm_mha",
    "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter", "wave", "intel_amx", "ascend",
    "intel_xpu",
)  # fmt: skip
_DRAFT_ATTENTION_COMMON = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha")
_KV_COMMON = (
    "auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16",
)  # fmt: skip


@dataclass(frozen=True)
class SimSurface:
    """One imitated SGLang release: its launch parser's choices and its ``/server_info`` extras."""

    attention_backends: tuple[str, ...]  # --attention-backend (and prefill/decode) choices
    draft_attention_backends: tuple[str, ...]  # --speculative-draft-attention-backend choices
    kv_cache_dtypes: tuple[str, ...]  # --kv-cache-dtype choices
    launch_command: bool = False  # /server_info carries ``launch_command``
    frontend: str | None = None  # /server_info ``frontend`` (None: no such key)
    model_info_disaggregation_mode: bool = False  # /model_info carries ``disaggregation_mode``
    meta_storage_waits: bool = False  # meta_info ``storage_prefetch_wait``/``storage_staging_wait``
    meta_first_token_latency: bool = False  # meta_info ``first_token_latency`` (with metrics)
    tool_calls_key: bool = True  # chat ``message`` and stream ``delta`` carry ``tool_calls: null``
    usage_completion_details: bool = False  # ``usage.completion_tokens_details``
    # A stream's finish reason comes in a chunk of its own (``delta`` holding only
    # ``reasoning_content``) and chunks before the usage chunk have no ``usage`` key.
    stream_finish_apart: bool = False
    # /metrics: the families split by ``is_streaming``, the rank labels of counters and of gauges
    # (live 0.5.23: counters carry none, gauges tp/pp/moe_ep rank).
    streaming_split: tuple[str, ...] = ("generation_tokens",)
    counter_rank_labels: tuple[str, ...] = ("tp_rank", "pp_rank")
    gauge_rank_labels: tuple[str, ...] = ("tp_rank", "pp_rank")
    # fmha_v2 (trtllm_mha) prefill copies the layer's whole KV pool on every call (0.5.19-0.5.22,
    # torch.stack of K and V in trtllm_mha_backend.py); 0.5.23 reads the pages in place.
    fmha_v2_copies_pool: bool = False


SURFACE_BY_VERSION: dict[str, SimSurface] = {
    "0.5.19": SimSurface(
        attention_backends=(*_ATTENTION_COMMON, "cutlass_mla", "dual_chunk_flash_attn"),
        draft_attention_backends=_DRAFT_ATTENTION_COMMON,
        kv_cache_dtypes=(*_KV_COMMON, "fp4_e2m1"),
        fmha_v2_copies_pool=True,
    ),
    "0.5.23": SimSurface(
        attention_backends=(*_ATTENTION_COMMON, "qsa", "llada2_cfg_flashinfer"),
        draft_attention_backends=(*_DRAFT_ATTENTION_COMMON, "intel_xpu"),
        kv_cache_dtypes=_KV_COMMON,
        launch_command=True,
        frontend="python",
        model_info_disaggregation_mode=True,
        meta_storage_waits=True,
        meta_first_token_latency=True,
        tool_calls_key=False,
        usage_completion_details=True,
        stream_finish_apart=True,
        streaming_split=("num_requests", "prompt_tokens", "generation_tokens"),
        counter_rank_labels=(),
        gauge_rank_labels=("moe_ep_rank", "pp_rank", "tp_rank"),
    ),
}
SUPPORTED_VERSIONS = tuple(SURFACE_BY_VERSION)
# Releases whose responses still carry the spec aliases (``spec_accepted_drafts``,
# ``spec_proposed_drafts``, ``spec_accept_histogram``): 0.5.21 removed them
# (``tokenizer_manager.py`` of each wheel). A fact of releases the server does not all imitate.
SPEC_ALIAS_RELEASES = ("0.5.17", "0.5.19", "0.5.20")


def surface_for(version: str) -> SimSurface:
    """The table entry of an imitated release.

    Raises:
        ValueError: naming the release and the ones the simulated server imitates.
    """
    found = SURFACE_BY_VERSION.get(version)
    if found is None:
        raise ValueError(
            f"the simulated server imitates SGLang {', '.join(SUPPORTED_VERSIONS)}, not {version}"
        )
    return found
