"""The production shapes' parameter formulas, held to the published totals of the uncut models.

The committed shapes (benchmarks/live_h200/shapes/*/config.json) are the real architectures with
layers cut; restoring each one's layer count must give the checkpoint's published size, and the cut
shape must fit one H200 with room for a KV pool.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from benchmarks.live_h200.shapes.param_count import (
    SHAPES_DIR,
    WEIGHT_BUDGET_GIB,
    ParamCount,
    count,
    fits,
    main,
    weights_gib,
)

REPO = Path(__file__).resolve().parents[2]


def shape(name: str, **uncut: int) -> dict:
    config = json.loads((SHAPES_DIR / name / "config.json").read_text(encoding="utf-8"))
    return {**config, **uncut}


@pytest.mark.parametrize(
    ("name", "uncut", "target", "draft"),
    [
        # HF's safetensors total of meta-llama/Llama-3.1-8B-Instruct (bf16, nothing cut).
        ("llama3_1_8b", {}, 8_030_261_248, 0),
        # DeepSeek-V3's 671B main model to the parameter (its report: "671B total"); the NextN
        # module with its own embedding and head is the checkpoint's other 14B (685B on HF).
        ("deepseek_v3", {"num_hidden_layers": 61}, 671_026_419_200, 13_463_426_304),
        # Qwen3-Next-80B-A3B's published total (the MTP layer beside it, sharing the embeddings).
        ("qwen3_next_80b_a3b", {"num_hidden_layers": 48}, 79_674_391_296, 1_650_471_424),
    ],
)  # fmt: skip
def test_uncut_shapes_count_the_published_totals(name, uncut, target, draft):
    assert count(shape(name, **uncut)) == ParamCount(target, draft)


def test_glm_4_6_uncut_is_its_cards_355b():
    """The card says "355B total"; the 92 layers and the NextN layer's own parts are within 1%."""
    n = count(shape("glm_4_6", num_hidden_layers=92))
    assert n.target == pytest.approx(355e9, rel=0.01)
    assert n.total - 2 * 151_552 * 5120 == pytest.approx(355e9, rel=0.01)  # less MTP's embed/head


def test_eagle3_draft_is_one_layer_with_its_32k_head():
    n = count(shape("llama3_1_8b_eagle3_draft"))
    h, vocab, draft_vocab = 4096, 128_256, 32_000
    layer = 2 * h * (32 + 2 * 8) * 128 + 32 * 128 * h + 3 * h * 14_336 + 3 * h
    assert n == ParamCount(0, vocab * h + draft_vocab * h + 3 * h * h + layer + h)


@pytest.mark.parametrize(
    ("name", "layers", "kinds"),
    [
        ("deepseek_v3", 4, "3 dense MLA layers + 1 MoE layer (256 experts)"),
        ("glm_4_6", 4, "3 dense + 1 MoE layer (160 experts)"),
        ("qwen3_next_80b_a3b", 4, "3 Gated DeltaNet + 1 full-attention layer (512 experts)"),
    ],
)
def test_cut_shapes_keep_one_of_each_kind_and_their_mtp_layer(name, layers, kinds):
    config = shape(name)
    assert config["num_hidden_layers"] == layers, kinds
    assert config["num_nextn_predict_layers"] == 1
    if "first_k_dense_replace" in config:  # dense layers, then at least one MoE layer
        assert 0 < config["first_k_dense_replace"] < layers
    else:  # every full_attention_interval-th layer is full attention: at least one of each
        assert config["full_attention_interval"] == layers
    assert count(config).draft > 0


@pytest.mark.parametrize("name", ["deepseek_v3", "glm_4_6", "qwen3_next_80b_a3b", "llama3_1_8b"])
def test_every_cut_shape_fits_one_h200(name):
    assert fits(count(shape(name)).total)
    assert not fits(count(shape(name, num_hidden_layers=200)).total)  # the check can say no


def test_token_ids_of_the_projects_tokenizer_stay_below_every_vocab():
    tokenizer = REPO / "benchmarks/results/live-h200/trained-model/target/tokenizer.json"
    model = json.loads(tokenizer.read_text(encoding="utf-8"))
    top = max([*model["model"]["vocab"].values(), *(t["id"] for t in model["added_tokens"])])
    for config_file in SHAPES_DIR.glob("*/config.json"):
        config = json.loads(config_file.read_text(encoding="utf-8"))
        assert top < config.get("draft_vocab_size", config["vocab_size"]), config_file
        assert config["bos_token_id"] < config["vocab_size"] > config["eos_token_id"]
    # The cut shapes stop where the tokenizer does (<|eot|>); llama3_1_8b keeps Llama's ids.
    for name in ("deepseek_v3", "glm_4_6", "qwen3_next_80b_a3b", "llama3_1_8b_eagle3_draft"):
        assert (shape(name)["bos_token_id"], shape(name)["eos_token_id"]) == (256, 261)


@pytest.mark.parametrize(
    ("experiment", "algorithm"),
    [
        ("shape_deepseek_v3", "EAGLE"),
        ("shape_qwen3_next_80b_a3b", "NEXTN"),
        ("shape_glm_4_6", "EAGLE"),
        ("shape_llama3_1_8b_eagle3", "EAGLE3"),
    ],
)
def test_each_shape_experiment_points_at_a_committed_shape(experiment, algorithm):
    conf = OmegaConf.load(REPO / "conf" / "experiment" / f"{experiment}.yaml")
    model = conf.model
    assert (REPO / model.path / "config.json").is_file()
    assert model.load_format == "dummy" and model.tp == 1
    shipped = OmegaConf.load(REPO / "conf" / "model" / f"{experiment.removeprefix('shape_')}.yaml")
    assert shipped.speculative.algorithm == algorithm  # the experiment keeps the shipped recipe
    draft = model.get("speculative", {}).get("draft_model_path")
    assert draft is None or (REPO / draft / "config.json").is_file()


def test_weights_gib_and_the_table(capsys):
    assert weights_gib(2**30) == 2.0
    assert main([]) == 0
    cut = capsys.readouterr().out.split("full shapes")[0]  # the full ones: test_shape_memory.py
    assert f"fits {WEIGHT_BUDGET_GIB:.1f} GiB" in cut and "NO" not in cut


def test_an_architecture_without_a_formula_is_named():
    with pytest.raises(ValueError, match="no parameter formula for MixtralForCausalLM"):
        count({"architectures": ["MixtralForCausalLM"]})


def test_the_eagle3_draft_reaches_the_targets_positions():
    """SGLang 0.5.23 gives a draft the target's context length and refuses a shorter config."""
    draft, target = shape("llama3_1_8b_eagle3_draft"), shape("llama3_1_8b")
    assert draft["max_position_embeddings"] >= target["max_position_embeddings"]
    assert draft["rope_scaling"] == target["rope_scaling"]
