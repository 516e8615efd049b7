"""Synthetic attention inputs shaped like real models' attention, so that skip-softmax engages.

Random Gaussian queries and keys give diffuse attention: every key's logit is within a few units
of every other's, no key block ever falls far below the running maximum, and skip-softmax never
skips (the probe saw exactly that on an H200). Trained models concentrate: a few
"sink" tokens at the start take a large share of every query's attention, nearby tokens score
higher than far ones (RoPE's long-range decay), and logits span tens of units. The generators here
build each of those effects from independent parts, in logit units (logit = q . k / sqrt(d)):

- **noise** (``logit_std``): q and k get i.i.d. N(0, 1) parts; q's part is scaled by
  ``logit_std``, so the random part of each logit is ~N(0, logit_std^2). ``logit_std`` is the
  query scale of the README's runs.
- **sink** (``sink_logit``): a direction ``u`` per KV head is added to every query of that head
  and to key 0, scaled so that u_q . u_k / sqrt(d) = ``sink_logit``: key 0 scores that much above
  the noise for every query, like a BOS sink.
- **locality** (``local_logit``, ``rope_base``): a content vector ``c`` per KV head is added to
  every query and key, and both are then rotated by RoPE at their positions. Their dot product is
  sum_f |c_f|^2 cos((i - j) theta_f): ``local_logit`` at distance 0, falling roughly with
  log(distance) / log(rope_base) and near zero past ``rope_base`` tokens.

Values are i.i.d. N(0, 1). Every tensor is made in fp32 from a seeded generator on the requested
device, then cast, so the same seed gives the same inputs on CPU and GPU up to the generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from backends.probe.probe_conf import InputProfile


@dataclass(frozen=True)
class AttentionInputs:
    """One batch of prefill inputs: ``q [B*L, H, D]``, ``k`` and ``v [B*L, Hkv, D]`` (fp32)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    batch: int
    seqlen: int

    def sequence(self, b: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The q, k, v rows of sequence ``b``."""
        rows = slice(b * self.seqlen, (b + 1) * self.seqlen)
        return self.q[rows], self.k[rows], self.v[rows]


def rope(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """Rotate ``x [L, heads, D]`` by RoPE (NeoX halves) at ``positions [L]``.

    Args:
        x: Vectors to rotate; D must be even.
        positions: Token positions, one per row.
        base: RoPE base (theta_f = base ** (-2f / D)).

    Returns:
        The rotated vectors, same shape and dtype.
    """
    half = x.shape[-1] // 2
    inv_freq = base ** (-torch.arange(half, device=x.device, dtype=torch.float32) / half)
    angles = positions.to(torch.float32)[:, None] * inv_freq[None, :]
    cos, sin = angles.cos()[:, None, :], angles.sin()[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def _unit_directions(n: int, d: int, gen: torch.Generator, device: torch.device) -> torch.Tensor:
    """``n`` random directions of norm sqrt(d), so that u . u / sqrt(d) = sqrt(d)."""
    u = torch.randn(n, d, generator=gen, device=device)
    unit: torch.Tensor = u / u.norm(dim=-1, keepdim=True) * math.sqrt(d)
    return unit


def make_inputs(
    profile: InputProfile,
    batch: int,
    seqlen: int,
    heads: tuple[int, int, int],
    seed: int = 0,
    device: str | torch.device = "cpu",
) -> AttentionInputs:
    """Build causal-prefill inputs for ``batch`` sequences of ``seqlen`` tokens.

    Args:
        profile: Noise, sink and locality strengths (see the module docstring).
        batch: Number of sequences.
        seqlen: Tokens per sequence.
        heads: (query heads, KV heads, head dim) on one GPU.
        seed: Seed of the generator; each sequence draws its own noise.
        device: Where to build the tensors.

    Returns:
        fp32 q, k, v in the token-major layout the kernels take.
    """
    num_heads, num_kv, dim = heads
    dev = torch.device(device)
    gen = torch.Generator(device=dev).manual_seed(seed)
    sink_dir = _unit_directions(num_kv, dim, gen, dev)
    content = _unit_directions(num_kv, dim, gen, dev)
    parts = [
        _sequence(profile, seqlen, (num_heads, num_kv, dim), sink_dir, content, gen)
        for _ in range(batch)
    ]
    q, k, v = (torch.cat([p[i] for p in parts]) for i in range(3))
    return AttentionInputs(q, k, v, batch, seqlen)


def _sequence(
    profile: InputProfile,
    seqlen: int,
    heads: tuple[int, int, int],
    sink_dir: torch.Tensor,
    content: torch.Tensor,
    gen: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    num_heads, num_kv, dim = heads
    dev, group = sink_dir.device, num_heads // num_kv
    q = torch.randn(seqlen, num_heads, dim, generator=gen, device=dev) * profile.logit_std
    k = torch.randn(seqlen, num_kv, dim, generator=gen, device=dev)
    v = torch.randn(seqlen, num_kv, dim, generator=gen, device=dev)
    if profile.local_logit:
        # |c|^2 = d, so (s c) . (s c) / sqrt(d) = s^2 sqrt(d) = local_logit at distance 0.
        s = math.sqrt(profile.local_logit / math.sqrt(dim))
        pos = torch.arange(seqlen, device=dev)
        q = q + rope(
            s * content.repeat_interleave(group, 0)[None].expand_as(q), pos, profile.rope_base
        )
        k = k + rope(s * content[None].expand_as(k), pos, profile.rope_base)
    if profile.sink_logit:
        s = math.sqrt(profile.sink_logit / math.sqrt(dim))
        q = q + s * sink_dir.repeat_interleave(group, 0)[None]
        # Drop key 0's noise along u: it would shift that head's sink logit for every query alike.
        along = (k[0] * sink_dir).sum(-1, keepdim=True) / dim
        k[0] = k[0] - along * sink_dir + s * sink_dir
    return q, k, v
