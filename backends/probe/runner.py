"""Run the grid on the GPU: per point, inputs, the fp32 reference, then every kernel and factor.

Each (kernel, factor) is measured inside its own try/except, and the JSON file is rewritten after
every point, so a crash, an out-of-memory or the end of the budget loses at most the point in
flight. No point starts once the wall-clock budget is spent; the rest are recorded as skipped.
"""

from __future__ import annotations

import json
import os
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from backends.probe.inputs import AttentionInputs, make_inputs
from backends.probe.jit import FAST_FAILURE_S, JitWarmer
from backends.probe.kernels import PagedBatch, kernel_inputs, make_runner
from backends.probe.metrics import causal_tflops, error_metrics, failing_rows, max_abs_diff
from backends.probe.plan import Geometry, Point, fmha_v2_kv_tile
from backends.probe.probe_conf import ProbeConf, TimingConf
from backends.probe.reference import Q_BLOCK, ReferenceResult, reference, sample_blocks
from backends.probe.timing import KernelTiming, time_call


@dataclass
class Session:
    """Everything a point needs: settings, geometry, where results go, the JIT warmer, the clock."""

    probe: ProbeConf
    geometry: Geometry
    json_path: Path
    doc: dict[str, Any]
    warmer: JitWarmer | None = None
    started: float = field(default_factory=time.monotonic)
    log: Callable[[str], None] = print
    # Where inputs live, how a kernel is called and timed: CUDA and FlashInfer on the GPU; tests
    # check the orchestration on CPU with a pure-torch paged attention and a wall clock.
    device: str = "cuda"
    runner_factory: Callable[[str, PagedBatch, int], Callable[[float], torch.Tensor]] = make_runner
    timer: Callable[[Callable[[], object], TimingConf], KernelTiming] = time_call

    def left(self) -> float:
        """Seconds of budget left (infinite without a budget)."""
        if self.probe.budget_s <= 0:
            return float("inf")
        return self.probe.budget_s - (time.monotonic() - self.started)

    def save(self) -> None:
        """Rewrite the JSON file atomically."""
        if self.warmer is not None:
            self.doc["jit"] = self.warmer.summary()
        self.doc["elapsed_s"] = round(time.monotonic() - self.started, 1)
        tmp = self.json_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, default=str))
        os.replace(tmp, self.json_path)


def run_grid(session: Session, points: list[Point]) -> None:
    """Measure every point in order, saving after each."""
    for point in points:
        if session.left() <= 0:
            records = [_skipped(point, k, f, "budget spent") for k, f in _pairs(point)]
        else:
            try:
                records = run_point(session, point)
            except Exception as exc:  # one bad point must not end the run
                records = [_failed(_base(point), k, f, exc) for k, f in _pairs(point)]
                session.log(f"point {_label(point)} failed: {type(exc).__name__}: {exc}")
        session.doc["records"].extend(records)
        session.save()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _pairs(point: Point) -> list[tuple[str, float]]:
    return [(k, f) for k in point.kernels for f in (point.factors if k == "fmha_v2" else (0.0,))]


def run_point(session: Session, point: Point) -> list[dict[str, Any]]:
    """Build the inputs and reference of one point, then measure each kernel and factor on them."""
    g, probe = session.geometry, session.probe
    seed = probe.seed + zlib.crc32(f"{point.profile}/{point.batch}x{point.seqlen}".encode())
    inputs = make_inputs(
        probe.profiles[point.profile],
        point.batch,
        point.seqlen,
        (g.num_heads, g.num_kv_heads, g.head_dim),
        seed,
        session.device,
    )
    batch, seen = kernel_inputs(inputs, point.kv_dtype, g.page_size, seed)
    ref, base = _reference_for(session, point, inputs, seen)
    del inputs, seen
    f0: dict[str, torch.Tensor] = {}
    records = []
    for kernel in point.kernels:
        factors = point.factors if kernel == "fmha_v2" else (0.0,)
        records += _measure_kernel(session, point, batch, ref, base, kernel, factors, f0)
    if len(f0) == 2:
        parity = max_abs_diff(f0["fmha_v2"], f0["fa3"])
        for rec in records:
            if rec["factor"] == 0 and rec["status"] == "ok":
                rec["max_abs_vs_other_kernel"] = parity
    return records


