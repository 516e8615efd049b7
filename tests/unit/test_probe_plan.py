"""Per-GPU geometry, variant mapping, grid expansion and the composed probe config (no GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from backends.backend_conf import (
    AttentionGeometry,
    BackendConf,
    KvDtypeConf,
    ModelConf,
    SkipSoftmaxConf,
)
from backends.probe.app import exit_code, plan_probe
from backends.probe.plan import (
    ProbeConfigError,
    expand_grid,
    fmha_v2_kv_tile,
    parse_size,
    per_gpu_geometry,
    probe_kv_dtype,
    variant_kernel,
)
from backends.probe.probe_conf import GridCase, InputProfile, ProbeConf
from pipeline.cli.probe import register_probe_configs, to_probe_config

CONF = Path(__file__).resolve().parents[2] / "conf"
register_probe_configs()


def _model(heads, kv, dim=128, tp=1, page=64, mla=False):
    return ModelConf(name="m", tp=tp, is_mla=mla, attention=AttentionGeometry(heads, kv, dim, page))


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (_model(32, 8), (32, 8, 128, 64)),  # Llama-3.1-8B
        (_model(96, 8, tp=8), (12, 1, 128, 64)),  # GLM-4.6 on 8 GPUs
        (_model(16, 2, dim=256, tp=4), (4, 1, 256, 64)),  # KV heads replicated past tp
        (_model(8, 2, page=None), (8, 2, 128, 64)),  # unset page: SGLang's 64
        (_model(8, 2, page=48), (8, 2, 128, 64)),  # SGLang changes 48 to 64 for trtllm_mha
        (_model(8, 2, page=16), (8, 2, 128, 16)),
    ],
)
def test_per_gpu_geometry(model, expected):
    g = per_gpu_geometry(model)
    assert (g.num_heads, g.num_kv_heads, g.head_dim, g.page_size) == expected
    assert bool(g.notes) == (model.attention.page_size not in (16, 32, 64, 128))


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (_model(128, 128, dim=192, tp=8, mla=True), "MLA"),
        (_model(30, 8, tp=4), "num_heads=30 does not split over model.tp=4"),
        (_model(32, 6, tp=4), "num_kv_heads=6"),
        (_model(32, 8, dim=96), "head_dim=96"),
    ],
)
def test_per_gpu_geometry_rejects(model, message):
    with pytest.raises(ProbeConfigError, match=message):
        per_gpu_geometry(model)


@pytest.mark.parametrize(
    ("backend", "kernel"),
    [
        (BackendConf(name="fmha_v2", attention_backend="trtllm_mha"), "fmha_v2"),
        (BackendConf(name="trtllm_mha", attention_backend="trtllm_mha"), "fmha_v2"),
        (BackendConf(name="fa3", attention_backend="fa3"), "fa3"),
    ],
)
def test_variant_kernel(backend, kernel):
    assert variant_kernel(backend) == kernel


def test_variant_kernel_rejects_triton():
    with pytest.raises(ProbeConfigError, match="backend=triton"):
        variant_kernel(BackendConf(name="triton", attention_backend="triton"))


@pytest.mark.parametrize(
    ("name", "expected"), [("auto", "bf16"), ("bf16", "bf16"), ("fp8_e4m3", "fp8_e4m3")]
)
def test_probe_kv_dtype(name, expected):
    assert probe_kv_dtype(KvDtypeConf(name)) == expected


def test_probe_kv_dtype_rejects_e5m2():
    with pytest.raises(ProbeConfigError, match="fp8_e5m2"):
        probe_kv_dtype(KvDtypeConf("fp8_e5m2"))


@pytest.mark.parametrize(("text", "expected"), [("1x128", (1, 128)), (" 8 x 2048 ", (8, 2048))])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["128", "0x128", "2x", "axb"])
def test_parse_size_rejects(text):
    with pytest.raises(ProbeConfigError, match="BATCHxTOKENS"):
        parse_size(text)


@pytest.mark.parametrize(
    ("head_dim", "kv", "tile"),
    [
        (64, "bf16", 256),
        (128, "bf16", 128),
        (128, "fp8_e4m3", 256),
        (256, "bf16", 64),
        (256, "fp8_e4m3", 128),
    ],
)
def test_fmha_v2_kv_tile(head_dim, kv, tile):
    assert fmha_v2_kv_tile(head_dim, kv) == tile


def _probe(*cases):
    return ProbeConf(cases=list(cases), profiles={"gaussian": InputProfile()})


def test_expand_grid_order_and_skip_factor():
    probe = _probe(
        GridCase("a", [], ["gaussian"], ["1x128", "2x64"], [0]),
        GridCase("b", ["fp8_e4m3"], ["gaussian"], ["1x256"], [10, 1]),
    )
    points = expand_grid(probe, "bf16", SkipSoftmaxConf(prefill=0.5))
    assert [(p.case, p.kv_dtype, p.batch, p.seqlen) for p in points] == [
        ("a", "bf16", 1, 128),
        ("a", "bf16", 2, 64),
        ("b", "fp8_e4m3", 1, 256),
    ]
    assert points[0].factors == (0.0,)  # a case that does not sweep factors stays exact
    assert points[2].factors == (0.0, 0.5, 1.0, 10.0)
    assert points[1].tokens == 128


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (GridCase("x", kernels=["fa2"]), "kernels"),
        (GridCase("x", kv_dtypes=["fp8_e5m2"]), "kv_dtypes"),
        (GridCase("x", profiles=["nope"]), "not in probe.profiles"),
        (GridCase("x", factors=[-1]), ">= 0"),
    ],
)
def test_expand_grid_rejects(case, message):
    with pytest.raises(ProbeConfigError, match=message):
        expand_grid(_probe(case), "bf16", SkipSoftmaxConf())


def test_expand_grid_rejects_negative_profile():
    probe = ProbeConf(cases=[GridCase("x")], profiles={"gaussian": InputProfile(sink_logit=-1)})
    with pytest.raises(ProbeConfigError, match=r"probe\.profiles\.gaussian"):
        expand_grid(probe, "bf16", SkipSoftmaxConf())


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return to_probe_config(compose("probe", overrides=overrides))


@pytest.mark.parametrize("grid", ["quick", "full"])
def test_shipped_grids_compose_and_plan(grid):
    conf = _compose([f"probe={grid}", "model=tiny_sim"])
    geometry, variant, points = plan_probe(
        conf.model, conf.backend, conf.kv_dtype, conf.skip_softmax, conf.probe
    )
    assert (geometry.num_heads, geometry.num_kv_heads, variant) == (8, 2, "fmha_v2")
    sizes = {p.seqlen for p in points}
    assert min(sizes) == 128 and max(sizes) == 131072
    assert {p.kv_dtype for p in points} == {"bf16", "fp8_e4m3"}
    assert any(len(p.factors) > 1 for p in points)


def test_quick_grid_measures_what_the_claims_need_first():
    conf = _compose(["probe=quick"])
    points = expand_grid(conf.probe, "bf16", conf.skip_softmax)
    first_fp8 = next(i for i, p in enumerate(points) if p.kv_dtype == "fp8_e4m3")
    bf16_128k = [i for i, p in enumerate(points) if p.seqlen == 131072 and p.kv_dtype == "bf16"]
    assert points[0].kv_dtype == "bf16" and points[0].seqlen == 128
    assert bf16_128k and max(bf16_128k) < first_fp8
    assert any(p.seqlen == 131072 and len(p.factors) > 1 for p in points[first_fp8:])


@pytest.mark.parametrize(
    "override", ["probe.bogus=1", "probe.budget_s=soon", "probe.timing.warmpu=3"]
)
def test_compose_rejects_bad_probe_settings(override):
    with pytest.raises(Exception, match=override.split("=")[0].split(".")[-1]):
        _compose([override])


@pytest.mark.parametrize(
    ("records", "code"),
    [
        ([], 0),
        ([{"status": "ok", "factor": 0.0, "rows_beyond_frac": 0.0, "nonfinite": 0}], 0),
        ([{"status": "ok", "factor": 10.0, "rows_beyond_frac": 0.5, "nonfinite": 0}], 0),
        ([{"status": "ok", "factor": 0.0, "rows_beyond_frac": 0.5, "nonfinite": 0}], 1),
        ([{"status": "ok", "factor": 0.0, "rows_beyond_frac": 0.0, "nonfinite": 3}], 1),
        ([{"status": "skipped", "factor": 0.0}], 0),
        ([{"status": "error", "factor": 0.0}], 1),
    ],
)
def test_exit_code(records, code):
    assert exit_code(records, 1e-3) == code
