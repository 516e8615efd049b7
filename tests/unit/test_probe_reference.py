"""The fp32 reference and the skip-softmax estimate, against torch's own attention."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from backends.probe.inputs import make_inputs  # noqa: E402
from backends.probe.probe_conf import InputProfile  # noqa: E402
from backends.probe.reference import (  # noqa: E402
    reference,
    sample_blocks,
    tile_skip_ratios,
)

HEADS = (4, 2, 64)
FACTORS = (1.0, 10.0, 100.0, 1000.0)


def _sdpa(inputs):
    """torch's causal attention per sequence, KV heads repeated for GQA: [B*L, H, D]."""
    outs = []
    for b in range(inputs.batch):
        q, k, v = inputs.sequence(b)
        group = q.shape[1] // k.shape[1]
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        o = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), is_causal=True
        )
        outs.append(o.transpose(0, 1))
    return torch.cat(outs)


@pytest.mark.parametrize(("batch", "seqlen"), [(1, 200), (2, 256), (3, 64)])
def test_reference_matches_torch_attention(batch, seqlen):
    x = make_inputs(InputProfile(sink_logit=6, local_logit=4), batch, seqlen, HEADS, seed=3)
    ref = reference(x, sample_blocks(seqlen, 10**6))
    assert torch.equal(ref.rows, torch.arange(batch * seqlen))
    assert torch.allclose(ref.out, _sdpa(x), atol=2e-5, rtol=1e-4)


def test_sampled_blocks_and_chunks_give_the_same_rows():
    x = make_inputs(InputProfile(), 1, 1024, HEADS, seed=4)
    full = reference(x, sample_blocks(1024, 10**6), budget_mib=64)
    blocks = sample_blocks(1024, 256)
    part = reference(x, blocks, budget_mib=1)  # one 64-row block per chunk
    assert blocks == [0, 5, 10, 15]
    assert torch.allclose(part.out, full.out[part.rows], atol=1e-6)


@pytest.mark.parametrize(
    ("seqlen", "max_rows", "expected"),
    [
        (64, 8192, [0]),
        (200, 8192, [0, 1, 2, 3]),
        (64 * 100, 64 * 3, [0, 50, 99]),
        (64 * 100, 64, [0]),
    ],
)
def test_sample_blocks(seqlen, max_rows, expected):
    assert sample_blocks(seqlen, max_rows) == expected


def test_tile_skip_ratios_follow_the_running_max():
    inf = float("inf")
    # One head, one row, 6 keys in tiles of 2: maxima 5, 1, 7 -> ratios inf, e^(1-5), e^(7-5).
    logits = torch.tensor([[[5.0, 0.0, 1.0, -3.0, 7.0, 2.0]]])
    ratio = tile_skip_ratios(logits, 2)
    assert ratio[0, 0, 0] == inf
    assert float(ratio[0, 0, 1]) == pytest.approx(math.exp(-4))
    assert float(ratio[0, 0, 2]) == pytest.approx(math.exp(2))
    masked = torch.tensor([[[5.0, 0.0, -inf, -inf]]])
    assert float(tile_skip_ratios(masked, 2)[0, 0, 1]) == 0.0  # a masked tile is skippable
