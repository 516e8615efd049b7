"""Per-GPU memory of a full-depth shape at a tp: do weights and a KV pool fit an H200?

    python3 -m benchmarks.live_h200.shapes.param_count   # prints this table after the cut one

SGLang holds the weights and the KV pool in its static pool, ``mem_fraction_static`` of each GPU;
the rest is for activations and CUDA graphs. Tensor parallel splits the weights (attention heads,
MLP and expert columns, the vocabulary of the embedding and head) over ``tp`` GPUs and the KV heads
too, a KV head being replicated where there are fewer KV heads than GPUs. Data-parallel replicas
(``--dp-size``) repeat the whole thing on ``tp`` GPUs more each. The pool is sized by
``--max-total-tokens``, for the target and again for the draft (SGLang gives the draft its own pool
of the same tokens). Qwen3-Next's Gated DeltaNet layers hold a state per request instead of per
token (its SSM state in float32, as the shipped recipe asks, and one more per draft token for
verify).

Upper bounds, on purpose: the NextN layer's own embedding and head are counted though SGLang
shares the target's; the KV projections a replicated KV head repeats are not (under 0.1%).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.live_h200.shapes.param_count import H200_GIB, SHAPES_DIR, count, weights_gib

Config = Mapping[str, Any]
GIB = 2**30
# The full plan's server settings (live_signoff.sh LIVE_PLAN=full-shapes, FULL_ARGS): the speed
# plan's pool (128k prompt + 32 x 768) and static fraction, 32 requests at most.
MEM_FRACTION = 0.85
POOL_TOKENS = 262_144
RUNNING = 32
KINDS = {"nvidia-h200": 1, "nvidia-h200-x2": 2, "nvidia-h200-x4": 4, "nvidia-h200-x8": 8}


@dataclass(frozen=True)
class FullShape:
    """A full-depth shape as a live cell serves it: its folders and its parallel sizes."""

    experiment: str  # conf/experiment/<experiment>.yaml
    folder: str  # the target's config folder, under SHAPES_DIR
    tp: int
    dp: int = 1  # data-parallel replicas (--dp-size), each on tp GPUs
    draft: str | None = None  # a draft model of its own (EAGLE3), under SHAPES_DIR
    draft_tokens: int = 4  # the shipped recipes' --speculative-num-draft-tokens

    @property
    def gpus(self) -> int:
        """GPUs the cell's server takes: tp for each of its dp replicas."""
        return self.tp * self.dp


FULL_SHAPES = (
    FullShape("full_glm_4_6_tp8", "full/glm_4_6", 8),
    FullShape("full_qwen3_next_80b_a3b_tp4", "full/qwen3_next_80b_a3b", 4),
    FullShape("full_qwen3_next_80b_a3b_tp2", "full/qwen3_next_80b_a3b", 2),
    FullShape(
        "full_llama3_1_8b_eagle3_tp2_dp2", "llama3_1_8b", 2, 2, draft="llama3_1_8b_eagle3_draft"
    ),
)


def load(folder: str) -> dict[str, Any]:
    """The config.json of ``folder`` (relative to SHAPES_DIR)."""
    loaded: dict[str, Any] = json.loads((SHAPES_DIR / folder / "config.json").read_text("utf-8"))
    return loaded


def attention_layers(c: Config) -> int:
    """Layers with a KV cache: every layer, or Qwen3-Next's every full_attention_interval-th;
    plus the MTP / NextN layers (full attention, with their own pool)."""
    layers = c["num_hidden_layers"]
    if "full_attention_interval" in c:
        layers //= c["full_attention_interval"]
    return int(layers + c.get("num_nextn_predict_layers", 0))


