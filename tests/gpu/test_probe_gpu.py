"""The probe on a real GPU: both FlashInfer kernels against fp32, skip-softmax against its model.

Needs an SM90 GPU, torch with CUDA and flashinfer-python 0.6.18; the first run compiles FlashInfer's
modules (minutes). Skipped everywhere else.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability(0)[0] != 9:
    pytest.skip("needs an SM90 GPU with CUDA", allow_module_level=True)
pytest.importorskip("flashinfer")

from backends.backend_conf import (  # noqa: E402
    AttentionGeometry,
    BackendConf,
    KvDtypeConf,
    ModelConf,
    SkipSoftmaxConf,
)
from backends.probe.app import run_probe  # noqa: E402
from backends.probe.inputs import make_inputs  # noqa: E402
from backends.probe.kernels import kernel_inputs, make_runner  # noqa: E402
from backends.probe.metrics import error_metrics, max_abs_diff  # noqa: E402
from backends.probe.plan import fmha_v2_kv_tile  # noqa: E402
from backends.probe.probe_conf import GridCase, InputProfile, ProbeConf  # noqa: E402
from backends.probe.reference import reference, sample_blocks  # noqa: E402

HEADS = (32, 8, 128)  # Llama-3.1-8B on one GPU
PEAKED = InputProfile(sink_logit=30.0, local_logit=12.0)


def _run(kernel, kv_dtype, profile, batch, seqlen, factors=(0.0,)):
    x = make_inputs(profile, batch, seqlen, HEADS, seed=1, device="cuda")
    paged, seen = kernel_inputs(x, kv_dtype, 64, seed=1)
    skip = tuple(f for f in factors if f > 0)
    ref = reference(seen, sample_blocks(seqlen, 2048), skip, fmha_v2_kv_tile(128, kv_dtype))
    run = make_runner(kernel, paged, HEADS[1])
    outs = {f: run(f)[ref.rows].float() for f in factors}
    return ref, outs


@pytest.mark.parametrize("kernel", ["fmha_v2", "fa3"])
@pytest.mark.parametrize(("kv_dtype", "atol"), [("bf16", 1e-2), ("fp8_e4m3", 7e-2)])
def test_kernel_matches_fp32(kernel, kv_dtype, atol):
    ref, outs = _run(kernel, kv_dtype, InputProfile(), 2, 1024)
    m = error_metrics(outs[0.0], ref.out, atol, atol / 2)
    assert m["nonfinite"] == 0 and m["rows_beyond_frac"] == 0.0, m
    assert m["rel_fro"] < (8e-3 if kv_dtype == "bf16" else 8e-2), m


def test_the_two_kernels_agree():
    _, v2 = _run("fmha_v2", "bf16", PEAKED, 1, 2048)
    _, fa3 = _run("fa3", "bf16", PEAKED, 1, 2048)
    assert max_abs_diff(v2[0.0], fa3[0.0]) < 2e-2


def test_skip_softmax_drops_what_the_estimate_drops():
    ref, outs = _run("fmha_v2", "bf16", PEAKED, 1, 8192, factors=(0.0, 1.0))
    assert ref.skip_fraction(1.0) > 0.5
    assert max_abs_diff(outs[1.0], ref.emulated[1.0]) < 2e-2


def test_probe_end_to_end(tmp_path):
    model = ModelConf(name="llama-geometry", attention=AttentionGeometry(32, 8, 128, 64))
    probe = ProbeConf(
        cases=[GridCase("mini", ["bf16"], ["peaked"], ["1x2048"], [0, 10])],
        profiles={"peaked": PEAKED},
        jit_prewarm=False,
        jit_prune=False,
        plots=True,
    )
    backend = BackendConf(name="fmha_v2", attention_backend="trtllm_mha")
    code = run_probe(model, backend, KvDtypeConf("bf16"), SkipSoftmaxConf(), probe, tmp_path)
    doc = json.loads((tmp_path / "probe.json").read_text())
    assert code == 0, doc["records"]
    assert {r["status"] for r in doc["records"]} == {"ok"}
    assert (tmp_path / "probe.md").exists() and (tmp_path / "ratio_vs_size.png").exists()
