"""The probe from a composed config to files: check, compile ahead, measure, report, exit code.

Exit codes: 0 every measured point is within tolerance at factor 0 and nothing errored; 1 a kernel
errored, gave non-finite output, or missed the tolerance at factor 0; 2 the probe cannot run here
(no GPU, no FlashInfer, or a config it cannot probe). Points skipped for the budget do not fail.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from backends.backend_conf import BackendConf, KvDtypeConf, ModelConf, SkipSoftmaxConf
from backends.probe.env import NO_GPU_HELP, Environment, gpu_environment
from backends.probe.plan import (
    Geometry,
    Point,
    ProbeConfigError,
    expand_grid,
    per_gpu_geometry,
    probe_kv_dtype,
    variant_kernel,
)
from backends.probe.probe_conf import ProbeConf
from backends.probe.prune import PRUNE_ENV, private_workspace


def plan_probe(
    model: ModelConf,
    backend: BackendConf,
    kv_dtype: KvDtypeConf,
    skip: SkipSoftmaxConf,
    probe: ProbeConf,
) -> tuple[Geometry, str, list[Point]]:
    """Geometry, variant kernel and grid points; raises ProbeConfigError on a bad config."""
    geometry = per_gpu_geometry(model)
    variant = variant_kernel(backend)
    points = expand_grid(probe, probe_kv_dtype(kv_dtype), skip)
    return geometry, variant, points


def run_probe(
    model: ModelConf,
    backend: BackendConf,
    kv_dtype: KvDtypeConf,
    skip: SkipSoftmaxConf,
    probe: ProbeConf,
    out_dir: Path,
) -> int:
    """Run the probe and write ``probe.json``, ``probe.md`` and the plots into ``out_dir``."""
    started = time.monotonic()
    try:
        geometry, variant, points = plan_probe(model, backend, kv_dtype, skip, probe)
    except ProbeConfigError as exc:
        print(f"mtp-eval-probe: {exc}")
        return 2
    if probe.jit_prune:
        # Before FlashInfer is imported: it reads its cache location once, at import.
        os.environ[PRUNE_ENV] = str(geometry.head_dim)
        base = os.environ.get("FLASHINFER_WORKSPACE_BASE")
        os.environ["FLASHINFER_WORKSPACE_BASE"] = private_workspace(base)
    env = gpu_environment()
    if env.problem is not None:
        print(f"mtp-eval-probe: cannot run here: {env.problem}.\n{NO_GPU_HELP}")
        return 2
    here = set(env.kernels_here(("fmha_v2", "fa3")))
    if not here:
        print(f"mtp-eval-probe: {env.gpu} (SM{env.sm}) runs neither fmha_v2 nor FA3. {NO_GPU_HELP}")
        return 2
    points = [_only(p, here) for p in points if set(p.kernels) & here]
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = _document(model, backend, probe, geometry, variant, env, points)
    return _measure_and_report(doc, probe, geometry, points, out_dir, started)


def _only(point: Point, kernels: set[str]) -> Point:
    kept = tuple(k for k in point.kernels if k in kernels)
    return Point(
        point.case, point.kv_dtype, point.profile, point.batch, point.seqlen, kept, point.factors
    )


def _document(
    model: ModelConf,
    backend: BackendConf,
    probe: ProbeConf,
    geometry: Geometry,
    variant: str,
    env: Environment,
    points: list[Point],
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "tool": "mtp-eval-probe",
        "status": "running",
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "environment": {"gpu": env.gpu, "sm": env.sm, "versions": env.versions},
        "config": {
            "model": model.name,
            "tp": model.tp,
            "backend": backend.name,
            "variant": variant,
            "geometry": asdict(geometry),
            "grid": probe.grid,
            "budget_s": probe.budget_s,
            "points": len(points),
            "timing": asdict(probe.timing),
            "tolerance": asdict(probe.tolerance),
            "jit_prune": probe.jit_prune,
            "ref_max_rows": probe.ref_max_rows,
            "profiles": {k: asdict(v) for k, v in probe.profiles.items()},
        },
        "jit": [],
        "records": [],
    }


def _measure_and_report(
    doc: dict[str, Any],
    probe: ProbeConf,
    geometry: Geometry,
    points: list[Point],
    out_dir: Path,
    started: float,
    **session_options: Any,
) -> int:
    import torch

    from backends.probe.jit import JitWarmer
    from backends.probe.report import write_report
    from backends.probe.runner import Session, run_grid

    # The reference must be true fp32: no TF32 in its matmuls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    warmer = None
    if probe.jit_prewarm:
        needed = list(dict.fromkeys((k, p.kv_dtype) for p in points for k in p.kernels))
        warmer = JitWarmer(needed, geometry, probe.jit_parallel, probe.jit_max_jobs)
        warmer.start()
    session = Session(
        probe, geometry, out_dir / "probe.json", doc, warmer, started, **session_options
    )
    try:
        run_grid(session, points)
        doc["status"] = "budget" if session.left() <= 0 else "done"
    finally:
        if warmer is not None:
            warmer.stop()
            (out_dir / "jit_log.txt").write_text(warmer.logs())
        doc["finished_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        session.save()
    for path in write_report(doc, out_dir, probe.plots):
        print(f"wrote {path}")
    return exit_code(doc["records"], probe.tolerance.max_row_fraction)


def exit_code(records: list[dict[str, Any]], max_row_fraction: float) -> int:
    """0 when every factor-0 measurement passed, 1 when any errored or missed the tolerance."""
    for rec in records:
        if rec.get("status") == "error":
            return 1
        wrong = rec.get("nonfinite") or rec.get("rows_beyond_frac", 0) > max_row_fraction
        if rec.get("status") == "ok" and rec.get("factor") == 0 and wrong:
            return 1
    return 0
