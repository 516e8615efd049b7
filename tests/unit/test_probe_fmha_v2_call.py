"""fmha_v2's arguments against what SGLang 0.5.19's trtllm_mha prefill builds (CPU torch).

SGLang keeps K and V in token-slot buffers, views them as ``[pages, page, Hkv, D]``, stacks them
into a contiguous ``[pages, 2, page, Hkv, D]`` pool, and derives the page table from its
``req_to_token`` map (``slot // page_size``). Built here from the probe's own page assignment, it
must give the same pool (values *and* memory layout: fmha_v2 reads by shape, not strides), the same
block tables and the same lengths.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from backends.probe.fmha_v2_call import (  # noqa: E402
    fmha_v2_kwargs,
    read_as_fmha_v2,
    require_contiguous,
)
from backends.probe.inputs import make_inputs  # noqa: E402
from backends.probe.kernels import PagedBatch, kernel_inputs  # noqa: E402
from backends.probe.probe_conf import InputProfile  # noqa: E402

SMALL = (4, 2, 64)
LLAMA = (32, 8, 128)


def _sglang_call_tensors(seen_kv, block_tables, seqlens, page):
    """paged_kv, page_table, seq_lens, cu_seqlens_q/k as trtllm_mha_backend.py makes them."""
    k_seqs, v_seqs = seen_kv
    num_pages = int(block_tables.max()) + 1
    kv_heads, dim = k_seqs[0].shape[1:]
    k_raw = torch.zeros(num_pages * page, kv_heads, dim, dtype=k_seqs[0].dtype)
    v_raw = torch.zeros_like(k_raw)
    width = block_tables.shape[1] * page
    req_to_token = torch.zeros(len(seqlens), width, dtype=torch.int64)
    for b, length in enumerate(seqlens):
        t = torch.arange(width)
        req_to_token[b] = block_tables[b, t // page].long() * page + t % page
        k_raw[req_to_token[b, :length]] = k_seqs[b]
        v_raw[req_to_token[b, :length]] = v_seqs[b]
    k_cache, v_cache = k_raw.view(-1, page, kv_heads, dim), v_raw.view(-1, page, kv_heads, dim)
    paged_kv = torch.stack([k_cache, v_cache], dim=1)
    pages_per_seq = math.ceil(max(seqlens) / page)
    page_table = (req_to_token[:, ::page][:, :pages_per_seq] // page).to(torch.int32)
    seq_lens = torch.tensor(seqlens, dtype=torch.int32)
    cu = torch.nn.functional.pad(torch.cumsum(seq_lens, dim=0, dtype=torch.int32), (1, 0))
    return paged_kv, page_table, seq_lens, cu


def _kwargs(batch):
    out = torch.full(batch.q.shape, float("nan"), dtype=torch.bfloat16)
    return fmha_v2_kwargs(batch, torch.zeros(16, dtype=torch.uint8), out, 0.5), out


@pytest.mark.parametrize(
    ("batch", "seqlen", "page", "heads"),
    [(1, 128, 64, LLAMA), (4, 256, 64, SMALL), (3, 100, 32, SMALL), (2, 64, 16, SMALL)],
)
def test_arguments_match_sglangs(batch, seqlen, page, heads):
    x = make_inputs(InputProfile(sink_logit=5), batch, seqlen, heads, seed=3)
    paged, seen = kernel_inputs(x, "bf16", page, seed=4)
    kv = ([seen.sequence(b)[i].bfloat16() for b in range(batch)] for i in (1, 2))
    sg_kv, sg_table, sg_lens, sg_cu = _sglang_call_tensors(
        tuple(kv), paged.block_tables, [seqlen] * batch, page
    )
    kw, out = _kwargs(paged)
    q, pool = kw["qkv"]
    assert pool.shape == sg_kv.shape == (batch * math.ceil(seqlen / page), 2, page, *heads[1:])
    assert pool.stride() == sg_kv.stride() and torch.equal(pool, sg_kv)
    assert torch.equal(read_as_fmha_v2(pool), sg_kv)  # the bytes, read as the kernel reads them
    assert kw["block_tables"].dtype == torch.int32 and torch.equal(kw["block_tables"], sg_table)
    assert kw["seq_lens"].dtype == torch.int32 and torch.equal(kw["seq_lens"], sg_lens)
    for key in ("cum_seq_lens_q", "cum_seq_lens_kv"):
        assert kw[key].dtype == torch.int32 and kw[key].tolist() == sg_cu.tolist()
    assert q.shape == (batch * seqlen, heads[0], heads[2]) and q.is_contiguous()
    assert (kw["max_q_len"], kw["max_kv_len"], kw["batch_size"]) == (seqlen, seqlen, batch)
    assert kw["bmm1_scale"] == pytest.approx(heads[2] ** -0.5) and kw["bmm2_scale"] == 1.0
    assert kw["input_layout"] == "Q_PAGED_KV_NHD" and kw["mask_mode"] == "causal"
    assert kw["out"] is out and kw["out_dtype"] == torch.bfloat16
    assert kw["skip_softmax_threshold_scale_factor"] == 0.5


def test_fp8_scales_fold_into_the_bmm_scales():
    x = make_inputs(InputProfile(sink_logit=20), 2, 128, SMALL, seed=2)
    paged, _ = kernel_inputs(x, "fp8_e4m3", 32)
    kw, _ = _kwargs(paged)
    sq, sk, sv = paged.scales
    assert kw["bmm1_scale"] == pytest.approx(64**-0.5 * sq * sk) and kw["bmm2_scale"] == sv
    assert kw["qkv"][1].dtype == torch.float8_e4m3fn and kw["qkv"][1].is_contiguous()


def _strided_pool(paged):
    """The pool as the probe built it before the fix: right shape, [pages, page, 2, ...] bytes."""
    pool = paged.paged_kv
    pages, two, page, *rest = pool.shape
    old = torch.empty(pages, page, two, *rest, dtype=pool.dtype).transpose(1, 2)
    old.copy_(pool)
    return old


def test_a_pool_fmha_v2_would_misread_is_refused():
    x = make_inputs(InputProfile(), 1, 128, SMALL, seed=2)
    paged, _ = kernel_inputs(x, "bf16", 64)
    old = _strided_pool(paged)
    assert torch.equal(old, paged.paged_kv)  # same values through strides, as FA3 reads them
    assert not torch.equal(read_as_fmha_v2(old), paged.paged_kv)  # not as fmha_v2 reads them
    bad = PagedBatch(**{**vars(paged), "paged_kv": old})
    with pytest.raises(ValueError, match=r"'paged_kv'.*not contiguous"):
        _kwargs(bad)


@pytest.mark.parametrize("field", ["block_tables", "seq_lens", "cum_seq_lens"])
def test_int64_lengths_and_tables_are_refused(field):
    x = make_inputs(InputProfile(), 2, 64, SMALL, seed=2)
    paged, _ = kernel_inputs(x, "bf16", 32)
    bad = PagedBatch(**{**vars(paged), field: getattr(paged, field).long()})
    with pytest.raises(ValueError, match=field):
        _kwargs(bad)


def test_require_contiguous_names_the_tensor():
    require_contiguous("q", torch.zeros(4, 2, 8))
    with pytest.raises(ValueError, match=r"'q'.*strides"):
        require_contiguous("q", torch.zeros(8, 2, 4).transpose(0, 2))