def _reference_for(
    session: Session, point: Point, inputs: AttentionInputs, seen: AttentionInputs
) -> tuple[ReferenceResult, dict[str, Any]]:
    probe, g = session.probe, session.geometry
    blocks = sample_blocks(point.seqlen, max(Q_BLOCK, probe.ref_max_rows // point.batch))
    factors = point.factors if "fmha_v2" in point.kernels else ()
    kv_tile = fmha_v2_kv_tile(g.head_dim, point.kv_dtype)
    ref = reference(seen, blocks, factors, kv_tile, probe.ref_chunk_mib)
    base = _base(point) | {"rows_checked": len(ref.rows), "tiles": ref.tiles, "kv_tile": kv_tile}
    if point.kv_dtype == "fp8_e4m3":
        # How far fp8 rounding alone moves exact attention: fp32 on the bf16 inputs vs on fp8.
        q, k, v = (t.bfloat16().float() for t in (inputs.q, inputs.k, inputs.v))
        rounded = AttentionInputs(q, k, v, inputs.batch, inputs.seqlen)
        exact = reference(rounded, blocks, (), kv_tile, probe.ref_chunk_mib)
        tol = probe.tolerance
        quant = error_metrics(ref.out, exact.out, tol.fp8_atol, tol.fp8_rtol)
        base |= {f"fp8_inputs_{k}": v for k, v in quant.items()}
    return ref, base


def _measure_kernel(
    session: Session,
    point: Point,
    batch: PagedBatch,
    ref: ReferenceResult,
    base: dict[str, Any],
    kernel: str,
    factors: tuple[float, ...],
    f0: dict[str, torch.Tensor],
) -> list[dict[str, Any]]:
    problem = _module_problem(session, kernel, point.kv_dtype)
    if problem is not None:
        return [_skipped(point, kernel, f, problem, base) for f in factors]
    try:
        run = session.runner_factory(kernel, batch, session.geometry.num_kv_heads)
    except Exception as exc:
        return [_failed(base, kernel, f, exc) for f in factors]
    records = []
    for factor in factors:
        if session.left() <= 0:
            records.append(_skipped(point, kernel, factor, "budget spent", base))
            continue
        try:
            records.append(_measure(session, point, run, ref, base, kernel, factor, f0))
        except Exception as exc:
            records.append(_failed(base, kernel, factor, exc))
        session.log(_summary_line(session, records[-1]))
    return records


def _measure(
    session: Session,
    point: Point,
    run: Callable[[float], torch.Tensor],
    ref: ReferenceResult,
    base: dict[str, Any],
    kernel: str,
    factor: float,
    f0: dict[str, torch.Tensor],
) -> dict[str, Any]:
    fp8 = point.kv_dtype == "fp8_e4m3"
    tol = session.probe.tolerance
    atol, rtol = (tol.fp8_atol, tol.fp8_rtol) if fp8 else (tol.bf16_atol, tol.bf16_rtol)
    out = run(factor)
    first = out[ref.rows].float()
    rec = base | {"kernel": kernel, "factor": factor, "status": "ok", "error": None}
    rec |= error_metrics(first, ref.out, atol, rtol)
    if rec["rows_beyond_frac"] > 0:
        rec["failing"] = failing_rows(first, ref.out, ref.rows, point.seqlen, atol, rtol)
    if factor > 0:
        rec["skip_est"] = ref.skip_fraction(factor)
        rec["max_abs_vs_skip_ref"] = max_abs_diff(first, ref.emulated[factor])
        rec["skip_ref_max_abs"] = max_abs_diff(ref.emulated[factor], ref.out)
        if kernel in f0:
            rec["max_abs_vs_factor0"] = max_abs_diff(first, f0[kernel])
    else:
        f0[kernel] = first
    rec |= session.timer(lambda: run(factor), session.probe.timing)
    rec["repeat_max_abs"] = max_abs_diff(out[ref.rows].float(), first)
    g = session.geometry
    rec["tflops"] = causal_tflops(
        point.batch, point.seqlen, g.num_heads, g.head_dim, rec["median_ms"]
    )
    return rec


def _module_problem(session: Session, kernel: str, kv_dtype: str) -> str | None:
    """Why the kernel's FlashInfer module is not usable now, or None to go ahead."""
    if session.warmer is None:
        return None
    job = session.warmer.wait(kernel, kv_dtype, session.left())
    if job is None or job.state == "ok":
        return None
    if job.state in ("queued", "running", "killed"):
        return f"budget spent while FlashInfer compiled {kernel} {kv_dtype}"
    if job.seconds < FAST_FAILURE_S:
        return None  # failed before nvcc could have run: this process compiles it on first use
    return f"FlashInfer JIT of {kernel} {kv_dtype} failed: {job.tail(800)}"


def _base(point: Point) -> dict[str, Any]:
    return {
        "case": point.case,
        "kv_dtype": point.kv_dtype,
        "profile": point.profile,
        "batch": point.batch,
        "seqlen": point.seqlen,
        "tokens": point.tokens,
    }


def _skipped(
    point: Point, kernel: str, factor: float, why: str, base: dict[str, Any] | None = None
) -> dict[str, Any]:
    rec = base or _base(point)
    return rec | {"kernel": kernel, "factor": factor, "status": "skipped", "error": why}


def _failed(base: dict[str, Any], kernel: str, factor: float, exc: Exception) -> dict[str, Any]:
    tail = "".join(traceback.format_exception(exc))[-1500:]
    return base | {
        "kernel": kernel,
        "factor": factor,
        "status": "error",
        "error": f"{type(exc).__name__}: {exc}",
        "traceback": tail,
    }


def _label(point: Point) -> str:
    return f"{point.kv_dtype} {point.profile} {point.batch}x{point.seqlen}"


def _summary_line(session: Session, rec: dict[str, Any]) -> str:
    head = (
        f"[{time.monotonic() - session.started:6.0f}s] {rec['kv_dtype']} {rec['profile']} "
        f"{rec['batch']}x{rec['seqlen']} {rec['kernel']} f={rec['factor']:g}"
    )
    if rec["status"] != "ok":
        return f"{head}: {rec['status']}: {str(rec.get('error'))[:300]}"
    skip = f", skip est {rec['skip_est']:.3f}" if "skip_est" in rec else ""
    return (
        f"{head}: {rec['median_ms']:.3f} ms, max err {rec['max_abs']}, "
        f"rows beyond {rec['rows_beyond_frac']:.2e}{skip}"
    )
