"""Stage ``draft`` of ``train_longctx``: the EAGLE3 head on the frozen target's own hidden states.

Each step takes one ``--draft-len`` row of the target's training stream (another seed, the late
curriculum's mix of lengths), runs the frozen target once (bf16, no grad) for its three captured
hidden states and its greedy tokens, and trains ``eagle3_draft.Eagle3Draft`` with
``TTT_STEPS`` unrolled steps against those greedy tokens (weights 0.8^k), so the draft learns the
target's own output, which is what greedy verification accepts. The draft shares the target's
embedding (SGLang gives it the target's, ``eagle_worker_v2.py`` 351-369) and its RoPE settings;
its vocabulary is the target's 264 ids (``d2t`` all zero, ``t2d`` all true).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.live_h200 import eagle3_format as fmt
from benchmarks.live_h200 import longctx_stream as ls
from benchmarks.live_h200 import synth_train as st

TTT_STEPS = 3
DRAFT_ARCH = {
    "h200": fmt.DraftArch(hidden_size=512, intermediate_size=1536, num_attention_heads=4,
                          num_key_value_heads=2, head_dim=128),
    "cpu": fmt.DraftArch(hidden_size=128, intermediate_size=256, num_attention_heads=2,
                         num_key_value_heads=1, head_dim=64),
}  # fmt: skip


def load_target(path: Path, device: str) -> Any:
    """The saved target in bf16, frozen."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16).to(device).eval()
    model.requires_grad_(False)
    return model


def make_draft(target: Any, target_config: dict[str, Any], preset: str) -> Any:
    """A fresh draft for ``target`` (saved ``config.json``: ``eagle3_format.draft_config``)."""
    from benchmarks.live_h200.eagle3_draft import Eagle3Draft

    config = fmt.draft_config(target_config, DRAFT_ARCH[preset], int(target_config["vocab_size"]))
    return Eagle3Draft(config, target.model.rotary_emb)


def draft_loss(draft: Any, target: Any, ids: Any, device: str) -> tuple[Any, list[float]]:
    """TTT loss of one row batch against the target's greedy tokens, and each step's accuracy."""
    import torch
    import torch.nn.functional as F

    layers = draft.config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
    from benchmarks.live_h200.eagle3_draft import aux_states

    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
        greedy, aux = aux_states(target, ids, layers)
    n, loss, accs = ids.shape[1], 0.0, []
    with torch.autocast(device, dtype=torch.bfloat16):
        logits = draft.ttt_logits(target.model.embed_tokens, ids, aux, TTT_STEPS)
    for k, step in enumerate(logits):
        label = greedy[:, k + 1 :]  # the target's token at t + k + 2
        valid = ids[:, k + 2 :] != st.SPECIAL_ID[st.PAD]
        pred = step[:, : n - k - 1].float()
        ce = F.cross_entropy(pred.flatten(0, 1), label.flatten(), reduction="none")
        m = F.pad(valid, (0, 1), value=False).flatten().float()
        loss = loss + 0.8**k * (ce * m).sum() / m.sum().clamp(min=1)
        accs.append(
            ((pred.argmax(-1) == label).flatten().float() * m).sum().item() / max(1, m.sum().item())
        )
    return loss, accs


def train_draft(args: argparse.Namespace, target_dir: Path, out: Path) -> dict[str, Any]:
    """Train and save the EAGLE3 draft of the target in ``target_dir``; the training report."""
    import torch

    device = "cuda" if torch.cuda.is_available() and args.preset != "cpu" else "cpu"
    target = load_target(target_dir, device)
    torch.manual_seed(args.seed + 1)
    target_config = json.loads((target_dir / "config.json").read_text())
    draft = make_draft(target, target_config, args.preset).to(device).train()
    params = [p for n, p in draft.named_parameters() if not n.startswith("rotary")]
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    start, log, late = time.time(), [], int(args.steps * 0.9)
    done = 0
    for step in range(args.draft_steps):
        rows = ls.batch_rows(late + step, args.steps + args.draft_steps, args.seed + 7,
                             args.draft_len, max_len=args.draft_len)  # fmt: skip
        ids = torch.tensor([r.ids for r in rows], device=device)
        lr = args.lr * min(1.0, (step + 1) / 20) * (1 - 0.9 * step / args.draft_steps)
        for group in opt.param_groups:
            group["lr"] = lr
        loss, accs = draft_loss(draft, target, ids, device)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        done = step + 1
        if done % args.log_every == 0 or done == args.draft_steps:
            log.append({"step": done, "s": round(time.time() - start, 1), "len": ids.shape[1],
                        "loss": round(loss.item(), 4),
                        "acc": [round(a, 3) for a in accs]})  # fmt: skip
            print(f"[draft] {json.dumps(log[-1])}", flush=True)
        if time.time() - start > args.draft_seconds:
            print(
                f"[draft] stopped at step {done}: --draft-seconds {args.draft_seconds}", flush=True
            )
            break
    d2t, t2d = fmt.token_maps([1] * int(target.config.vocab_size), int(target.config.vocab_size))
    draft.save(out, d2t, t2d)
    problems = fmt.check_folder(out, target_config)
    if problems:
        raise RuntimeError(f"the saved draft fails the EAGLE3 format checks: {problems}")
    return {"arch": asdict(DRAFT_ARCH[args.preset]), "ttt_steps": TTT_STEPS, "steps_done": done,
            "params": sum(p.numel() for p in params), "seconds": round(time.time() - start, 1),
            "log": log}  # fmt: skip
