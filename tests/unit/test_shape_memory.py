"""The full-depth shapes' memory per GPU (benchmarks/live_h200/shapes/memory.py), held by hand.

Each KV figure is written out from the model card's geometry; the weights rest on param_count's
formulas (themselves held to the published totals in test_shape_param_count.py). The folders,
experiments and live plan are held to the same shapes, so a new tp or shape changes them together.
"""

from __future__ import annotations

import re

import pytest

from benchmarks.live_h200.shapes.memory import (
    FULL_SHAPES,
    H200_GIB,
    MEM_FRACTION,
    FullShape,
    attention_layers,
    kv_bytes_per_token,
    load,
    per_gpu,
    smallest_kind,
    state_bytes_per_request,
    table,
)
from benchmarks.live_h200.shapes.param_count import main
from tests.helpers.cells import REPO, compose_conf

GLM, QWEN, LLAMA, EAGLE3 = (
    FULL_SHAPES[0],
    FULL_SHAPES[1],
    FULL_SHAPES[3],
    "llama3_1_8b_eagle3_draft",
)


@pytest.mark.parametrize(
    ("folder", "tp", "kv_bytes", "expected"),
    [
        # 92 layers + NextN, K and V, 8 KV heads of 128: one per GPU at tp 8, bf16
        ("full/glm_4_6", 8, 2, 93 * 2 * 1 * 128 * 2),
        ("full/glm_4_6", 1, 2, 93 * 2 * 8 * 128 * 2),
        ("full/glm_4_6", 8, 1, 93 * 2 * 1 * 128),  # fp8 halves it
        # 12 full-attention layers of 48 + MTP; 2 KV heads of 256, one per GPU from tp 2 on
        ("full/qwen3_next_80b_a3b", 1, 2, 13 * 2 * 2 * 256 * 2),
        ("full/qwen3_next_80b_a3b", 2, 2, 13 * 2 * 1 * 256 * 2),
        ("full/qwen3_next_80b_a3b", 4, 2, 13 * 2 * 1 * 256 * 2),  # replicated, not halved
        ("llama3_1_8b", 2, 2, 32 * 2 * 4 * 128 * 2),
        (EAGLE3, 2, 2, 1 * 2 * 4 * 128 * 2),  # the draft's one layer, its own pool
    ],
)  # fmt: skip
def test_kv_bytes_per_token_per_gpu(folder, tp, kv_bytes, expected):
    assert kv_bytes_per_token(load(folder), tp, kv_bytes) == expected


def test_attention_layers_count_the_mtp_layer_and_skip_deltanet():
    assert attention_layers(load("full/glm_4_6")) == 93
    assert attention_layers(load("full/qwen3_next_80b_a3b")) == 13
    assert attention_layers(load("llama3_1_8b")) == 32


@pytest.mark.parametrize(("tp", "draft_tokens"), [(1, 4), (4, 4), (2, 0)])
def test_deltanet_state_per_request(tp, draft_tokens):
    """36 Gated DeltaNet layers: 32 value heads of 128 x 128 float32 SSM state, once and once
    per draft token; conv window (3 + draft tokens) over 2 x 16 x 128 + 32 x 128 channels, bf16."""
    ssm = 32 * 128 * 128 * 4 * (1 + draft_tokens)
    conv = (2 * 16 * 128 + 32 * 128) * (3 + draft_tokens) * 2
    config = load("full/qwen3_next_80b_a3b")
    assert state_bytes_per_request(config, tp, draft_tokens) == 36 * (ssm + conv) // tp
    assert state_bytes_per_request(load("full/glm_4_6"), tp, draft_tokens) == 0


@pytest.mark.parametrize(
    ("shape", "tp", "weights", "kv_bf16", "state", "fits"),
    [
        (GLM, 8, 83.4, 11.6, 0.0, True),  # the plan's: 95.1 of 119.3 GiB
        (GLM, 4, 166.9, 23.2, 0.0, False),  # weights alone exceed a GPU
        (QWEN, 4, 37.9, 3.2, 2.8, True),
        (QWEN, 2, 75.7, 3.2, 5.7, True),  # beyond half the GPU, inside 0.85 of it
        (QWEN, 1, 151.5, 6.5, 11.4, False),
        (LLAMA, 2, 8.4, 16.5, 0.0, True),  # target + EAGLE3 draft, each replica
    ],
)  # fmt: skip
def test_per_gpu_gib_and_fit(shape, tp, weights, kv_bf16, state, fits):
    m = per_gpu(shape, tp)
    assert (round(m.weights, 1), round(m.kv_bf16, 1), round(m.state, 1)) == (
        weights,
        kv_bf16,
        state,
    )
    assert m.kv_fp8 == pytest.approx(m.kv_bf16 / 2)
    assert m.static() == pytest.approx(m.weights + m.kv_bf16 + m.state)
    assert m.fits() is fits


