#!/usr/bin/env python3
"""Train the project's small Llama target and its draft on the synthetic tasks, then evaluate both.

On the GPU host, with the machine's own torch and transformers, from the repo root:

    python3 -m benchmarks.live_h200.train_model OUT --seed 0 --steps 1400

writes ``OUT/target`` and ``OUT/draft`` (HF folders SGLang 0.5.19 can serve: bf16 safetensors, the
byte-level tokenizer, the chat template in ``tokenizer_config.json``, ``rope_theta`` at the top of
``config.json``), ``OUT/recipe.json`` (the command, seed, sizes, checksums) and
``OUT/metrics.json`` (held-out accuracy per task and level, draft accept length; see
``model_eval.py``). The draft trains in a second process on the same GPU at the same time.
The rows come from ``synth_train.py`` beside this file (curriculum there), never holding an eval
question.
``--preset cpu`` runs the same code with tiny models and short rows on a CPU (a learnability check).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.live_h200 import synth_train as st
from benchmarks.live_h200.chunks import sha256

ARCH = {  # head_dim 128 as in the tiny model that every SGLang backend here served
    "target": dict(hidden_size=384, intermediate_size=768, num_hidden_layers=6,
                   num_attention_heads=4, num_key_value_heads=2, head_dim=128),
    "draft": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=128),
    "cpu-target": dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, head_dim=64),
    "cpu-draft": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                      num_attention_heads=1, num_key_value_heads=1, head_dim=64),
}  # fmt: skip
ROPE_THETA = 100000.0
MAX_POSITIONS = 32768


def make_tokenizer() -> Any:
    """The byte-level tokenizer: id b is byte b, then ``st.SPECIAL``; the chat template inside."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(vocab=st.byte_vocab(), merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(st.SPECIAL))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=st.BOS, eos_token=st.EOT,
                                   pad_token=st.PAD, chat_template=st.CHAT_TEMPLATE,
                                   model_max_length=MAX_POSITIONS)  # fmt: skip
    assert [fast.convert_tokens_to_ids(t) for t in st.SPECIAL] == list(st.SPECIAL_ID.values())
    return fast


