"""The arguments of ``trtllm_fmha_v2_prefill``, built as SGLang 0.5.19's trtllm_mha prefill does.

FlashInfer 0.6.18's fmha_v2 launcher (``csrc/fmha_v2_run.cu``) takes each tensor's data pointer and
its *shape*; it never reads a tensor's strides. K/V addresses come from ``page_idx * 2`` (K) and
``page_idx * 2 + 1`` (V) blocks of ``page_size * Hkv * D`` elements from the pool's first byte, and
tokens from ``Hkv * D`` steps inside a block. So every tensor it reads must be *contiguous* in the
layout its shape names. A pool with the right shape ``[pages, 2, page, Hkv, D]`` but the strides of
``[pages, page, 2, Hkv, D]`` is read as garbage, with no error; FA3 reads the same pool correctly
because it honours strides. That is what made the probe's first two H200 runs report fmha_v2
errors of 4.5 to 7 (``benchmarks/results/kernel-probe-h200/README.md``). ``fmha_v2_kwargs``
refuses such tensors instead.

SGLang (``trtllm_mha_backend.py``, plain prefill, no prefix):
``paged_kv = torch.stack([k_cache, v_cache], dim=1)`` (contiguous), ``seq_lens`` = KV lengths
(int32 ``[B]``), ``cum_seq_lens_q = cum_seq_lens_kv`` = ``pad(cumsum(seq_lens), (1, 0))`` (int32
``[B + 1]``), ``block_tables`` = page ids (``slot // page_size``, int32 ``[B, pages]``), scales
``sm_scale`` / 1 (fp8: ``q * k * sm_scale`` / ``v``), ``mask_mode="causal"``. It passes
``max_kv_len = max_context_len``; the kernel only uses it for launch sizing, and the probe passes
the true maximum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from backends.probe.kernels import PagedBatch

INPUT_LAYOUT = "Q_PAGED_KV_NHD"


def require_contiguous(name: str, tensor: torch.Tensor) -> None:
    """Raise unless ``tensor`` is laid out as its shape says (fmha_v2 ignores strides).

    Raises:
        ValueError: Naming the tensor, its shape and strides, and the fix.
    """
    if not tensor.is_contiguous():
        raise ValueError(
            f"fmha_v2 input {name!r} (shape {tuple(tensor.shape)}, strides {tensor.stride()}) is "
            "not contiguous: FlashInfer's fmha_v2 reads tensors by shape and ignores strides, so "
            "it would read the wrong elements; pass tensor.contiguous() (or allocate with "
            "torch.empty(shape), not torch.empty_like of a view)"
        )


def fmha_v2_scales(batch: PagedBatch) -> tuple[float, float]:
    """``(bmm1_scale, bmm2_scale)``: sm_scale and 1, with fp8 dequantisation folded in."""
    dim = batch.q.shape[2]
    sq, sk, sv = batch.scales
    if batch.fp8:
        return dim**-0.5 * sq * sk, sv
    return dim**-0.5, 1.0


def fmha_v2_kwargs(
    batch: PagedBatch, workspace: torch.Tensor, out: torch.Tensor, factor: float
) -> dict[str, Any]:
    """Keyword arguments of ``trtllm_fmha_v2_prefill`` for ``batch`` (checked, not copied).

    Args:
        batch: Token-major queries, the NHD page pool and its block tables.
        workspace: uint8 scratch buffer (FlashInfer's tests use 128 MiB, the probe 256 MiB).
        out: bf16 ``[tokens, heads, dim]`` buffer the kernel writes in place.
        factor: Skip-softmax threshold scale factor (0 = off).

    Raises:
        ValueError: A tensor the kernel would misread (non-contiguous, wrong dtype or shape).
    """
    import torch

    for name, tensor in _tensors(batch, out):
        require_contiguous(name, tensor)
    for name, tensor in (("block_tables", batch.block_tables), ("seq_lens", batch.seq_lens)):
        if tensor.dtype != torch.int32:
            raise ValueError(f"fmha_v2 input {name!r} is {tensor.dtype}; it must be int32")
    if batch.cum_seq_lens.dtype != torch.int32 or batch.cum_seq_lens.numel() != batch.batch + 1:
        raise ValueError("fmha_v2 input 'cum_seq_lens' must be int32 of length batch + 1")
    if out.shape != batch.q.shape or out.dtype != torch.bfloat16:
        raise ValueError(f"fmha_v2 output must be bf16 {tuple(batch.q.shape)}, got {out.shape}")
    bmm1, bmm2 = fmha_v2_scales(batch)
    return {
        "qkv": (batch.q, batch.paged_kv),
        "input_layout": INPUT_LAYOUT,
        "workspace_buffer": workspace,
        "seq_lens": batch.seq_lens,
        "max_q_len": batch.seqlen,
        "max_kv_len": batch.seqlen,
        "bmm1_scale": bmm1,
        "bmm2_scale": bmm2,
        "batch_size": batch.batch,
        "cum_seq_lens_q": batch.cum_seq_lens,
        "cum_seq_lens_kv": batch.cum_seq_lens,
        "block_tables": batch.block_tables,
        "out": out,
        "out_dtype": torch.bfloat16,
        "mask_mode": "causal",
        "skip_softmax_threshold_scale_factor": float(factor),
    }


def _tensors(batch: PagedBatch, out: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
    return [
        ("q", batch.q),
        ("paged_kv", batch.paged_kv),
        ("block_tables", batch.block_tables),
        ("seq_lens", batch.seq_lens),
        ("cum_seq_lens", batch.cum_seq_lens),
        ("out", out),
    ]


def read_as_fmha_v2(paged_kv: torch.Tensor) -> torch.Tensor:
    """The pool as fmha_v2 sees it: its bytes in storage order, viewed with its shape.

    Equal to ``paged_kv`` exactly when it is contiguous; a CPU stand-in for the kernel reads pages
    through this, so a pool fmha_v2 would misread gives wrong results in the unit tests too.
    """
    import torch

    strides: list[int] = []
    step = 1
    for size in reversed(paged_kv.shape):
        strides.insert(0, step)
        step *= size
    # Element [0, ..., 0] is the lowest address of a dense tensor with positive strides.
    return torch.as_strided(paged_kv, paged_kv.shape, strides, paged_kv.storage_offset())