def test_the_sign_off_fraction_would_not_hold_qwen3_next_at_tp2():
    """COMMON's mem_fraction_static 0.6 (84.2 GiB) is short of tp 2's 84.7: the plan asks 0.85."""
    m = per_gpu(QWEN, 2)
    assert not m.fits(0.6) and m.fits(MEM_FRACTION)
    assert m.static() > 0.6 * H200_GIB


def test_fp8_kv_needs_less_than_bf16():
    m = per_gpu(GLM)
    assert m.static(fp8=True) == pytest.approx(m.static() - m.kv_bf16 / 2)


@pytest.mark.parametrize(
    ("gpus", "kind"),
    [(1, "nvidia-h200"), (2, "nvidia-h200-x2"), (3, "nvidia-h200-x4"), (4, "nvidia-h200-x4"),
     (8, "nvidia-h200-x8"), (16, None)],
)  # fmt: skip
def test_smallest_kind(gpus, kind):
    assert smallest_kind(gpus) == kind


def test_every_planned_shape_fits_its_kind():
    assert [(s.experiment, s.gpus, smallest_kind(s.gpus)) for s in FULL_SHAPES] == [
        ("full_glm_4_6_tp8", 8, "nvidia-h200-x8"),
        ("full_qwen3_next_80b_a3b_tp4", 4, "nvidia-h200-x4"),
        ("full_qwen3_next_80b_a3b_tp2", 2, "nvidia-h200-x2"),
        ("full_llama3_1_8b_eagle3_tp2_dp2", 4, "nvidia-h200-x4"),
    ]
    assert all(per_gpu(s).fits() for s in FULL_SHAPES)


def test_a_shape_too_large_for_its_tp_says_no():
    lines = table()
    glm = [line for line in lines if line.startswith("full/glm_4_6 ")]
    assert [line.split()[-2] for line in glm] == ["NO", "NO", "NO", "yes"]
    assert "8*" in glm[-1]  # the planned tp is marked
    assert per_gpu(FullShape("x", "full/glm_4_6", 8), tokens=4_000_000).fits() is False


@pytest.mark.parametrize(("name", "layers"), [("glm_4_6", 92), ("qwen3_next_80b_a3b", 48)])
def test_full_configs_are_the_cut_ones_with_every_layer(name, layers):
    cut, full = load(name), load(f"full/{name}")
    assert full["num_hidden_layers"] == layers
    assert {**cut, "num_hidden_layers": layers} == full


@pytest.mark.parametrize("shape", FULL_SHAPES, ids=lambda s: s.experiment)
def test_each_experiment_serves_its_shape_at_its_tp_and_dp(shape):
    conf = compose_conf([f"experiment={shape.experiment}", "server=sglang"])
    model = conf.model
    assert model.path == f"benchmarks/live_h200/shapes/{shape.folder}"
    assert model.tp == shape.tp and model.load_format == "dummy"
    extra = list(model.extra_args)
    dp = int(extra[extra.index("--dp-size") + 1]) if "--dp-size" in extra else 1
    assert dp == shape.dp
    assert conf.speed.enabled
    draft = model.speculative.draft_model_path
    assert draft == (f"benchmarks/live_h200/shapes/{shape.draft}" if shape.draft else None)


def test_the_live_plan_needs_the_gpus_memory_counts():
    script = (REPO / "benchmarks/live_h200/live_signoff.sh").read_text(encoding="utf-8")
    listed = re.search(r"FULL_GPUS=\(([^)]*)\)", script)
    assert listed is not None
    gpus = dict(entry.split(":") for entry in listed.group(1).split())
    assert gpus == {s.experiment.removeprefix("full_"): str(s.gpus) for s in FULL_SHAPES}


def test_param_count_prints_both_tables(capsys):
    assert main([]) == 0
    printed = capsys.readouterr().out
    assert "full shapes, per GPU (GiB)" in printed and "full/glm_4_6" in printed


def test_the_readmes_memory_table_is_memory_pys():
    """Every row of the README's full-depth table: weights, KV, state and total as computed."""
    readme = (REPO / "benchmarks/live_h200/shapes/README.md").read_text(encoding="utf-8")
    section = readme.split("## Full-depth shapes")[1].split("\n## ")[0]
    row = (
        r"^\| (GLM|Qwen3|Llama)[^|]*\| \**(\d)\**[^|]*\|[^|]*\| ([\d.]+) \| ([\d.]+) / ([\d.]+) \| "
    )
    rows = re.findall(row + r"([\d.]+) \| ([\d.]+) \|", section, re.MULTILINE)
    assert len(rows) == 6
    shapes = {"GLM": GLM, "Qwen3": QWEN, "Llama": LLAMA}
    for model, tp, *figures in rows:
        m = per_gpu(shapes[model], int(tp))
        computed = [m.weights, m.kv_bf16, m.kv_fp8, m.state, m.static()]
        assert [float(f) for f in figures] == [round(x, 1) for x in computed], (model, tp)