def make_model(arch: str, seed: int) -> Any:
    """A fresh fp32 Llama of ``ARCH[arch]`` over the byte vocabulary."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=st.VOCAB_SIZE, max_position_embeddings=MAX_POSITIONS,
                         rope_theta=ROPE_THETA, rms_norm_eps=1e-5, tie_word_embeddings=False,
                         bos_token_id=st.SPECIAL_ID[st.BOS], eos_token_id=st.SPECIAL_ID[st.EOT],
                         pad_token_id=st.SPECIAL_ID[st.PAD], **ARCH[arch])  # fmt: skip
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def batches(args: argparse.Namespace, length_cap: int | None) -> Any:
    """A DataLoader of (ids, loss mask, task) per step, rows made in worker processes."""
    import torch
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    from benchmarks.live_h200.synth_data import held_out_questions

    held = frozenset(q for q in held_out_questions() if len(q) < 1000)

    class Steps(IterableDataset):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            info = get_worker_info()
            wid, count = (info.id, info.num_workers) if info else (0, 1)
            for step in range(wid, args.steps, count):
                rows = st.batch_rows(step, args.steps, args.seed, args.tokens, held, length_cap)
                fields = ("ids", "loss", "task")
                yield tuple(torch.tensor([getattr(r, f) for r in rows]) for f in fields)

    return DataLoader(Steps(), batch_size=None, num_workers=args.workers, prefetch_factor=4,
                      persistent_workers=False)  # fmt: skip


def learning_rate(step: int, steps: int, peak: float) -> float:
    """Linear warm-up over 3% of the steps, cosine decay to 10% of ``peak``."""
    import math

    warm = max(1, int(0.03 * steps))
    if step < warm:
        return peak * (step + 1) / warm
    return peak * (0.1 + 0.45 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm))))


def train(args: argparse.Namespace, arch: str, out: Path) -> dict[str, Any]:
    """Train one model for ``args.steps`` steps (or until ``args.max_seconds``) and save it."""
    import torch
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() and args.preset != "cpu" else "cpu"
    model = make_model(arch, args.seed).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    cap = 1024 if args.preset == "cpu" else None  # short rows only on a CPU
    start, log, window = time.time(), [], torch.zeros(2, len(st.TASKS))
    done = 0
    for step, (ids, loss_mask, task) in enumerate(batches(args, cap)):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr)
        ids, mask, task = ids.to(device).long(), loss_mask.to(device)[:, 1:], task.to(device)[:, 1:]
        with torch.autocast(device, dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits[:, :-1]
        ce = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten(), reduction="none")
        loss = (ce * mask.flatten()).sum() / mask.sum().clamp(min=1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        for t in range(len(st.TASKS)):
            sel = task.flatten() == t
            window[0, t] += ce[sel].sum().item() if sel.any() else 0.0
            window[1, t] += sel.sum().item()
        done = step + 1
        if done % args.log_every == 0 or done == args.steps:
            entry = {"step": done, "s": round(time.time() - start, 1), "len": ids.shape[1],
                     **{f"loss_{n}": round((window[0, t] / window[1, t].clamp(min=1)).item(), 4)
                        for t, n in enumerate(st.TASKS)}}  # fmt: skip
            log.append(entry)
            print(f"[{arch}] {json.dumps(entry)}", flush=True)
            window.zero_()
        if time.time() - start > args.max_seconds:
            print(f"[{arch}] stopped at step {done}: --max-seconds {args.max_seconds}", flush=True)
            break
    seconds = time.time() - start
    save(model, out)
    params = sum(p.numel() for p in model.parameters())
    return {"arch": ARCH[arch], "params": params, "steps_done": done, "seconds": round(seconds, 1),
            "log": log}  # fmt: skip


def save(model: Any, out: Path) -> None:
    """bf16 weights, tokenizer and configs in the form SGLang 0.5.19 (transformers 5.12.1) reads."""
    import torch

    model = model.to(torch.bfloat16).eval()
    model.config.dtype = torch.bfloat16
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    model.generation_config.save_pretrained(out)
    make_tokenizer().save_pretrained(out)
    config = json.loads((out / "config.json").read_text())
    config.update(rope_theta=ROPE_THETA, torch_dtype="bfloat16")  # read by older transformers
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    tok_config = json.loads((out / "tokenizer_config.json").read_text())
    tok_config.update(chat_template=st.CHAT_TEMPLATE, tokenizer_class="PreTrainedTokenizerFast")
    (out / "tokenizer_config.json").write_text(json.dumps(tok_config, indent=2) + "\n")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=1400)
    parser.add_argument("--tokens", type=int, default=131072, help="tokens per step")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--workers", type=int, default=6, help="row-making processes per model")
    parser.add_argument("--max-seconds", type=float, default=330.0, help="stop (and save) after")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--preset", choices=("h200", "cpu"), default="h200")
    parser.add_argument("--role", choices=("all", "target", "draft"), default="all")
    parser.add_argument("--eval-limit", type=int, default=None, help="rows per eval (default all)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    prefix = "cpu-" if args.preset == "cpu" else ""
    if args.role in ("target", "draft"):
        report = train(args, prefix + args.role, args.out / args.role)
        (args.out / f"train_{args.role}.json").write_text(json.dumps(report, indent=1) + "\n")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.live_h200.train_model",
        *(sys.argv[1:] if argv is None else argv),
    ]
    draft = subprocess.Popen([*cmd, "--role", "draft"], env=os.environ.copy())
    status = main([*(argv if argv is not None else sys.argv[1:]), "--role", "target"])
    if draft.wait() != 0 or status != 0:
        print("train_model: a training process failed (log above)", file=sys.stderr)
        return 1
    recipe = {"command": " ".join(["python3", "-m", "benchmarks.live_h200.train_model",
                                   *(argv if argv is not None else sys.argv[1:])]),
              "seed": args.seed, "steps": args.steps, "tokens_per_step": args.tokens,
              "lr": args.lr, "preset": args.preset,
              **{role: {**json.loads((args.out / f"train_{role}.json").read_text()),
                        "sha256": {f.name: sha256(f) for f in sorted((args.out / role).iterdir())}}
                 for role in ("target", "draft")}}  # fmt: skip
    (args.out / "recipe.json").write_text(json.dumps(recipe, indent=1) + "\n")
    from benchmarks.live_h200.model_eval import evaluate

    metrics = evaluate(args.out / "target", args.out / "draft", args.eval_limit)
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    print(json.dumps(metrics["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
