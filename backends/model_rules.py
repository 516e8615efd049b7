"""SGLang checks that depend on the model or the server's environment, as read from the wheels.

The argument hooks (``MODEL_ARG_RULES``) run with SGLang's other argument checks; the runtime
checks (``MODEL_RUNTIME_RULES``) fire when a backend is built or first runs, after the arguments
were accepted. Each rule's ``source`` is the wheel file its message was read from;
``benchmarks/sglang_rules/read_wheels.py`` re-reads them for every release.
"""

from __future__ import annotations

from backends.resolved import ResolvedCell
from backends.rule import CRASH, REJECT, Rule, uses_trtllm_mha
from backends.variants import SM100_FAMILY, XQA_FAMILIES

RAGGED_VERIFY_MODES = ("static", "cap-accept", "compact")  # RaggedVerifyMode, all five releases
# SpeculativeAlgorithm.supports_ragged_verify: only DSpark's verify carries a ragged layout.
RAGGED_VERIFY_ALGORITHMS = frozenset({"DSPARK"})
_MAMBA_HOOK = "sglang/srt/arg_groups/mamba_hook.py"
_TRTLLM_MHA = "sglang/srt/layers/attention/trtllm_mha_backend.py"


def _no_buffer_fault(c: ResolvedCell) -> str | None:
    # validate_mamba_no_buffer asserts in this order; the first failing assert is what SGLang says.
    if c.mamba_strategy != "no_buffer":
        return None
    if c.page_size not in (1, None):
        return "page"
    if c.overlap_schedule:
        return "overlap"
    return "trtllm_mha" if c.flags.attention_backend == "trtllm_mha" else None


def _trtllm_gen_page_unsupported(c: ResolvedCell) -> bool:
    q_heads, kv_heads = c.heads_per_rank
    qk_dim, v_dim = c.head_dims
    return (
        c.family in SM100_FAMILY
        and uses_trtllm_mha(c)
        and (c.page_size or 0) >= 128
        and (q_heads // kv_heads <= 1 or qk_dim != v_dim)
    )


MODEL_ARG_RULES: tuple[Rule, ...] = (
    Rule(
        id="ragged_verify_mode_invalid",
        outcome=REJECT,
        message="invalid SGLANG_RAGGED_VERIFY_MODE={ragged_verify_mode_repr}; expected one of 'static', 'cap-accept', 'compact'",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="SGLang reads the variable for every speculative algorithm at start-up",
        when=lambda c: c.speculative and c.ragged_verify_mode not in RAGGED_VERIFY_MODES,
        source="sglang/srt/speculative/ragged_verify.py",
    ),
    Rule(
        id="mamba_no_buffer_page_size",
        outcome=REJECT,
        message="no_buffer only supports page_size=1.",
        detail="mamba state with a radix cache and no extra buffer: pass --disable-radix-cache",
        when=lambda c: _no_buffer_fault(c) == "page",
        source=_MAMBA_HOOK,
    ),
    Rule(
        id="mamba_no_buffer_overlap",
        outcome=REJECT,
        message="no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="an explicit no_buffer strategy needs --disable-overlap-schedule",
        when=lambda c: _no_buffer_fault(c) == "overlap",
        source=_MAMBA_HOOK,
    ),
    Rule(
        id="mamba_no_buffer_trtllm_mha",
        outcome=REJECT,
        message="no_buffer do not support trtllm_mha attention backend.",
        detail="checks --attention-backend only; --disable-radix-cache avoids no_buffer",
        when=lambda c: _no_buffer_fault(c) == "trtllm_mha",
        source=_MAMBA_HOOK,
    ),
)

MODEL_RUNTIME_RULES: tuple[Rule, ...] = (
    Rule(
        id="trtllm_gen_page_size_geometry",
        outcome=CRASH,
        message="trtllm_mha with page_size={page_size} requires trtllm-gen's dynamic tokens-per-page kernels, which only support GQA (q heads per kv head > 1, got {q_heads}/{kv_heads}) with equal QK/V head dims (got {head_dim}/{v_head_dim}) and a power-of-2 page size. Use --page-size 64 instead.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="raised when the backend is built; XQA (SM90/SM120) has page-128 kernels",
        when=_trtllm_gen_page_unsupported,
        source=_TRTLLM_MHA,
    ),
    Rule(
        id="trtllm_mha_sm120_fp8_checkpoint",
        outcome=CRASH,
        since="0.5.19",
        message="FP8 (e4m3) is not yet supported for FMHAv2 on SM120 (Blackwell). Use fp16 or bf16 instead.",  # noqa: E501 (FlashInfer text, kept whole for grep)
        detail=(
            "SGLang's start-up check reads --kv-cache-dtype only; auto on an FP8-KV checkpoint is "
            "fp8_e4m3 at runtime, so FlashInfer raises: pass --kv-cache-dtype bf16"
        ),
        when=lambda c: (
            c.flags.prefill == "trtllm_mha"
            and c.family == "SM120"
            and c.kv_dtype == "auto"
            and (c.kv_cache_quant_algo or "").upper() == "FP8"
        ),
        source="flashinfer/prefill.py",
    ),
    Rule(
        id="xqa_ragged_verify",
        outcome=CRASH,
        message="Compact ragged verify (variable-length cum_seq_lens_q) requires the trtllm-gen decode kernel; the xqa impl (sm90 / sm120) rejects it. Disable SGLANG_RAGGED_VERIFY_MODE for this configuration.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="only DSpark verifies ragged; other algorithms ignore the variable on XQA",
        when=lambda c: (
            c.algorithm in RAGGED_VERIFY_ALGORITHMS
            and c.ragged_verify_mode in RAGGED_VERIFY_MODES[1:]
            and c.family in XQA_FAMILIES
            and c.flags.verify == "trtllm_mha"
        ),
        source=_TRTLLM_MHA,
    ),
)
