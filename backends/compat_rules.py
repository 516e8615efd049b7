"""SGLang's compatibility checks as data (read from the SGLang and FlashInfer wheels).

Each rule names the SGLang versions it holds for (``since <= version < until``; the bounds are
releases whose wheels were read: 0.5.17 and 0.5.19-0.5.23, ``benchmarks/results/sglang-rules.md``),
the wheel file its message comes from (``source``), a pure condition over a ``ResolvedCell``, the
outcome and SGLang's own message. ``adjust`` rules also say what SGLang changes, so that the rules
after them (and the launch plan) see the cell SGLang really runs. The order is the order in which
SGLang meets the checks: argument hooks (adjust, reject), then runtime (crash).
"""

from __future__ import annotations

from dataclasses import replace

from backends.model_rules import MODEL_ARG_RULES, MODEL_RUNTIME_RULES
from backends.resolved import ResolvedCell
from backends.rule import ADJUST, CRASH, NO_EFFECT, REJECT, SILENT, Rule, on, uses_trtllm_mha
from backends.spec_rules import SPEC_RULES
from backends.variants import SM8X, SM100_FAMILY, TRTLLM_MHA_FAMILIES, XQA_FAMILIES

TRTLLM_MHA_PAGE_SIZES = (16, 32, 64, 128)
PAGE_TREE_BACKENDS = ("flashinfer", "fa3", "triton")
DETERMINISTIC_BACKENDS = ["ascend", "fa3", "fa4", "flashinfer", "intel_xpu", "triton"]
SKIP_SOFTMAX_CONSUMERS = frozenset({"trtllm_mha", "trtllm_mla", "dsa", "cutedsl_mla"})


def _named(cell: ResolvedCell) -> list[str]:
    f = cell.flags
    named = (f.attention_backend, f.prefill_attention_backend, f.decode_attention_backend)
    return [b for b in named if b is not None]


def _spec_backends(cell: ResolvedCell) -> set[str | None]:
    # Backends that run decode-kernel work: decode, and with speculation verify and draft.
    f = cell.flags
    return {f.decode, f.verify, f.draft} if cell.speculative else {f.decode}


def _first_outside(backends: list[str], allowed: tuple[str, ...] | list[str]) -> str | None:
    return next((b for b in backends if b not in allowed), None)


def message_fields(cell: ResolvedCell) -> dict[str, object]:
    """Values the rule messages refer to."""
    f = cell.flags
    effective = [b for b in (f.prefill, f.decode) if b is not None]
    return {
        "page_size": cell.page_size,
        "num_steps": cell.num_steps,
        "backend_outside_page_tree": _first_outside(effective, PAGE_TREE_BACKENDS),
        "backend_outside_deterministic": _first_outside(_named(cell), DETERMINISTIC_BACKENDS),
        "deterministic_backends": DETERMINISTIC_BACKENDS,
        "q_heads": cell.heads_per_rank[0],
        "kv_heads": cell.heads_per_rank[1],
        "head_dim": cell.head_dims[0],
        "v_head_dim": cell.head_dims[1],
        "ragged_verify_mode_repr": repr(cell.ragged_verify_mode),
    }


def _xqa_runs(cell: ResolvedCell, backend: str | None) -> bool:
    """Whether speculative work on ``backend`` runs XQA with several query tokens per request."""
    return cell.speculative and cell.family in XQA_FAMILIES and backend == "trtllm_mha"


_OVERRIDES = "sglang/srt/arg_groups/overrides.py"
_SPEC_HOOK = "sglang/srt/arg_groups/speculative_hook.py"
_ATTENTION_HOOK = "sglang/srt/arg_groups/attention_hook.py"
_REGISTRY = "sglang/srt/layers/attention/attention_registry.py"
_XQA_MASK = "Mask is required for speculative decoding"  # FlashInfer xqa.py, q_len_per_req > 1
_XQA = "flashinfer/xqa.py"
_TRTLLM_PAGE = "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, changing page_size from {page_size} to 64."  # noqa: E501 (SGLang text, kept whole for grep)

