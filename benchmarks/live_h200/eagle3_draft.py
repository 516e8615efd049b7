"""The EAGLE3 draft head in torch, as SGLang 0.5.23 computes it (``eagle3_format`` has the sources).

``Eagle3Draft`` holds the tensors ``eagle3_format.expected_tensors`` names and computes what
``llama_eagle3.py`` does: step 0 maps the target's three captured hidden states through ``fc``;
every step concatenates ``input_layernorm(embed(token))`` with ``hidden_norm(feature)``, runs one
attention + MLP layer with fused residuals and returns the final-normed state for ``lm_head`` and
the pre-norm residual stream as the next step's feature (``norm_output`` off).

Training (``ttt_logits``) unrolls ``steps`` draft steps as EAGLE3's training-time test does: step
``k`` at position ``t`` reads token ``t + k + 1`` and step ``k - 1``'s feature at ``t``, and
attends to step 0's keys at positions ``<= t`` plus its own earlier steps' keys at ``t`` (the
chain a server builds on the verified prefix). Teacher-forced on the target's own greedy tokens,
step ``k``'s argmax at ``t`` is the chain's ``k + 1``-th drafted token after position ``t + k``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.live_h200 import eagle3_format as fmt


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class Eagle3Draft(nn.Module):
    """One EAGLE3 decoder layer, ``fc``, final norm and ``lm_head`` (SGLang's parameter names)."""

    def __init__(self, config: dict[str, Any], rotary: nn.Module) -> None:
        super().__init__()
        h, eps = int(config["hidden_size"]), float(config["rms_norm_eps"])
        self.heads, self.kv_heads = config["num_attention_heads"], config["num_key_value_heads"]
        self.head_dim = int(config["head_dim"])
        aux = len(config["eagle_config"]["eagle_aux_hidden_state_layer_ids"])
        self.fc = nn.Linear(int(config["target_hidden_size"]) * aux, h, bias=False)
        self.q_proj = nn.Linear(2 * h, self.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(2 * h, self.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(2 * h, self.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.heads * self.head_dim, h, bias=False)
        inter = int(config["intermediate_size"])
        self.gate_proj = nn.Linear(h, inter, bias=False)
        self.up_proj = nn.Linear(h, inter, bias=False)
        self.down_proj = nn.Linear(inter, h, bias=False)
        self.input_layernorm, self.hidden_norm = RMSNorm(h, eps), RMSNorm(h, eps)
        self.post_attention_layernorm, self.norm = RMSNorm(h, eps), RMSNorm(h, eps)
        self.lm_head = nn.Linear(h, int(config["draft_vocab_size"]), bias=False)
        self.rotary = rotary  # the target's rotary embedding (same RoPE settings): not saved
        self.config = config

    def qkv(self, embeds: torch.Tensor, feature: torch.Tensor,
            positions: torch.Tensor) -> tuple[torch.Tensor, ...]:  # fmt: skip
        """Queries, keys and values of one step ([batch, heads, seq, dim]), RoPE applied."""
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        x = torch.cat([self.input_layernorm(embeds), self.hidden_norm(feature)], dim=-1)
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary(x, positions)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        rep = self.heads // self.kv_heads
        return q, k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)

    def finish(
        self, attn: torch.Tensor, feature: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Output projection, MLP and the fused residuals: (logits, next feature)."""
        b, _, n, _ = attn.shape
        residual = self.o_proj(attn.transpose(1, 2).reshape(b, n, -1)) + feature
        x = self.post_attention_layernorm(residual)
        residual = self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x)) + residual
        return self.lm_head(self.norm(residual)), residual

    def ttt_logits(self, embed: nn.Module, ids: torch.Tensor, aux: torch.Tensor, steps: int,
                   start: int = 0) -> list[torch.Tensor]:  # fmt: skip
        """Logits of draft steps 0..steps-1 at positions ``start..n-1`` (see the module docstring).

        ``ids``: [batch, n] target tokens; ``aux``: [batch, n, 3 * target hidden] captured states.
        Step ``k``'s logits at position ``t`` predict ``ids[t + k + 2]``; positions past the end
        read padding and are junk. Only step 0's keys span the whole sequence, so a 128k prompt
        with a short completion (``start`` near the end) needs little memory.
        """
        n, dev = ids.shape[1], ids.device
        pos = torch.arange(n, device=dev)[None].expand(ids.shape[0], n)
        tokens = F.pad(ids[:, 1:], (0, steps), value=0)  # token t + 1 at t, then the later steps'
        q, key, value = self.qkv(embed(tokens[:, :n]), self.fc(aux), pos)
        rows = torch.arange(start, n, device=dev)
        causal = rows[:, None] >= torch.arange(n, device=dev)[None]
        diag = torch.eye(n - start, dtype=torch.bool, device=dev)
        feature = self.fc(aux[:, start:])
        keys, values, out = [key], [value], []
        for k in range(steps):
            if k:
                q, key, value = self.qkv(
                    embed(tokens[:, start + k : n + k]), feature, pos[:, start:] + k
                )
                keys, values = [*keys, key], [*values, value]
            mask = torch.cat([causal] + [diag] * k, dim=1)
            attn = F.scaled_dot_product_attention(q[:, :, start:] if not k else q,
                                                  torch.cat(keys, 2), torch.cat(values, 2),
                                                  attn_mask=mask)  # fmt: skip
            logits, feature = self.finish(attn, feature)
            out.append(logits)
        return out

    def save(self, out: Path, d2t: list[int], t2d: list[bool]) -> None:
        """``config.json`` and ``model.safetensors`` in SGLang's EAGLE3 names, bf16."""
        from safetensors.torch import save_file

        names = {"fc": "fc", "norm": "norm", "lm_head": "lm_head"}
        layer = {"q_proj": "self_attn.", "k_proj": "self_attn.", "v_proj": "self_attn.",
                 "o_proj": "self_attn.", "gate_proj": "mlp.", "up_proj": "mlp.",
                 "down_proj": "mlp.", "input_layernorm": "", "hidden_norm": "",
                 "post_attention_layernorm": ""}  # fmt: skip
        names.update({m: f"layers.0.{p}{m}" for m, p in layer.items()})
        tensors = {f"{names[n.split('.')[0]]}.weight": p.detach().to(torch.bfloat16).cpu()
                   for n, p in self.named_parameters() if not n.startswith("rotary")}  # fmt: skip
        tensors["d2t"] = torch.tensor(d2t, dtype=torch.int64)
        tensors["t2d"] = torch.tensor(t2d, dtype=torch.bool)
        out.mkdir(parents=True, exist_ok=True)
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / fmt.WEIGHTS),
                  metadata={"format": "pt"})  # fmt: skip
        (out / "config.json").write_text(json.dumps(self.config, indent=2, sort_keys=True) + "\n")


def aux_states(target: Any, ids: torch.Tensor, layer_ids: list[int]) -> tuple[torch.Tensor, ...]:
    """(target greedy tokens, captured states [batch, n, 3 * hidden]) of one target pass."""
    out = target(input_ids=ids, output_hidden_states=True)
    states = [out.hidden_states[i] for i in fmt.captured_hidden_states(layer_ids)]
    return out.logits.argmax(-1), torch.cat(states, dim=-1)
