"""The EAGLE3 draft in torch: SGLang 0.5.23's folder format, its checks, and the TTT arithmetic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from benchmarks.live_h200 import eagle3_format as fmt  # noqa: E402
from benchmarks.live_h200.eagle3_draft import aux_states  # noqa: E402
from benchmarks.live_h200.eagle3_train import load_target, make_draft  # noqa: E402
from benchmarks.live_h200.longctx_eval import load_draft  # noqa: E402
from benchmarks.live_h200.train_longctx import make_target, save_target  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any, dict[str, Any]]:
    """A tiny saved target, loaded back in bf16, and a fresh draft saved beside it."""
    folder = tmp_path_factory.mktemp("lc")
    save_target(make_target("cpu", 0), folder / "target")
    target = load_target(folder / "target", "cpu")
    config = json.loads((folder / "target" / "config.json").read_text())
    torch.manual_seed(1)
    draft = make_draft(target, config, "cpu")
    d2t, t2d = fmt.token_maps([1] * 264, 264)
    draft.save(folder / "draft", d2t, t2d)
    return folder, target, draft, config


def test_target_config_has_rope_where_transformers_and_sglang_read_it(pair: Any) -> None:
    _, target, _, config = pair
    assert config["rope_parameters"]["rope_type"] == "llama3"
    assert config["rope_scaling"] == config["rope_parameters"]
    assert config["max_position_embeddings"] == 135168
    assert target.config.rope_parameters["factor"] == 4.0


def test_saved_draft_passes_the_format_checks_and_loads_back(pair: Any) -> None:
    folder, target, draft, config = pair
    assert fmt.check_folder(folder / "draft", config) == []
    header, _ = fmt.read_header(folder / "draft" / fmt.WEIGHTS)
    assert set(header) - {"__metadata__"} == set(fmt.expected_tensors(draft.config))
    again = load_draft(folder / "draft", target)
    ids = torch.randint(0, 256, (1, 40))
    _, aux = aux_states(
        target, ids, draft.config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
    )
    with torch.no_grad():
        a = draft.to(torch.bfloat16).ttt_logits(target.model.embed_tokens, ids, aux, 2)
        b = again.ttt_logits(target.model.embed_tokens, ids, aux, 2)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"architectures": ["LlamaForCausalLM"]}, "config.architectures"),
        (
            {"rope_parameters": {"rope_type": "default", "rope_theta": 1e4}},
            "config.rope_parameters",
        ),
        ({"target_hidden_size": 64}, "config.target_hidden_size"),
        ({"draft_vocab_size": 200}, "lm_head.weight: BF16 [264, 128], expected BF16 [200, 128]"),
    ],
)
def test_format_checks_name_what_is_wrong(pair: Any, tmp_path: Path, edit: dict[str, Any],
                                          message: str) -> None:  # fmt: skip
    folder, _, _, config = pair
    bad = tmp_path / "draft"
    bad.mkdir()
    (bad / fmt.WEIGHTS).write_bytes((folder / "draft" / fmt.WEIGHTS).read_bytes())
    draft_config = {**json.loads((folder / "draft" / "config.json").read_text()), **edit}
    (bad / "config.json").write_text(json.dumps(draft_config))
    assert any(message in p for p in fmt.check_folder(bad, config))


def test_a_late_start_gives_the_same_logits_as_the_whole_pass(pair: Any) -> None:
    _, target, draft, _ = pair
    ids = torch.randint(0, 256, (1, 64))
    layers = draft.config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
    _, aux = aux_states(target, ids, layers)
    d = draft.float()
    with torch.no_grad():
        whole = d.ttt_logits(target.model.embed_tokens, ids, aux.float(), 3)
        late = d.ttt_logits(target.model.embed_tokens, ids, aux.float(), 3, start=50)
    for k in range(3):
        torch.testing.assert_close(whole[k][:, 50:], late[k], atol=1e-4, rtol=1e-4)
