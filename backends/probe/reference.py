"""fp32 causal GQA attention, chunked over query rows, and what skip-softmax would drop from it.

Skip-softmax in FlashInfer's SM90 fmha_v2 (``csrc/fmha_v2/fmha/warpspec/epilogue.h``, 0.6.18):
each warp group owns 64 query rows and walks the key tiles from the first one on, keeping every
row's running maximum logit. For every tile after the first it takes each row's tile maximum
``local``; when ``exp(local - running) < factor / seqlen`` holds for all 64 rows, the group skips
that tile's softmax and its P.V product, so the tile adds nothing to the sum or the output.
``tile_skip_ratios`` computes the left side of that test for every (head, 64-row block, key tile),
so the fraction of tiles a factor would skip can be read off on any device (CPU in tests), and
``reference`` also returns the output with exactly those tiles dropped: the skip-aware reference
a correct kernel must match to rounding.

Long sequences are checked on a spread of 64-row blocks (``sample_blocks``): each block still sees
all of its keys, so its reference and its skip decisions are exact; only the rows are a sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from backends.probe.inputs import AttentionInputs

Q_BLOCK = 64  # query rows per skip-softmax vote (one SM90 warp group)


@dataclass
class ReferenceResult:
    """fp32 outputs on the checked rows, and the skip-softmax tally over their tiles."""

    rows: torch.Tensor  # [n] row indices into the flattened batch
    out: torch.Tensor  # [n, H, D] exact attention
    emulated: dict[float, torch.Tensor] = field(default_factory=dict)  # tiles of factor f dropped
    tiles: int = 0  # (head, block, tile) triples with at least one unmasked logit
    skipped: dict[float, int] = field(default_factory=dict)

    def skip_fraction(self, factor: float) -> float:
        """Fraction of the computed tiles that skip-softmax would skip at ``factor``."""
        return self.skipped.get(factor, 0) / self.tiles if self.tiles else 0.0


def sample_blocks(seqlen: int, max_rows: int) -> list[int]:
    """64-row query blocks to check: all of them, or an even spread with the first and last."""
    blocks = math.ceil(seqlen / Q_BLOCK)
    want = max(1, max_rows // Q_BLOCK)
    if blocks <= want:
        return list(range(blocks))
    picks = torch.linspace(0, blocks - 1, want).round().long().tolist()
    return sorted(set(picks))


def masked_logits(q: torch.Tensor, k: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Scaled causal logits ``[H, n, K]`` of query ``rows`` over keys ``0..max(rows)``.

    Args:
        q: Queries of one sequence, ``[L, H, D]``.
        k: Keys of that sequence, ``[L, Hkv, D]``; query head h reads KV head h // (H / Hkv).
        rows: Query positions, ascending.
    """
    heads, kv_heads, dim = q.shape[1], k.shape[1], q.shape[2]
    keys = int(rows.max()) + 1
    qr = q[rows].float().view(len(rows), kv_heads, heads // kv_heads, dim)
    logits = torch.einsum("nhgd,khd->hgnk", qr, k[:keys].float()) / math.sqrt(dim)
    logits = logits.reshape(heads, len(rows), keys)
    future = torch.arange(keys, device=q.device)[None, :] > rows[:, None]
    return logits.masked_fill(future[None], float("-inf"))


def tile_skip_ratios(logits: torch.Tensor, kv_tile: int) -> torch.Tensor:
    """``exp(tile max - running max before the tile)`` per row: ``[H, n, tiles]``.

    The first tile gets +inf (never skipped), a fully masked tile 0 (always skippable).
    """
    heads, n, keys = logits.shape
    tiles = math.ceil(keys / kv_tile)
    pad = torch.full((heads, n, tiles * kv_tile - keys), float("-inf"), device=logits.device)
    tile_max = torch.cat([logits, pad], dim=-1).view(heads, n, tiles, kv_tile).amax(dim=-1)
    running = torch.cummax(tile_max, dim=-1).values
    before = torch.cat([torch.full_like(running[..., :1], float("-inf")), running[..., :-1]], -1)
    ratio = torch.exp(tile_max - before)
    ratio[..., 0] = float("inf")
    return ratio


def _block_votes(
    ratio: torch.Tensor, rows: torch.Tensor, kv_tile: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per (head, block, tile): the largest row ratio, and whether the tile has any work."""
    block_of_row = torch.unique_consecutive(rows // Q_BLOCK, return_inverse=True)[1]
    blocks = int(block_of_row.max()) + 1
    heads, _, tiles = ratio.shape
    index = block_of_row[None, :, None].expand_as(ratio)
    worst = torch.full((heads, blocks, tiles), float("-inf"), device=ratio.device)
    worst = worst.scatter_reduce(1, index, ratio, reduce="amax")
    last_row = torch.zeros(blocks, dtype=rows.dtype, device=rows.device)
    last_row = last_row.scatter_reduce(0, block_of_row, rows, reduce="amax")
    starts = torch.arange(tiles, device=rows.device) * kv_tile
    valid = starts[None, :] <= last_row[:, None]
    return worst, valid, block_of_row


def _attend(logits: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(logits) . V for ``logits [H, n, K]``, ``v [L, Hkv, D]``: ``[n, H, D]``."""
    heads, n, keys = logits.shape
    kv_heads = v.shape[1]
    probs = torch.softmax(logits, dim=-1).view(kv_heads, heads // kv_heads, n, keys)
    out = torch.einsum("hgnk,khd->nhgd", probs, v[:keys].float())
    return out.reshape(n, heads, v.shape[2])


def _chunks(blocks: list[int], seqlen: int, heads: int, budget_mib: int) -> list[list[int]]:
    """Group blocks so one chunk's fp32 logits stay near ``budget_mib`` (at least one block)."""
    per_row = heads * seqlen * 4 * 3  # logits, probabilities and a masked copy
    rows = max(Q_BLOCK, budget_mib * 2**20 // per_row)
    size = max(1, rows // Q_BLOCK)
    return [blocks[i : i + size] for i in range(0, len(blocks), size)]


def reference(
    inputs: AttentionInputs,
    blocks: list[int],
    factors: tuple[float, ...] = (),
    kv_tile: int = 128,
    budget_mib: int = 1024,
) -> ReferenceResult:
    """fp32 attention on ``blocks`` of every sequence, with skip-softmax's tally per factor.

    Args:
        inputs: The batch (fp32 or the dequantised values the kernels see).
        blocks: 64-row query blocks to check in each sequence (``sample_blocks``).
        factors: Skip-softmax factors to tally and emulate (0 is exact and is not emulated).
        kv_tile: Keys per tile of the kernel under test (``plan.fmha_v2_kv_tile``).
        budget_mib: fp32 logits to hold at once.
    """
    heads, seqlen = inputs.q.shape[1], inputs.seqlen
    result = ReferenceResult(rows=torch.empty(0), out=torch.empty(0))
    outs: list[torch.Tensor] = []
    emulated: dict[float, list[torch.Tensor]] = {f: [] for f in factors if f > 0}
    rows_all: list[torch.Tensor] = []
    for b in range(inputs.batch):
        q, k, v = inputs.sequence(b)
        for chunk in _chunks(blocks, seqlen, heads, budget_mib):
            rows = _rows_of(chunk, seqlen, q.device)
            logits = masked_logits(q, k, rows)
            outs.append(_attend(logits, v))
            rows_all.append(rows + b * seqlen)
            _tally(result, logits, rows, v, emulated, seqlen, kv_tile)
    result.rows, result.out = torch.cat(rows_all), torch.cat(outs)
    result.emulated = {f: torch.cat(parts) for f, parts in emulated.items()}
    return result


def _rows_of(chunk: list[int], seqlen: int, device: torch.device) -> torch.Tensor:
    ranges = [torch.arange(b * Q_BLOCK, min((b + 1) * Q_BLOCK, seqlen)) for b in chunk]
    return torch.cat(ranges).to(device)


def _tally(
    result: ReferenceResult,
    logits: torch.Tensor,
    rows: torch.Tensor,
    v: torch.Tensor,
    emulated: dict[float, list[torch.Tensor]],
    seqlen: int,
    kv_tile: int,
) -> None:
    ratio = tile_skip_ratios(logits, kv_tile)
    worst, valid, block_of_row = _block_votes(ratio, rows, kv_tile)
    result.tiles += int(valid.sum()) * logits.shape[0]
    keys = logits.shape[-1]
    for factor, parts in emulated.items():
        skip = (worst < factor / seqlen) & valid[None]
        result.skipped[factor] = result.skipped.get(factor, 0) + int(skip.sum())
        per_key = skip[:, block_of_row].repeat_interleave(kv_tile, dim=-1)[..., :keys]
        parts.append(_attend(logits.masked_fill(per_key, float("-inf")), v))