def kv_bytes_per_token(c: Config, tp: int, kv_bytes: int) -> int:
    """KV-cache bytes one token takes on one GPU at ``tp`` (K and V of its share of KV heads)."""
    heads = max(1, c["num_key_value_heads"] // tp)
    return attention_layers(c) * 2 * heads * c["head_dim"] * kv_bytes


def state_bytes_per_request(c: Config, tp: int, draft_tokens: int) -> int:
    """Gated DeltaNet state of one request on one GPU (0 for attention-only models): the float32
    SSM state, once and once per draft token (verify keeps the intermediate ones), and the conv
    window (bf16)."""
    if "linear_num_value_heads" not in c:
        return 0
    nv, dk, dv = c["linear_num_value_heads"], c["linear_key_head_dim"], c["linear_value_head_dim"]
    conv_dim = 2 * c["linear_num_key_heads"] * dk + nv * dv
    linear = c["num_hidden_layers"] - c["num_hidden_layers"] // c["full_attention_interval"]
    ssm = nv * dk * dv * 4 * (1 + draft_tokens)
    conv = conv_dim * (c["linear_conv_kernel_dim"] - 1 + draft_tokens) * 2
    return linear * (ssm + conv) // tp


@dataclass(frozen=True)
class PerGpu:
    """One GPU of a full shape at its tp, in GiB; ``kv`` at the plan's pool, per KV dtype."""

    weights: float
    kv_bf16: float
    kv_fp8: float
    state: float

    def static(self, fp8: bool = False) -> float:
        """What SGLang's static pool must hold: weights, KV pool and request state."""
        return self.weights + (self.kv_fp8 if fp8 else self.kv_bf16) + self.state

    def fits(self, fraction: float = MEM_FRACTION) -> bool:
        """Weights and a bf16 pool (the larger) inside ``fraction`` of one H200."""
        return self.static() <= fraction * H200_GIB


def per_gpu(
    shape: FullShape, tp: int | None = None, tokens: int = POOL_TOKENS, running: int = RUNNING
) -> PerGpu:
    """One GPU of ``shape`` (at ``tp`` if given, else its own) with a pool of ``tokens``."""
    tp = tp or shape.tp
    target = load(shape.folder)
    draft = load(shape.draft) if shape.draft else None
    params = count(target).total + (count(draft).total if draft else 0)

    def kv(kv_bytes: int) -> float:
        per_token = kv_bytes_per_token(target, tp, kv_bytes)
        per_token += kv_bytes_per_token(draft, tp, kv_bytes) if draft else 0
        return per_token * tokens / GIB

    state = state_bytes_per_request(target, tp, shape.draft_tokens) * running / GIB
    return PerGpu(weights_gib(params) / tp, kv(2), kv(1), state)


def smallest_kind(gpus: int) -> str | None:
    """The smallest lent kind with at least ``gpus`` GPUs (None: none is that large)."""
    fitting = [kind for kind, n in KINDS.items() if n >= gpus]
    return min(fitting, key=KINDS.__getitem__) if fitting else None


def table() -> list[str]:
    """Each full model at tp 1, 2, 4 and 8 (the tps its experiments run marked *), a line each."""
    budget = MEM_FRACTION * H200_GIB
    lines = [
        f"full shapes, per GPU (GiB): pool {POOL_TOKENS:,} tokens, {RUNNING} requests, "
        f"static pool {MEM_FRACTION} x {H200_GIB} = {budget:.1f} GiB",
        f"{'model (draft)':42} {'tp':>3} {'dp':>2} {'weights':>8} {'kv bf16':>8} {'kv fp8':>7} "
        f"{'state':>6} {'total':>6}  fits  kind",
    ]
    models = {(s.folder, s.draft, s.dp): s for s in FULL_SHAPES}
    for (folder, draft, dp), shape in models.items():
        planned = {s.tp for s in FULL_SHAPES if (s.folder, s.draft, s.dp) == (folder, draft, dp)}
        name = folder + (f" ({draft})" if draft else "")
        for tp in (1, 2, 4, 8):
            m = per_gpu(shape, tp)
            mark = "*" if tp in planned else " "
            lines.append(
                f"{name:42} {tp:>2}{mark} {dp:>2} {m.weights:8.1f} {m.kv_bf16:8.1f} "
                f"{m.kv_fp8:7.1f} {m.state:6.1f} {m.static():6.1f}  "
                f"{'yes ' if m.fits() else 'NO  '}  {smallest_kind(tp * dp) or '-'}"
            )
    return lines
