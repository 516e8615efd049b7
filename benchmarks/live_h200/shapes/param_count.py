"""Parameters of a production shape's config.json, and whether it fits one H200 with random weights.

    python3 -m benchmarks.live_h200.shapes.param_count   # every shape folder, then the full shapes

One pure function per architecture counts the weights SGLang allocates for it (the target's layers,
embeddings and head, and its MTP / NextN or EAGLE3 draft), from the config values alone: the
dummy loader (``--load-format dummy``) sizes the same tensors from the same values. Norm, bias and
router-bias vectors are counted; buffers (RoPE caches) are not. The formulas are checked against
the published totals of the uncut checkpoints (tests/unit/test_shape_param_count.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Config = Mapping[str, Any]
SHAPES_DIR = Path(__file__).resolve().parent
H200_GIB = 140.4  # 143,771 MiB as nvidia-smi reports the H200's 141 GB
# Weights may take at most half the GPU: SGLang's static pool (mem_fraction_static, 0.8-0.9 by
# default on an H200) then still holds a KV cache as large as the weights, and CUDA graphs and
# activations fit in the rest.
WEIGHT_BUDGET_GIB = H200_GIB / 2


@dataclass(frozen=True)
class ParamCount:
    """A shape's parameters: the target model and its speculative draft."""

    target: int
    draft: int

    @property
    def total(self) -> int:
        """Every parameter SGLang allocates (the draft's own embeddings included)."""
        return self.target + self.draft


def _embed_and_head(c: Config, vocab: int | None = None) -> int:
    tied = c.get("tie_word_embeddings", False)
    return (1 if tied else 2) * (vocab or c["vocab_size"]) * c["hidden_size"]


def _gated_mlp(hidden: int, inner: int) -> int:
    return 3 * hidden * inner  # gate, up and down projections


def _gqa_attention(c: Config, q_in: int, bias: bool, qk_norm: bool, gate: int = 1) -> int:
    """q (``gate`` x: Qwen3-Next's output gate), k, v, o; ``q_in``: the width q/k/v read."""
    hd, nq, nkv, h = (
        c["head_dim"],
        c["num_attention_heads"],
        c["num_key_value_heads"],
        c["hidden_size"],
    )
    qkv = q_in * (gate * nq * hd + 2 * nkv * hd) + (nq * hd + 2 * nkv * hd if bias else 0)
    return qkv + nq * hd * h + (2 * hd if qk_norm else 0)


def _moe(c: Config, experts: int, inner: int, shared_inner: int, router_bias: bool) -> int:
    h = c["hidden_size"]
    return (
        experts * (h + _gated_mlp(h, inner))
        + (experts if router_bias else 0)
        + _gated_mlp(h, shared_inner)
    )


def _nextn_wrap(c: Config) -> int:
    """A NextN layer's own parts: two input norms, the 2h -> h projection, the head's norm."""
    h = c["hidden_size"]
    return 3 * h + 2 * h * h


def llama(c: Config) -> int:
    """LlamaForCausalLM: GQA attention and a gated MLP per layer."""
    h = c["hidden_size"]
    layer = _gqa_attention(c, h, c.get("attention_bias", False), False) + _gated_mlp(
        h, c["intermediate_size"]
    )
    return _embed_and_head(c) + c["num_hidden_layers"] * (layer + 2 * h) + h


def llama_eagle3(c: Config) -> int:
    """LlamaForCausalLMEagle3: one layer over [embedding, hidden] (2h); fc over 3 target layers."""
    h = c["hidden_size"]
    layer = _gqa_attention(c, 2 * h, False, False) + _gated_mlp(h, c["intermediate_size"]) + 3 * h
    head = c.get("draft_vocab_size") or c["vocab_size"]
    return c["vocab_size"] * h + head * h + 3 * h * h + layer + h


def _mla(c: Config) -> int:
    h, nh = c["hidden_size"], c["num_attention_heads"]
    q_rank, kv_rank, rope = c["q_lora_rank"], c["kv_lora_rank"], c["qk_rope_head_dim"]
    nope, v = c["qk_nope_head_dim"], c["v_head_dim"]
    q = h * q_rank + q_rank + q_rank * nh * (nope + rope)
    kv = h * (kv_rank + rope) + kv_rank + kv_rank * nh * (nope + v)
    return q + kv + nh * v * h


def _deepseek_layer(c: Config, dense: bool) -> int:
    h = c["hidden_size"]
    if dense:
        mlp = _gated_mlp(h, c["intermediate_size"])
    else:
        shared = c["moe_intermediate_size"] * c["n_shared_experts"]
        mlp = _moe(c, c["n_routed_experts"], c["moe_intermediate_size"], shared, True)
    return _mla(c) + mlp + 2 * h


def deepseek_v3(c: Config) -> ParamCount:
    """DeepseekV3ForCausalLM (MLA, MoE after ``first_k_dense_replace``) and its NextN layers."""
    dense = min(c["first_k_dense_replace"], c["num_hidden_layers"])
    layers = dense * _deepseek_layer(c, True) + (c["num_hidden_layers"] - dense) * _deepseek_layer(
        c, False
    )
    nextn = c.get("num_nextn_predict_layers", 0) * (
        _deepseek_layer(c, False) + _nextn_wrap(c) + _embed_and_head(c)
    )
    return ParamCount(_embed_and_head(c) + layers + c["hidden_size"], nextn)


