"""The probe's orchestration on CPU: a pure-torch paged attention stands in for the kernels.

The stand-in reads keys and values through the block tables, like the kernels (for fmha_v2: the
pool's bytes by shape, strides ignored, as FlashInfer's launcher does), and applies the
skip-softmax rule exactly (it drops the tiles the estimate says the kernel drops), so the records,
the JSON file, the budget and the error handling can be checked without a GPU.
"""

from __future__ import annotations

import json
import time

import pytest

torch = pytest.importorskip("torch")

from backends.backend_conf import (  # noqa: E402
    AttentionGeometry,
    BackendConf,
    ModelConf,
    SkipSoftmaxConf,
)
from backends.probe.app import exit_code  # noqa: E402
from backends.probe.fmha_v2_call import read_as_fmha_v2  # noqa: E402
from backends.probe.inputs import AttentionInputs  # noqa: E402
from backends.probe.plan import Geometry, expand_grid, fmha_v2_kv_tile  # noqa: E402
from backends.probe.probe_conf import GridCase, InputProfile, ProbeConf  # noqa: E402
from backends.probe.reference import reference, sample_blocks  # noqa: E402
from backends.probe.report import write_report  # noqa: E402
from backends.probe.runner import Session, run_grid  # noqa: E402

pytestmark = pytest.mark.integration

GEOMETRY = Geometry(num_heads=4, num_kv_heads=2, head_dim=64, page_size=16)
PROFILES = {"gaussian": InputProfile(), "peaked": InputProfile(sink_logit=30.0, local_logit=12.0)}


def _read_pages(batch, kernel):
    # fmha_v2 reads the pool's bytes by shape and ignores strides; FA3 follows strides.
    pool = (read_as_fmha_v2(batch.paged_kv) if kernel == "fmha_v2" else batch.paged_kv).float()
    pages = pool[batch.block_tables.long()]  # [B, P, 2, page, Hkv, D]
    kv = pages.transpose(2, 3).reshape(batch.batch, -1, 2, *pool.shape[3:])[:, : batch.seqlen]
    kv = kv.reshape(-1, 2, *pool.shape[3:])
    sq, sk, sv = batch.scales
    return AttentionInputs(
        batch.q.float() * sq, kv[:, 0] * sk, kv[:, 1] * sv, batch.batch, batch.seqlen
    )


def torch_kernel(kernel, batch, num_kv_heads):
    out = torch.full(batch.q.shape, float("nan"), dtype=torch.bfloat16)  # poisoned, as on GPU
    tile = fmha_v2_kv_tile(batch.q.shape[-1], "fp8_e4m3" if batch.fp8 else "bf16")

    def call(factor):
        factors = (factor,) if kernel == "fmha_v2" and factor > 0 else ()
        seen = _read_pages(batch, kernel)
        ref = reference(seen, sample_blocks(batch.seqlen, 10**9), factors, tile)
        out[ref.rows] = (ref.emulated[factor] if factors else ref.out).bfloat16()
        return out

    return call


def wall_timer(fn, conf):
    start = time.perf_counter()
    fn()
    ms = (time.perf_counter() - start) * 1e3
    return {"median_ms": ms, "p10_ms": ms, "p90_ms": ms, "reps": 1}


def _session(tmp_path, cases, budget_s=0.0, factory=torch_kernel):
    probe = ProbeConf(cases=cases, profiles=PROFILES, budget_s=budget_s, ref_max_rows=256)
    doc = {"records": [], "config": {"tolerance": {"max_row_fraction": 1e-3}}}
    session = Session(
        probe,
        GEOMETRY,
        tmp_path / "probe.json",
        doc,
        device="cpu",
        runner_factory=factory,
        timer=wall_timer,
        log=lambda line: None,
    )
    return session, expand_grid(probe, "bf16", SkipSoftmaxConf())


CASES = [
    GridCase("sizes", ["bf16"], ["gaussian"], ["1x128", "2x96"], [0]),
    GridCase("skip", ["bf16", "fp8_e4m3"], ["peaked"], ["1x512"], [0, 0.1, 100]),
]


def test_grid_records_everything(tmp_path):
    session, points = _session(tmp_path, CASES)
    run_grid(session, points)
    records = json.loads((tmp_path / "probe.json").read_text())["records"]
    assert len(records) == 2 * 2 + 2 * (3 + 1)
    assert {r["status"] for r in records} == {"ok"}
    exact = [r for r in records if r["factor"] == 0]
    assert all(r["max_abs"] < 2e-2 and r["rows_beyond_frac"] == 0 for r in exact)
    assert all(r["max_abs_vs_other_kernel"] == 0 for r in exact)  # same stand-in for both
    sampled = next(r for r in records if r["batch"] == 2)
    assert sampled["rows_checked"] == 2 * 96 and sampled["tokens"] == 192
    assert exit_code(records, 1e-3) == 0


