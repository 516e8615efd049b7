"""The two FlashInfer 0.6.18 prefill kernels on one paged KV cache, as SGLang calls them.

- **fmha_v2**: ``flashinfer.prefill.trtllm_fmha_v2_prefill`` with layout ``Q_PAGED_KV_NHD``
  (what SGLang's trtllm_mha backend runs for prefill on SM90). FP8 runs with query, keys and
  values all in e4m3 (the module is chosen by the query's dtype) and per-tensor scales folded in
  as ``bmm1_scale = sm_scale * q_scale * k_scale`` and ``bmm2_scale = v_scale``, bf16 output, as
  FlashInfer's own fmha_v2 fp8 tests do.
- **fa3**: ``BatchPrefillWithPagedKVCacheWrapper(..., backend="fa3")``. In 0.6.18 its FP8 path
  needs an e4m3 query too (``gen_batch_prefill_module``: fp8 tensor cores when the query is fp8;
  a bf16 query with an fp8 cache would be a mixed wgmma it does not build). The scales go to
  ``run(q, kv, q_scale, k_scale, v_scale)`` positionally: floats become the kernel's scalar
  ``scale_q/k/v`` (``_split_scale_param``) and ``StandardFP8Attention`` applies them inside the
  kernel, so no extra elementwise pass is timed. Output is bf16 (fp8 output is not supported).

Both read the same pool of pages, shuffled so that block tables are not the identity. The pool
must be contiguous: fmha_v2 reads tensors by shape and ignores strides (``fmha_v2_call``).
FlashInfer is imported inside the functions that call it: importing it on a machine without a GPU
fails (a submodule queries the device at import).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from backends.probe.fmha_v2_call import fmha_v2_kwargs
from backends.probe.inputs import AttentionInputs

FP8_MAX = 448.0  # largest finite float8_e4m3fn
WORKSPACE_BYTES = 256 * 2**20  # what the first live fmha_v2 call on an H200 ran with


@dataclass
class PagedBatch:
    """Kernel inputs: token-major queries and a shuffled NHD page pool with its block tables."""

    q: torch.Tensor  # [B*L, H, D], bf16 or float8_e4m3fn
    paged_kv: torch.Tensor  # [pages, 2, page_size, Hkv, D]
    block_tables: torch.Tensor  # [B, pages per sequence] int32
    seq_lens: torch.Tensor  # [B] int32
    cum_seq_lens: torch.Tensor  # [B + 1] int32
    batch: int
    seqlen: int
    page_size: int
    scales: tuple[float, float, float]  # q, k, v dequantisation scales (1.0 for bf16)

    @property
    def fp8(self) -> bool:
        """True when the kernels run e4m3 inputs."""
        return bool(self.q.dtype == torch.float8_e4m3fn)


def quantize_fp8(x: torch.Tensor) -> tuple[torch.Tensor, float]:
    """Per-tensor e4m3 quantisation: ``x ~= x8 * scale`` with ``scale = amax / 448``."""
    scale = max(float(x.abs().max()) / FP8_MAX, 1e-12)
    return (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


def kernel_inputs(
    inputs: AttentionInputs, kv_dtype: str, page_size: int, seed: int = 0
) -> tuple[PagedBatch, AttentionInputs]:
    """Round the fp32 inputs to what the kernels read, and page the keys and values.

    Args:
        inputs: fp32 q, k, v (``backends.probe.inputs.make_inputs``).
        kv_dtype: ``bf16`` or ``fp8_e4m3`` (values are rounded to bf16 first, as a model's are).
        page_size: Tokens per page.
        seed: Seed of the page shuffle.

    Returns:
        The kernels' batch, and the same values back in fp32 for the reference.
    """
    q, k, v = (t.to(torch.bfloat16) for t in (inputs.q, inputs.k, inputs.v))
    scales = (1.0, 1.0, 1.0)
    if kv_dtype == "fp8_e4m3":
        (q, sq), (k, sk), (v, sv) = (
            quantize_fp8(q.float()),
            quantize_fp8(k.float()),
            quantize_fp8(v.float()),
        )
        scales = (sq, sk, sv)
    elif kv_dtype != "bf16":
        raise ValueError(f"kv_dtype {kv_dtype!r}: the kernels run bf16 or fp8_e4m3")
    seen = AttentionInputs(
        q.float() * scales[0],
        k.float() * scales[1],
        v.float() * scales[2],
        inputs.batch,
        inputs.seqlen,
    )
    paged, tables = _page(k, v, inputs.batch, inputs.seqlen, page_size, seed)
    dev = q.device
    lens = torch.full((inputs.batch,), inputs.seqlen, dtype=torch.int32, device=dev)
    cum = torch.arange(inputs.batch + 1, dtype=torch.int32, device=dev) * inputs.seqlen
    batch = PagedBatch(q, paged, tables, lens, cum, inputs.batch, inputs.seqlen, page_size, scales)
    return batch, seen


def _page(
    k: torch.Tensor, v: torch.Tensor, batch: int, seqlen: int, page: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scatter keys and values into ``[pages, 2, page, Hkv, D]`` at shuffled page ids."""
    if k.dtype == torch.float8_e4m3fn:
        # Copies and index_put of float8 are not implemented everywhere: move the bytes instead.
        pool, tables = _page(k.view(torch.uint8), v.view(torch.uint8), batch, seqlen, page, seed)
        return pool.view(k.dtype), tables
    per_seq = math.ceil(seqlen / page)
    kv = torch.stack([k, v], dim=1).view(batch, seqlen, 2, *k.shape[1:])
    pad = per_seq * page - seqlen
    if pad:
        kv = torch.cat([kv, kv.new_zeros(batch, pad, *kv.shape[2:])], dim=1)
    kv = kv.view(batch, per_seq, page, 2, *k.shape[1:]).transpose(2, 3)
    kv = kv.reshape(batch * per_seq, 2, page, *k.shape[1:])  # a strided view, not a copy
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(batch * per_seq, generator=gen).to(k.device)
    # Not empty_like(kv): that keeps kv's strides, i.e. the bytes of [pages, page, 2, Hkv, D].
    # FA3 follows strides and read that right; fmha_v2 reads by shape and got garbage.
    pool = torch.empty(kv.shape, dtype=kv.dtype, device=kv.device)
    pool[perm] = kv
    return pool, perm.view(batch, per_seq).to(torch.int32)


def _poisoned(batch: PagedBatch) -> torch.Tensor:
    """The output buffer, NaN until a kernel writes it: an element never written shows up."""
    return torch.full(batch.q.shape, float("nan"), dtype=torch.bfloat16, device=batch.q.device)


def fmha_v2_runner(batch: PagedBatch) -> Callable[[float], torch.Tensor]:
    """A call of fmha_v2 on ``batch`` that takes the skip-softmax factor and returns the output."""
    from flashinfer.prefill import trtllm_fmha_v2_prefill

    from backends.probe.prune import prune_from_env

    prune_from_env()  # before the first call generates the module's sources

    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=batch.q.device)
    out = _poisoned(batch)
    kwargs = fmha_v2_kwargs(batch, workspace, out, 0.0)  # refuses a batch it would misread

    def call(factor: float) -> torch.Tensor:
        factor_kw = {"skip_softmax_threshold_scale_factor": float(factor)}
        written: torch.Tensor = trtllm_fmha_v2_prefill(**kwargs | factor_kw)
        return written

    return call


