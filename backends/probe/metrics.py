"""Error metrics of a kernel's output against a reference, on the rows the reference checked."""

from __future__ import annotations

import math
from typing import TypedDict

import torch


class ErrorMetrics(TypedDict):
    """A kernel output's error keys in its probe record (None: no finite value to measure)."""

    max_abs: float | None
    mean_abs: float | None
    rel_fro: float | None
    rows_beyond_frac: float
    nonfinite: int


class FailingRows(TypedDict):
    """Where a kernel's wrong (row, head) vectors are (``failing`` of its probe record)."""

    count: int
    rows: int
    first_positions: list[int]
    max_position: int | None
    per_128_rows: list[int]
    per_head: list[int]


def error_metrics(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> ErrorMetrics:
    """Compare ``out`` with ``ref`` (same shape ``[rows, heads, dim]``) in fp32.

    A (row, head) vector is wrong when its largest absolute error exceeds
    ``atol + rtol * max |ref|`` over that vector; non-finite outputs are counted and are wrong.

    Returns:
        ``max_abs``, ``mean_abs``, ``rel_fro`` (Frobenius norm of the error over that of the
        reference), ``rows_beyond_frac`` and ``nonfinite``.
    """
    if out.shape != ref.shape:
        raise ValueError(f"output shape {tuple(out.shape)} != reference shape {tuple(ref.shape)}")
    out, ref = out.float(), ref.float()
    finite = torch.isfinite(out)
    err = torch.where(finite, (out - ref).abs(), torch.full_like(out, float("inf")))
    row_err = err.amax(dim=-1)
    row_tol = atol + rtol * ref.abs().amax(dim=-1)
    ref_norm = float(ref.norm())
    diff_norm = float((torch.where(finite, out, ref) - ref).norm())
    return {
        "max_abs": _num(err.max()),
        "mean_abs": _num(err[finite].mean()) if bool(finite.any()) else None,
        "rel_fro": diff_norm / ref_norm if ref_norm > 0 else None,
        "rows_beyond_frac": float((row_err > row_tol).float().mean()),
        "nonfinite": int((~finite).sum()),
    }


def failing_rows(
    out: torch.Tensor, ref: torch.Tensor, rows: torch.Tensor, seqlen: int, atol: float, rtol: float
) -> FailingRows:
    """Where the wrong (row, head) vectors are: their positions in the sequence and heads.

    On the H200, FA3's fp8 prefill failed on a near-constant 100-115 rows per sequence, which
    a rounding explanation does not fit; this records which rows, so the data can say whether they
    are the first rows (few keys: softmax probabilities near 1, where fp8 P is coarsest), a tile
    boundary, or spread.

    Args:
        out: Kernel output on the checked rows, ``[n, heads, dim]``.
        ref: Reference on the same rows.
        rows: Row indices of the checked rows into the flattened batch (``seqlen`` per sequence).
        seqlen: Tokens per sequence.
        atol: Absolute tolerance, as in ``error_metrics``.
        rtol: Relative tolerance, as in ``error_metrics``.

    Returns:
        ``count`` (wrong vectors), ``rows`` (distinct wrong rows), ``first_positions`` (the 64
        smallest in-sequence positions), ``max_position``, ``per_128_rows`` (wrong vectors per
        block of 128 positions, first 16 blocks) and ``per_head``.
    """
    out, ref = out.float(), ref.float()
    err = torch.where(torch.isfinite(out), (out - ref).abs(), torch.full_like(out, float("inf")))
    wrong = err.amax(dim=-1) > atol + rtol * ref.abs().amax(dim=-1)  # [n, heads]
    positions = (rows.to(wrong.device) % seqlen)[:, None].expand_as(wrong)[wrong]
    distinct = torch.unique(positions)
    blocks = torch.bincount(positions // 128, minlength=16)[:16]
    return {
        "count": int(wrong.sum()),
        "rows": int(distinct.numel()),
        "first_positions": distinct[:64].tolist(),
        "max_position": int(distinct.max()) if distinct.numel() else None,
        "per_128_rows": blocks.tolist(),
        "per_head": wrong.sum(dim=0).tolist(),
    }


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float | None:
    """Largest |a - b| in fp32 (None when either holds a non-finite value)."""
    diff = (a.float() - b.float()).abs().max()
    return _num(diff)


def _num(x: torch.Tensor) -> float | None:
    value = float(x)
    return value if math.isfinite(value) else None


def causal_tflops(batch: int, seqlen: int, heads: int, head_dim: int, ms: float) -> float:
    """Useful TFLOP/s of causal prefill: two matmuls over the lower triangle (with the diagonal)."""
    pairs = batch * seqlen * (seqlen + 1) / 2
    return 4.0 * pairs * heads * head_dim / (ms * 1e-3) / 1e12
