"""The EAGLE3 draft folder SGLang 0.5.23 serves, as read from its wheel (pure, stdlib only).

Sources (``pip download --no-deps sglang==0.5.23``; lines of that wheel):

- ``sglang/srt/models/llama_eagle3.py``: ``LlamaForCausalLMEagle3`` (272-387). Its one decoder
  layer's q/k/v take ``2 * hidden_size`` inputs, the ``input_layernorm``-ed token embedding
  concatenated with the ``hidden_norm``-ed feature (62-102); ``fc`` maps
  ``target_hidden_size * num_aux_hidden_states`` to ``hidden_size``, no bias unless ``bias``
  (151-167); ``num_aux_hidden_states`` is the config's, else the length of
  ``eagle_config.eagle_aux_hidden_state_layer_ids``, else 3 (156-161); ``lm_head`` has
  ``draft_vocab_size`` rows (306-314); weights load by name, ``model.`` prefixed when not
  top-level, q/k/v and gate/up stacked (325-378); ``d2t`` holds draft id -> target id
  differences, ``hot_token_id = d2t + arange`` (350-353); ``t2d`` is skipped (355-356).
- ``sglang/srt/models/llama.py``: ``set_eagle3_layers_to_capture`` (929-941) captures the
  residual stream entering layers ``[2, L // 2, L - 3]`` by default, or ``id + 1`` for each of
  ``eagle_aux_hidden_state_layer_ids``: HF's ``hidden_states[id + 1]`` (the output of layer id).
- ``sglang/srt/model_executor/model_runner_components/spec_aux_hidden_state.py`` (185-196): the
  ids come from the draft config's ``eagle_config``.
- ``sglang/srt/speculative/eagle_worker_v2.py`` (351-369): with ``draft_vocab_size`` set the draft
  keeps its own ``lm_head`` and takes the target's embedding (``set_embed``).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHITECTURE = "LlamaForCausalLMEagle3"
WEIGHTS = "model.safetensors"
ROPE_KEYS = ("rope_parameters", "rope_scaling", "rope_theta", "max_position_embeddings")


def aux_layer_ids(num_layers: int) -> list[int]:
    """``eagle_aux_hidden_state_layer_ids`` giving SGLang's default capture ``[2, L//2, L-3]``."""
    if num_layers < 4:
        raise ValueError(f"an EAGLE3 target needs at least 4 layers (has {num_layers})")
    return [1, num_layers // 2 - 1, num_layers - 4]


def captured_hidden_states(layer_ids: list[int]) -> list[int]:
    """Indices into HF's ``output_hidden_states`` that SGLang captures for ``layer_ids``."""
    return [i + 1 for i in layer_ids]


@dataclass(frozen=True)
class DraftArch:
    """The draft's own sizes (one decoder layer)."""

    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int


def draft_config(target: dict[str, Any], arch: DraftArch, draft_vocab_size: int) -> dict[str, Any]:
    """The draft's ``config.json``: Llama keys, the target's RoPE and vocabulary, the aux layers."""
    layers = aux_layer_ids(int(target["num_hidden_layers"]))
    config: dict[str, Any] = {
        "architectures": [ARCHITECTURE], "model_type": "llama", "num_hidden_layers": 1,
        "hidden_size": arch.hidden_size, "intermediate_size": arch.intermediate_size,
        "num_attention_heads": arch.num_attention_heads,
        "num_key_value_heads": arch.num_key_value_heads, "head_dim": arch.head_dim,
        "hidden_act": "silu", "rms_norm_eps": target.get("rms_norm_eps", 1e-5),
        "vocab_size": target["vocab_size"], "draft_vocab_size": draft_vocab_size,
        "target_hidden_size": target["hidden_size"], "tie_word_embeddings": False,
        "bos_token_id": target.get("bos_token_id"), "eos_token_id": target.get("eos_token_id"),
        "pad_token_id": target.get("pad_token_id"), "torch_dtype": "bfloat16", "dtype": "bfloat16",
        "eagle_config": {"eagle_aux_hidden_state_layer_ids": layers, "use_aux_hidden_state": True},
    }  # fmt: skip
    config.update({k: target[k] for k in ROPE_KEYS if k in target})
    return config


def expected_tensors(config: dict[str, Any]) -> dict[str, tuple[list[int], str]]:
    """Tensor name -> (shape, safetensors dtype) that ``load_weights`` places, d2t/t2d included."""
    h, inter = int(config["hidden_size"]), int(config["intermediate_size"])
    q = int(config["num_attention_heads"]) * int(config["head_dim"])
    kv = int(config["num_key_value_heads"]) * int(config["head_dim"])
    aux = len(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
    layer = "layers.0."
    bf = "BF16"
    return {
        f"{layer}self_attn.q_proj.weight": ([q, 2 * h], bf),
        f"{layer}self_attn.k_proj.weight": ([kv, 2 * h], bf),
        f"{layer}self_attn.v_proj.weight": ([kv, 2 * h], bf),
        f"{layer}self_attn.o_proj.weight": ([h, q], bf),
        f"{layer}mlp.gate_proj.weight": ([inter, h], bf),
        f"{layer}mlp.up_proj.weight": ([inter, h], bf),
        f"{layer}mlp.down_proj.weight": ([h, inter], bf),
        f"{layer}input_layernorm.weight": ([h], bf),
        f"{layer}hidden_norm.weight": ([h], bf),
        f"{layer}post_attention_layernorm.weight": ([h], bf),
        "fc.weight": ([h, int(config["target_hidden_size"]) * aux], bf),
        "norm.weight": ([h], bf),
        "lm_head.weight": ([int(config["draft_vocab_size"]), h], bf),
        "d2t": ([int(config["draft_vocab_size"])], "I64"),
        "t2d": ([int(config["vocab_size"])], "BOOL"),
    }


def token_maps(counts: list[int], draft_vocab_size: int) -> tuple[list[int], list[bool]]:
    """``d2t`` and ``t2d`` for the ``draft_vocab_size`` most frequent target ids of ``counts``.

    The hot ids are kept in ascending order (``hot = d2t + arange``); ties go to the lower id.
    """
    if not 0 < draft_vocab_size <= len(counts):
        raise ValueError(f"draft_vocab_size {draft_vocab_size}: expected 1..{len(counts)}")
    order = sorted(range(len(counts)), key=lambda i: (-counts[i], i))[:draft_vocab_size]
    hot = sorted(order)
    chosen = set(hot)
    return [t - d for d, t in enumerate(hot)], [i in chosen for i in range(len(counts))]


def read_header(path: Path) -> tuple[dict[str, Any], int]:
    """A safetensors file's header (name -> dtype, shape, offsets) and where its data starts."""
    with path.open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    return header, 8 + size


def read_int64(path: Path, name: str) -> list[int]:
    """The values of the int64 tensor ``name`` (d2t) in ``path``."""
    header, base = read_header(path)
    start, end = header[name]["data_offsets"]
    with path.open("rb") as f:
        f.seek(base + start)
        data = f.read(end - start)
    return list(struct.unpack(f"<{len(data) // 8}q", data))


def check_folder(folder: Path, target: dict[str, Any]) -> list[str]:
    """What stops SGLang 0.5.23 serving ``folder`` as the EAGLE3 draft of ``target`` (none: ok)."""
    config_path, weights = folder / "config.json", folder / WEIGHTS
    if not config_path.is_file() or not weights.is_file():
        return [f"{folder}: needs config.json and {WEIGHTS}"]
    config = json.loads(config_path.read_text())
    problems = [f"config.{k}: {config.get(k)!r}, expected {v!r}" for k, v in (
        ("architectures", [ARCHITECTURE]), ("num_hidden_layers", 1),
        ("vocab_size", target["vocab_size"]), ("target_hidden_size", target["hidden_size"]),
        ("tie_word_embeddings", False),
        *((k, target[k]) for k in ROPE_KEYS if k in target)) if config.get(k) != v]  # fmt: skip
    if problems:
        return problems
    header, _ = read_header(weights)
    for name, (shape, dtype) in expected_tensors(config).items():
        got = header.get(name)
        if got is None:
            problems.append(f"{WEIGHTS}: no tensor {name}")
        elif (got["shape"], got["dtype"]) != (shape, dtype):
            problems.append(f"{name}: {got['dtype']} {got['shape']}, expected {dtype} {shape}")
    if not problems:
        hot = [d + i for i, d in enumerate(read_int64(weights, "d2t"))]
        if sorted(set(hot)) != hot or hot[0] < 0 or hot[-1] >= int(config["vocab_size"]):
            problems.append("d2t: draft id + d2t must be distinct ascending target ids")
    return problems


def chain_steps(matches: list[list[bool]], draft_tokens: int = 3) -> int:
    """Verify steps greedy chain decoding needs for a completion, from teacher-forced matches.

    ``matches[k][i]``: draft step ``k``, run after the completion's token ``i`` was committed,
    drafts the completion's token ``i + k + 1`` (the target's own greedy token). The first
    completion token comes from the prefill; each verify step after committed token ``i``
    accepts the leading matching drafts (at most ``draft_tokens``) plus the target's own token.

    Returns:
        The number of verify steps; (completion tokens - 1) / steps is SGLang's accept length
        less its count of the prefill's token.
    """
    total = len(matches[0]) if matches else 0
    i, steps = 0, 0
    while i < total - 1:
        accepted = 0
        while (accepted < min(draft_tokens, len(matches)) and i + accepted + 1 < total
               and matches[accepted][i]):  # fmt: skip
            accepted += 1
        i = min(total - 1, i + accepted + 1)
        steps += 1
    return steps
