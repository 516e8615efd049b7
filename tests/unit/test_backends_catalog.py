from __future__ import annotations

from pathlib import Path

import pytest

from backends.backend_conf import GpuConf, SkipSoftmaxConf
from backends.catalog import CatalogError, default_conf_dir, load_backends, load_model
from backends.compat import outcome_of, preflight
from backends.gpu import gpu_from_config
from backends.launch import LaunchOptions, plan_launch
from backends.resolved import CellSpec

MODELS = sorted((default_conf_dir() / "model").glob("*.yaml"))
REAL_MODELS = {
    "deepseek_v3": ("deepseek-ai/DeepSeek-V3-0324", 8, "EAGLE", True),
    "qwen3_next_80b_a3b": ("Qwen/Qwen3-Next-80B-A3B-Thinking-FP8", 4, "NEXTN", False),
    "glm_4_6": ("zai-org/GLM-4.6", 8, "EAGLE", False),
    "llama3_1_8b_eagle3": ("meta-llama/Llama-3.1-8B-Instruct", 1, "EAGLE3", False),
}
H200 = gpu_from_config(GpuConf(detect=False, compute_capability="9.0"))
B200 = gpu_from_config(GpuConf(detect=False, compute_capability="10.0"))


@pytest.mark.parametrize("stem", sorted(REAL_MODELS))
def test_real_model_configs(stem: str) -> None:
    path, tp, algorithm, mla = REAL_MODELS[stem]
    model = load_model(default_conf_dir() / "model" / f"{stem}.yaml")
    assert (model.path, model.tp, model.speculative.algorithm, model.is_mla) == (
        path,
        tp,
        algorithm,
        mla,
    )
    spec = model.speculative
    assert (spec.num_steps, spec.eagle_topk, spec.num_draft_tokens) == (3, 1, 4)
    geometry = model.attention
    assert geometry.num_heads % geometry.num_kv_heads == 0 and geometry.head_dim in (128, 192, 256)


@pytest.mark.parametrize("path", MODELS, ids=[p.stem for p in MODELS])
def test_every_model_plans_on_fa3_and_fmha_v2(path: Path) -> None:
    model = load_model(path)
    backends = load_backends()
    plan = plan_launch(
        CellSpec(model, backends["fa3"], "auto", SkipSoftmaxConf(), H200, "0.5.23", LaunchOptions())
    )
    assert plan.args[plan.args.index("--model-path") + 1] == model.path
    assert plan.args[-len(model.extra_args) or len(plan.args) :] == model.extra_args
    fmha = preflight(
        CellSpec(model, backends["fmha_v2"], "auto", SkipSoftmaxConf(), B200, "0.5.23")
    )
    # MLA models cannot use trtllm_mha; every other shipped model can on SM100.
    assert (outcome_of(fmha) == "crash-at-start") is model.is_mla


def test_qwen3_next_keeps_radix_cache_off() -> None:
    model = load_model(default_conf_dir() / "model" / "qwen3_next_80b_a3b.yaml")
    plan = plan_launch(
        CellSpec(
            model,
            load_backends()["fmha_v2"],
            "bf16",
            SkipSoftmaxConf(),
            H200,
            "0.5.19",
            LaunchOptions(),
        )
    )
    assert "--disable-radix-cache" in plan.args
    assert plan.requested["speculative_algorithm"] == "EAGLE"  # NEXTN resolves to EAGLE


@pytest.mark.parametrize(
    ("extra", "rule"),
    [
        ([], None),  # as shipped: --disable-radix-cache, no mamba radix cache at all
        (["--mamba-radix-cache-strategy", "auto"], None),  # page 64 + overlap: extra_buffer
        (["--mamba-radix-cache-strategy", "no_buffer"], "mamba_no_buffer_page_size"),
    ],
)
def test_qwen3_next_mamba_strategy_on_trtllm_mha(extra: list[str], rule: str | None) -> None:
    model = load_model(default_conf_dir() / "model" / "qwen3_next_80b_a3b.yaml")
    assert model.hybrid_mamba
    if extra:  # the radix cache back on, with the strategy asked for
        model.extra_args = [a for a in model.extra_args if a != "--disable-radix-cache"] + extra
    found = preflight(
        CellSpec(model, load_backends()["trtllm_mha"], "bf16", SkipSoftmaxConf(), B200, "0.5.23")
    )
    assert {f.rule for f in found if f.outcome == "reject"} == ({rule} if rule else set())


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("name: x\nattention_backend: fa3\nflavour: 1\n", "odd.yaml: unknown key flavour; allowed"),
        ("name: x\nattention_backend: [fa3]\n", r"attention_backend = \['fa3'\] must be a str"),
        ("- fa3\n", "expected a mapping"),
        ("name: [unclosed\n", "cannot read YAML"),
    ],
)
def test_bad_backend_file_names_file_and_key(tmp_path: Path, text: str, error: str) -> None:
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "odd.yaml").write_text(text)
    with pytest.raises(CatalogError, match=error) as info:
        load_backends(tmp_path)
    assert "odd.yaml" in str(info.value)


def test_nested_unknown_model_key_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\nspeculative:\n  algorithm: EAGLE\n  num_stepz: 3\nsampling:\n  temperature: 0\n"
    )
    with pytest.raises(CatalogError, match=r"m\.yaml: unknown key speculative\.num_stepz; allowed"):
        load_model(path)


def test_missing_backend_folder(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="--conf-dir"):
        load_backends(tmp_path)
