"""The input generators: shapes, seeds, and that each knob moves the logits as documented."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from backends.probe.inputs import make_inputs, rope  # noqa: E402
from backends.probe.probe_conf import InputProfile  # noqa: E402

HEADS = (4, 2, 128)


def _logits(inputs, head=0):
    """Logits of one query head over all keys of sequence 0: [L, L]."""
    q, k, _ = inputs.sequence(0)
    group = q.shape[1] // k.shape[1]
    return q[:, head] @ k[:, head // group].T / math.sqrt(q.shape[-1])


@pytest.mark.parametrize(("batch", "seqlen"), [(1, 64), (3, 100)])
def test_shapes_and_dtype(batch, seqlen):
    x = make_inputs(InputProfile(), batch, seqlen, HEADS, seed=1)
    assert x.q.shape == (batch * seqlen, 4, 128)
    assert x.k.shape == x.v.shape == (batch * seqlen, 2, 128)
    assert x.q.dtype == torch.float32


def test_seed_decides_the_inputs():
    a, b = (make_inputs(InputProfile(sink_logit=5), 2, 64, HEADS, seed=s) for s in (7, 7))
    c = make_inputs(InputProfile(sink_logit=5), 2, 64, HEADS, seed=8)
    assert torch.equal(a.q, b.q) and torch.equal(a.v, b.v)
    assert not torch.equal(a.q, c.q)
    assert not torch.equal(a.sequence(0)[0], a.sequence(1)[0])  # each sequence draws its own


@pytest.mark.parametrize("std", [0.5, 1.0, 2.5])
def test_logit_std_is_the_noise_std(std):
    logits = _logits(make_inputs(InputProfile(logit_std=std), 1, 512, HEADS, seed=0))
    assert float(logits.std()) == pytest.approx(std, rel=0.08)


@pytest.mark.parametrize("sink", [8.0, 20.0])
def test_sink_lifts_key_zero_for_every_query(sink):
    logits = _logits(make_inputs(InputProfile(sink_logit=sink), 1, 512, HEADS, seed=0), head=3)
    gap = logits[:, 0] - logits[:, 1:].mean(dim=1)
    assert float(gap.mean()) == pytest.approx(sink, rel=0.1)


def test_locality_peaks_at_distance_zero_and_decays():
    x = make_inputs(InputProfile(logit_std=0.0, local_logit=10.0), 1, 4096, HEADS, seed=0)
    logits = _logits(x)
    at = {d: float(torch.diagonal(logits, -d).mean()) for d in (0, 1, 100, 3000)}
    assert at[0] == pytest.approx(10.0, rel=0.02)
    assert at[0] > at[1] > at[100] > at[3000]
    assert abs(at[3000]) < 2.5


def test_rope_keeps_norms_and_depends_on_distance_only():
    x = torch.randn(6, 1, 64)
    pos = torch.arange(6)
    r = rope(x, pos, 10000.0)
    assert torch.allclose(r.norm(dim=-1), x.norm(dim=-1), atol=1e-5)
    a, b = torch.randn(64), torch.randn(64)

    def dot(i, j):
        ra = rope(a.view(1, 1, 64), torch.tensor([i]), 500.0)
        rb = rope(b.view(1, 1, 64), torch.tensor([j]), 500.0)
        return float((ra * rb).sum())

    assert dot(3, 1) == pytest.approx(dot(12, 10), abs=1e-4)