def fa3_runner(batch: PagedBatch, num_kv_heads: int) -> Callable[[float], torch.Tensor]:
    """A planned FA3 paged prefill on ``batch``; it ignores the factor (FA3 has no skip)."""
    import flashinfer

    dev, heads, dim = batch.q.device, batch.q.shape[1], batch.q.shape[2]
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=dev)
    wrapper = flashinfer.BatchPrefillWithPagedKVCacheWrapper(workspace, "NHD", backend="fa3")
    per_seq = batch.block_tables.shape[1]
    kv_indptr = torch.arange(batch.batch + 1, dtype=torch.int32, device=dev) * per_seq
    last = batch.seqlen - (per_seq - 1) * batch.page_size
    last_len = torch.full((batch.batch,), last, dtype=torch.int32, device=dev)
    wrapper.plan(
        batch.cum_seq_lens,
        kv_indptr,
        batch.block_tables.flatten().contiguous(),
        last_len,
        heads,
        num_kv_heads,
        dim,
        batch.page_size,
        causal=True,
        q_data_type=batch.q.dtype,
        kv_data_type=batch.paged_kv.dtype,
        o_data_type=torch.bfloat16,
    )
    out = _poisoned(batch)
    scales = batch.scales if batch.fp8 else ()

    def call(factor: float = 0.0) -> torch.Tensor:
        written: torch.Tensor = wrapper.run(batch.q, batch.paged_kv, *scales, out=out)
        return written

    return call


def make_runner(
    kernel: str, batch: PagedBatch, num_kv_heads: int
) -> Callable[[float], torch.Tensor]:
    """The runner of ``kernel`` (``fmha_v2`` or ``fa3``) on ``batch``."""
    if kernel == "fmha_v2":
        return fmha_v2_runner(batch)
    if kernel == "fa3":
        return fa3_runner(batch, num_kv_heads)
    raise ValueError(f"kernel {kernel!r} is not fmha_v2 or fa3")