ATTENTION_RULES: tuple[Rule, ...] = (
    Rule(
        id="trtllm_mha_page_size",
        outcome=ADJUST,
        message=_TRTLLM_PAGE,
        detail="trtllm_mha kernels take pages of 16/32/64/128 tokens only",
        when=lambda c: (
            uses_trtllm_mha(c)
            and c.page_size is not None
            and c.page_size not in TRTLLM_MHA_PAGE_SIZES
        ),
        adjust=lambda c: replace(c, page_size=64),
        source=_OVERRIDES,
    ),
    Rule(
        id="fa3_fp8_e5m2_to_triton",
        outcome=ADJUST,
        message="FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="SGLang silently runs triton instead of fa3: the cell did not run fa3",
        when=lambda c: c.flags.attention_backend == "fa3" and c.kv_dtype == "fp8_e5m2",
        adjust=lambda c: replace(c, flags=replace(c.flags, attention_backend="triton")),
        source=_OVERRIDES,
    ),
    Rule(
        id="trtllm_mha_prefill_gpu",
        outcome=REJECT,
        until="0.5.19",
        message="TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). Please use a different prefill backend.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="SGLang 0.5.17 runs trtllm_mha prefill on SM100/SM103 only (no fmha_v2 yet)",
        when=lambda c: c.flags.prefill == "trtllm_mha" and c.family not in SM100_FAMILY,
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_prefill_gpu",
        outcome=REJECT,
        since="0.5.19",
        message="TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. Please use a different prefill backend.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="trtllm_mha prefill runs fmha_v2 (SM90/SM120) or trtllm-gen (SM100/SM103) only",
        when=lambda c: c.flags.prefill == "trtllm_mha" and c.family not in TRTLLM_MHA_FAMILIES,
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_sm120_fp8_or_prefill_skip_softmax",
        outcome=REJECT,
        since="0.5.19",
        message="TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="checks the CLI value only: pass --kv-cache-dtype bf16 for FP8-KV checkpoints",
        when=lambda c: (
            c.flags.prefill == "trtllm_mha"
            and c.family == "SM120"
            and (c.kv_dtype == "fp8_e4m3" or on(c.skip_prefill))
        ),
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_decode_gpu",
        outcome=REJECT,
        message="TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120) GPUs. Please use a different decode backend.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="trtllm_mha decode runs XQA (SM90/SM120) or trtllm-gen (SM100/SM103) only",
        when=lambda c: c.flags.decode == "trtllm_mha" and c.family not in TRTLLM_MHA_FAMILIES,
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_prefill_context_parallel",
        outcome=REJECT,
        since="0.5.19",
        until="0.5.20",
        message="Prefill context parallelism with the TRTLLM MHA prefill backend requires SM100 (trtllm-gen context kernel): the SM90/SM120 fmha_v2 prefill path does not implement CP shard masking.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="0.5.19 checks --enable-prefill-context-parallel or --attn-cp-size > 1",
        when=lambda c: (
            c.flags.prefill == "trtllm_mha"
            and c.family not in SM100_FAMILY
            and (c.prefill_cp or c.attn_cp_size > 1)
        ),
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_prefill_context_parallel",
        outcome=REJECT,
        since="0.5.20",
        message="Prefill context parallelism with the TRTLLM MHA prefill backend requires SM100 (trtllm-gen context kernel): the SM90/SM120 fmha_v2 prefill path does not implement CP shard masking.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="0.5.20+ checks --attn-cp-size > 1",
        when=lambda c: (
            c.flags.prefill == "trtllm_mha" and c.family not in SM100_FAMILY and c.attn_cp_size > 1
        ),
        source=_ATTENTION_HOOK,
    ),
    Rule(
        id="trtllm_mha_spec_topk",
        outcome=REJECT,
        message="trtllm_mha backend only supports topk = 1 for speculative decoding.",
        detail="trtllm_mha verifies chains only",
        when=lambda c: (
            c.speculative
            and (c.topk or 1) > 1
            and "trtllm_mha" in {c.flags.prefill, c.flags.decode}
        ),
        source=_SPEC_HOOK,
    ),
    Rule(
        id="page_tree_spec_backends",
        outcome=REJECT,
        message="speculative_eagle_topk > 1 with page_size > 1 is only supported on ('flashinfer', 'fa3', 'triton'); got attention_backend={backend_outside_page_tree}",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="tree drafts over paged KV need the page-tree path of flashinfer, fa3 or triton",
        when=lambda c: (
            c.speculative
            and (c.topk or 1) > 1
            and (c.page_size or 1) > 1
            and message_fields(c)["backend_outside_page_tree"] is not None
        ),
        source=_SPEC_HOOK,
    ),
    Rule(
        id="deterministic_backend",
        outcome=REJECT,
        message="Currently only {deterministic_backends} attention backends are supported for deterministic inference, but you explicitly specified '{backend_outside_deterministic}'.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="--enable-deterministic-inference has no trtllm_mha path",
        when=lambda c: (
            c.deterministic and message_fields(c)["backend_outside_deterministic"] is not None
        ),
        source=_OVERRIDES,
    ),
    Rule(
        id="trtllm_mha_mla",
        outcome=CRASH,
        message="trtllm_mha backend can only be used with non-MLA models.",
        detail="raised when the backend is created, after the arguments were accepted",
        when=lambda c: uses_trtllm_mha(c) and c.is_mla,
        source=_REGISTRY,
    ),
    Rule(
        id="fa3_gpu",
        outcome=CRASH,
        message="FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="asserted when the backend is created: capability major 8 (non-MLA) or 9 only",
        when=lambda c: (
            "fa3" in c.flags.backends()
            and not (c.family == "SM90" or (c.family in SM8X and not c.is_mla))
        ),
        source=_REGISTRY,
    ),
    Rule(
        id="xqa_spec_verify_mask",
        outcome=CRASH,
        until="0.5.21",
        message=_XQA_MASK,
        detail="XQA verify/draft-extend has no mask: asserts in CUDA-graph capture (PR #32269)",
        when=lambda c: _xqa_runs(c, c.flags.verify) or _xqa_runs(c, c.flags.draft_extend),
        source=_XQA,
    ),
    Rule(
        id="xqa_spec_verify_mask",
        outcome=CRASH,
        since="0.5.21",
        until="0.5.22",
        message=_XQA_MASK,
        detail="0.5.21 passes XQA its mask for target-verify only: draft-extend on XQA asserts",
        when=lambda c: _xqa_runs(c, c.flags.draft_extend),
        source=_XQA,
    ),
    Rule(
        id="skip_softmax_decode_xqa",
        outcome=NO_EFFECT,
        message=SILENT,
        detail=(
            "FlashInfer 0.6.18-0.7.4 drop the decode factor on the xqa branch of "
            "trtllm_batch_decode_with_kv_cache (read): it does nothing on SM90/SM120"
        ),
        when=lambda c: (
            on(c.skip_decode) and c.family in XQA_FAMILIES and "trtllm_mha" in _spec_backends(c)
        ),
        source="flashinfer/decode.py",
    ),
    Rule(
        id="skip_softmax_decode_unused",
        outcome=NO_EFFECT,
        message=SILENT,
        detail="no decode, verify or draft backend of this cell reads the decode factor",
        when=lambda c: on(c.skip_decode) and not (_spec_backends(c) & SKIP_SOFTMAX_CONSUMERS),
    ),
    Rule(
        id="skip_softmax_prefill_unused",
        outcome=NO_EFFECT,
        message=SILENT,
        detail="the prefill backend of this cell does not read the prefill factor",
        when=lambda c: on(c.skip_prefill) and c.flags.prefill not in SKIP_SOFTMAX_CONSUMERS,
    ),
)

# Speculative-parameter hooks run before the attention-backend checks, runtime checks last.
RULES: tuple[Rule, ...] = (*SPEC_RULES, *MODEL_ARG_RULES, *ATTENTION_RULES, *MODEL_RUNTIME_RULES)