def _glm_layer(c: Config, dense: bool) -> int:
    h = c["hidden_size"]
    attention = _gqa_attention(c, h, c.get("attention_bias", False), c.get("use_qk_norm", False))
    if dense:
        mlp = _gated_mlp(h, c["intermediate_size"])
    else:
        shared = c["moe_intermediate_size"] * c["n_shared_experts"]
        mlp = _moe(c, c["n_routed_experts"], c["moe_intermediate_size"], shared, True)
    return attention + mlp + 2 * h


def glm4_moe(c: Config) -> ParamCount:
    """Glm4MoeForCausalLM (GQA with biases and QK norm, MoE after the dense layers) and NextN."""
    dense = min(c["first_k_dense_replace"], c["num_hidden_layers"])
    layers = dense * _glm_layer(c, True) + (c["num_hidden_layers"] - dense) * _glm_layer(c, False)
    nextn = c.get("num_nextn_predict_layers", 0) * (
        _glm_layer(c, False) + _nextn_wrap(c) + _embed_and_head(c)
    )
    return ParamCount(_embed_and_head(c) + layers + c["hidden_size"], nextn)


def _gated_deltanet(c: Config) -> int:
    h, nk, dk = c["hidden_size"], c["linear_num_key_heads"], c["linear_key_head_dim"]
    nv, dv = c["linear_num_value_heads"], c["linear_value_head_dim"]
    qkvz = h * (2 * nk * dk + 2 * nv * dv)
    conv = (2 * nk * dk + nv * dv) * c["linear_conv_kernel_dim"]
    # in_proj_ba, dt_bias and A_log per value head; the gated norm over one value head
    return qkvz + h * 2 * nv + conv + 2 * nv + dv + nv * dv * h


def _qwen3_next_layer(c: Config, full_attention: bool) -> int:
    h = c["hidden_size"]
    mixer = _gqa_attention(c, h, False, True, gate=2) if full_attention else _gated_deltanet(c)
    moe = _moe(
        c, c["num_experts"], c["moe_intermediate_size"], c["shared_expert_intermediate_size"], False
    )
    return mixer + moe + h + 2 * h  # the shared expert's 1-wide gate, two norms


def qwen3_next(c: Config) -> ParamCount:
    """Qwen3NextForCausalLM: every ``full_attention_interval``-th layer full attention, the rest
    Gated DeltaNet, all MoE; the MTP layer is full attention and shares the embeddings."""
    every = c["full_attention_interval"]
    kinds = [(i + 1) % every == 0 for i in range(c["num_hidden_layers"])]
    layers = sum(_qwen3_next_layer(c, full) for full in kinds)
    h = c["hidden_size"]
    mtp = c.get("num_nextn_predict_layers", 0) * (_qwen3_next_layer(c, True) + _nextn_wrap(c))
    return ParamCount(_embed_and_head(c) + layers + h, mtp)


COUNTERS: dict[str, Callable[[Config], ParamCount]] = {
    "LlamaForCausalLM": lambda c: ParamCount(llama(c), 0),
    "LlamaForCausalLMEagle3": lambda c: ParamCount(0, llama_eagle3(c)),
    "DeepseekV3ForCausalLM": deepseek_v3,
    "Glm4MoeForCausalLM": glm4_moe,
    "Qwen3NextForCausalLM": qwen3_next,
}


def count(c: Config) -> ParamCount:
    """The parameters of ``c`` (a config.json as loaded), by its ``architectures[0]``.

    Raises:
        ValueError: an architecture without a formula here.
    """
    arch = c["architectures"][0]
    if arch not in COUNTERS:
        raise ValueError(
            f"no parameter formula for {arch}: add one to COUNTERS ({', '.join(COUNTERS)})"
        )
    return COUNTERS[arch](c)


def weights_gib(params: int, bytes_per_param: int = 2) -> float:
    """GiB of ``params`` weights (bf16 / fp16: 2 bytes each)."""
    return params * bytes_per_param / 2**30


def fits(params: int, budget_gib: float = WEIGHT_BUDGET_GIB) -> bool:
    """Whether bf16 weights of ``params`` leave one H200 room for an equal KV pool."""
    return weights_gib(params) <= budget_gib


def _loaded_as(folder: Path) -> str:
    """The config class transformers loads ``folder`` as ("-" without transformers installed)."""
    try:
        from transformers import AutoConfig
    except ImportError:
        return "-"
    return type(AutoConfig.from_pretrained(folder)).__name__


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv] or sorted(p.parent for p in SHAPES_DIR.glob("*/config.json"))
    head = f"fits {WEIGHT_BUDGET_GIB:.1f} GiB  transformers"
    print(f"{'shape':26} {'target':>15} {'draft':>15} {'GiB':>5}  {head}")
    worst = 0
    for folder in folders:
        n = count(json.loads((folder / "config.json").read_text(encoding="utf-8")))
        ok = fits(n.total)
        worst |= not ok
        size = f"{n.target:>15,} {n.draft:>15,} {weights_gib(n.total):5.1f}"
        print(f"{folder.name:26} {size}  {'yes' if ok else 'NO':13} {_loaded_as(folder)}")
    if not argv:  # and the full-depth shapes per GPU at each tp (memory.py); 1 if a planned one
        from benchmarks.live_h200.shapes import memory  # does not fit (memory imports this module)

        print("\n" + "\n".join(memory.table()))
        worst |= not all(memory.per_gpu(s).fits() for s in memory.FULL_SHAPES)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
