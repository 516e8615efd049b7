"""Error metrics of a kernel's output against a reference, on the rows the reference checked."""

from __future__ import annotations

import math

import torch


def error_metrics(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> dict:
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
