"""What the kernels read: rounding, fp8 scales and the shuffled NHD page pool (CPU torch)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from backends.probe.inputs import make_inputs  # noqa: E402
from backends.probe.kernels import FP8_MAX, kernel_inputs, quantize_fp8  # noqa: E402
from backends.probe.probe_conf import InputProfile  # noqa: E402

HEADS = (4, 2, 64)


def _unpage(batch, b, dtype=torch.float32):
    """Keys and values of sequence ``b`` read back through its block table: [L, 2, Hkv, D]."""
    pool = batch.paged_kv
    if pool.element_size() == 1:
        pool = pool.float()
    pages = pool[batch.block_tables[b].long()]  # [P, 2, page, Hkv, D]
    return pages.transpose(1, 2).reshape(-1, 2, *pages.shape[3:])[: batch.seqlen].to(dtype)


@pytest.mark.parametrize(("batch", "seqlen", "page"), [(1, 128, 64), (3, 100, 32), (2, 64, 16)])
def test_pages_hold_each_sequence_in_order(batch, seqlen, page):
    x = make_inputs(InputProfile(sink_logit=5), batch, seqlen, HEADS, seed=2)
    paged, seen = kernel_inputs(x, "bf16", page, seed=9)
    per_seq = -(-seqlen // page)
    assert paged.paged_kv.shape == (batch * per_seq, 2, page, 2, 64)
    assert paged.paged_kv.dtype == torch.bfloat16
    assert paged.paged_kv.is_contiguous()  # fmha_v2 reads by shape: strides are ignored
    ids = paged.block_tables.flatten().sort().values
    assert torch.equal(ids, torch.arange(batch * per_seq, dtype=torch.int32))
    assert paged.cum_seq_lens.tolist() == [i * seqlen for i in range(batch + 1)]
    for b in range(batch):
        _, k, v = seen.sequence(b)
        kv = _unpage(paged, b)
        assert torch.equal(kv[:, 0], k) and torch.equal(kv[:, 1], v)


def test_pages_are_shuffled():
    x = make_inputs(InputProfile(), 2, 1024, HEADS, seed=2)
    paged, _ = kernel_inputs(x, "bf16", 16, seed=1)
    assert not torch.equal(paged.block_tables.flatten(), torch.arange(128, dtype=torch.int32))


def test_bf16_inputs_are_the_rounded_values():
    x = make_inputs(InputProfile(), 1, 64, HEADS, seed=2)
    paged, seen = kernel_inputs(x, "bf16", 64)
    assert paged.scales == (1.0, 1.0, 1.0) and not paged.fp8
    assert torch.equal(seen.q, x.q.bfloat16().float())
    assert torch.equal(paged.q.float(), seen.q)


def test_fp8_inputs_carry_their_scales():
    x = make_inputs(InputProfile(sink_logit=20), 2, 128, HEADS, seed=2)
    paged, seen = kernel_inputs(x, "fp8_e4m3", 32)
    assert paged.fp8 and paged.paged_kv.dtype == torch.float8_e4m3fn
    sq, sk, sv = paged.scales
    assert sq == pytest.approx(float(x.q.bfloat16().float().abs().max()) / FP8_MAX, rel=1e-6)
    assert torch.allclose(paged.q.float() * sq, seen.q)
    kv = _unpage(paged, 1)
    assert torch.allclose(kv[:, 0] * sk, seen.sequence(1)[1])
    assert torch.allclose(kv[:, 1] * sv, seen.sequence(1)[2])
    # e4m3 keeps 3 mantissa bits: relative error at most 2^-4 away from the subnormals.
    big = x.k.abs() > 0.1 * x.k.abs().max()
    assert float(((seen.k - x.k).abs() / x.k.abs())[big].max()) <= 2**-4 + 1e-3


def test_quantize_fp8_uses_the_whole_range():
    x8, scale = quantize_fp8(torch.tensor([-3.0, 0.5, 1.5]))
    assert scale == pytest.approx(3.0 / FP8_MAX)
    assert float(x8.float().abs().max()) == FP8_MAX


def test_unknown_kv_dtype_is_an_error():
    x = make_inputs(InputProfile(), 1, 64, HEADS)
    with pytest.raises(ValueError, match="fp8_e5m2"):
        kernel_inputs(x, "fp8_e5m2", 64)