def test_skip_records_match_the_skip_aware_reference(tmp_path):
    session, points = _session(tmp_path, CASES[1:])
    run_grid(session, points)
    skips = [r for r in session.doc["records"] if r["factor"] > 0]
    assert {r["kernel"] for r in skips} == {"fmha_v2"}
    assert all(r["skip_est"] >= 0.25 for r in skips)  # 512 tokens: the first tiles always run
    assert all(r["max_abs_vs_skip_ref"] < 2e-2 for r in skips)
    assert all(r["max_abs_vs_factor0"] > 0 for r in skips)
    fp8 = [r for r in session.doc["records"] if r["kv_dtype"] == "fp8_e4m3"]
    assert fp8 and all(r["fp8_inputs_max_abs"] > 0 and r["kv_tile"] == 256 for r in fp8)


def test_spent_budget_skips_points(tmp_path):
    session, points = _session(tmp_path, CASES[:1], budget_s=1e-9)
    run_grid(session, points)
    assert {(r["status"], r["error"]) for r in session.doc["records"]} == {
        ("skipped", "budget spent")
    }


def test_a_failing_kernel_is_recorded_and_the_rest_runs(tmp_path):
    def factory(kernel, batch, kv_heads):
        if kernel == "fa3":
            raise RuntimeError("fa3 needs SM90")
        return torch_kernel(kernel, batch, kv_heads)

    session, points = _session(tmp_path, CASES[:1], factory=factory)
    run_grid(session, points)
    by_kernel = {r["kernel"]: r for r in session.doc["records"]}
    assert by_kernel["fa3"]["status"] == "error"
    assert "fa3 needs SM90" in by_kernel["fa3"]["error"]
    assert by_kernel["fmha_v2"]["status"] == "ok"
    assert exit_code(session.doc["records"], 1e-3) == 1


def test_wrong_rows_are_located_and_reported(tmp_path):
    """A kernel wrong on the first 20 rows of each sequence (the FA3 fp8 pattern of the H200)."""

    def first_rows_wrong(kernel, batch, num_kv_heads):
        call = torch_kernel(kernel, batch, num_kv_heads)

        def wrong(factor):
            out = call(factor).clone()
            if kernel == "fa3":
                view = out.view(batch.batch, batch.seqlen, *out.shape[1:])
                view[:, :20] += 1.0
            return out

        return wrong

    sizes = [GridCase("sizes", ["bf16"], ["gaussian"], ["2x96"], [0])]
    session, points = _session(tmp_path, sizes, factory=first_rows_wrong)
    run_grid(session, points)
    records = json.loads((tmp_path / "probe.json").read_text())["records"]
    fa3 = next(r for r in records if r["kernel"] == "fa3")
    assert fa3["failing"]["rows"] == 20 and fa3["failing"]["max_position"] == 19
    assert fa3["failing"]["count"] == 2 * 20 * GEOMETRY.num_heads  # both sequences, every head
    assert "failing" not in next(r for r in records if r["kernel"] == "fmha_v2")
    write_report(session.doc, tmp_path, plots=False)
    report = (tmp_path / "probe.md").read_text()
    assert "## Where the wrong rows are" in report
    assert (
        "| fa3 | bf16 | gaussian | 2x96 | 0 | 160 | 20 | 19 | 0 1 2 3 4 5 6 7 8 9 10 11 |" in report
    )


def test_report_from_a_cpu_run(tmp_path):
    session, points = _session(tmp_path, CASES)
    run_grid(session, points)
    written = write_report(session.doc, tmp_path)
    names = sorted(p.name for p in written)
    assert names == ["error_vs_factor.png", "probe.md", "ratio_vs_size.png", "speed_vs_factor.png"]
    assert all(p.stat().st_size > 1000 for p in written)
    md = (tmp_path / "probe.md").read_text()
    assert "| bf16 | peaked | 1x512 | 100 |" in md
    assert "skip-softmax with nothing skipped == factor 0" in md


@pytest.mark.integration
def test_app_flow_with_compile_children_on_cpu(tmp_path):
    """The app's own path: document, JIT children (they fail fast here, so each module is retried
    in-process, i.e. with the stand-in), grid, jit log, report files and exit code."""
    from backends.probe.app import _document, _measure_and_report
    from backends.probe.env import Environment

    probe = ProbeConf(cases=CASES[:1], profiles=PROFILES, ref_max_rows=256, jit_parallel=2)
    points = expand_grid(probe, "bf16", SkipSoftmaxConf())
    model = ModelConf(name="m", attention=AttentionGeometry(4, 2, 64, 16))
    backend = BackendConf(name="fmha_v2", attention_backend="trtllm_mha")
    env = Environment(gpu="test CPU", sm=90, versions={"torch": torch.__version__})
    doc = _document(model, backend, probe, GEOMETRY, "fmha_v2", env, points)
    code = _measure_and_report(
        doc,
        probe,
        GEOMETRY,
        points,
        tmp_path,
        time.monotonic(),
        device="cpu",
        runner_factory=torch_kernel,
        timer=wall_timer,
        log=lambda line: None,
    )
    saved = json.loads((tmp_path / "probe.json").read_text())
    assert code == 0 and saved["status"] == "done" and saved["finished_at"]
    assert {j["state"] for j in saved["jit"]} == {"failed"}
    assert {r["status"] for r in saved["records"]} == {"ok"}
    assert "==== fmha_v2 bf16: failed" in (tmp_path / "jit_log.txt").read_text()
    assert (tmp_path / "probe.md").read_text().startswith("# Kernel parity probe: test CPU")
