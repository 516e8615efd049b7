"""HF accuracy per task and length of the long-context target, and its EAGLE3 draft's acceptance.

The questions are the eval's own (``evals.longctx_tasks.sample``, eval seed 0, lengths counted in
bytes, the served model's tokens), graded by ``evals.longctx`` exactly as a cell against SGLang
is; the prompt ids are the saved tokenizer's chat template, checked id for id against
``synth_train.encode_chat`` (``model_eval.chat_ids``). Greedy decoding, one prompt at a time (no
padding numerics), bf16, SDPA.

Acceptance: greedy chain speculative decoding with ``DRAFT_TOKENS`` drafted tokens a step at
temperature 0, from one target pass over prompt + completion (its captured hidden states) and one
teacher-forced ``Eagle3Draft.ttt_logits`` pass over the completion (``eagle3_format.chain_steps``).
Usage: ``python -m benchmarks.live_h200.longctx_eval TARGET DRAFT --out metrics.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.live_h200 import eagle3_format as fmt
from benchmarks.live_h200 import synth_train as st
from benchmarks.live_h200.reply_copy import Copy, as_json, copy_shares, reply_copy
from evals.longctx import final_items, is_correct
from evals.longctx_tasks import TASKS, sample
from evals.longctx_tokens import ByteCounter

LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)
EVAL_SEED = 0
MAX_NEW_TOKENS = 384  # the worked reply: four quoted needles (about 260 bytes), then the answer
DRAFT_TOKENS = 3


def load_draft(folder: Path, target: Any) -> Any:
    """The saved EAGLE3 draft on the target's device, its embedding and RoPE the target's."""
    import torch
    from safetensors.torch import load_file

    from benchmarks.live_h200.eagle3_draft import Eagle3Draft

    config = json.loads((folder / "config.json").read_text())
    draft = Eagle3Draft(config, target.model.rotary_emb)
    weights = load_file(str(folder / fmt.WEIGHTS))
    names = {v: k for k, v in draft_names(draft).items()}
    draft.load_state_dict({names[k]: v for k, v in weights.items() if k in names}, strict=False)
    return draft.to(device=target.device, dtype=torch.bfloat16).eval()


def draft_names(draft: Any) -> dict[str, str]:
    """Module parameter name -> the saved tensor name (``Eagle3Draft.save``'s mapping)."""
    layer = {"q_proj": "self_attn.", "k_proj": "self_attn.", "v_proj": "self_attn.",
             "o_proj": "self_attn.", "gate_proj": "mlp.", "up_proj": "mlp.", "down_proj": "mlp.",
             "input_layernorm": "", "hidden_norm": "", "post_attention_layernorm": ""}  # fmt: skip
    out = {}
    for name, _ in draft.named_parameters():
        module = name.split(".")[0]
        if module in layer:
            out[name] = f"layers.0.{layer[module]}{name}"
        elif not module.startswith("rotary"):
            out[name] = name
    return out


def one(tok: Any, target: Any, draft: Any, task: str, length: int, index: int) -> dict[str, Any]:
    """Generate, grade and measure acceptance for one question."""
    import torch

    from benchmarks.live_h200.eagle3_draft import aux_states
    from benchmarks.live_h200.model_eval import chat_ids

    s = sample(task, length, EVAL_SEED, index, ByteCounter())
    ids = chat_ids(tok, [{"role": "user", "content": s.text}])
    eot = st.SPECIAL_ID[st.EOT]
    with torch.no_grad():
        gen = target.generate(input_ids=torch.tensor([ids], device=target.device),
                              max_new_tokens=MAX_NEW_TOKENS, do_sample=False, eos_token_id=eot,
                              pad_token_id=st.SPECIAL_ID[st.PAD])  # fmt: skip
        gen = gen[0, len(ids) :].tolist()
        completion = gen[: gen.index(eot) + 1] if eot in gen else gen
        full = torch.tensor([ids + completion], device=target.device)
        layers = draft.config["eagle_config"]["eagle_aux_hidden_state_layer_ids"]
        _, aux = aux_states(target, full, layers)
        start = len(ids) - 1  # the draft after the completion's first token, committed at len(ids)
        logits = draft.ttt_logits(target.model.embed_tokens, full, aux, DRAFT_TOKENS, start)
    c = len(completion)
    # matches[k][i]: step k after completion token i drafts completion token i + k + 1.
    matches = [[int(a) == b for a, b in zip(step[0, :c].argmax(-1).tolist(),
                                              completion[k + 1 :], strict=False)]
               + [False] * (k + 1) for k, step in enumerate(logits)]  # fmt: skip
    matches = [m[:c] for m in matches]
    text = tok.decode([t for t in completion if t != eot])
    items = final_items(text)
    copied = reply_copy(s.text, s.evidence, text)
    return {"task": task, "length": length, "prompt_tokens": len(ids), "correct":
            is_correct(items, s.gold, s.ordered), "completion_tokens": c,
            "verify_steps": fmt.chain_steps(matches, DRAFT_TOKENS), "truncated": eot not in gen,
            "text": text, "copy": as_json(copied)}  # fmt: skip


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per task and length, per length, overall; accept length per length."""

    def acc(sel: list[dict[str, Any]]) -> float:
        return round(sum(r["correct"] for r in sel) / max(1, len(sel)), 4)

    def accept(sel: list[dict[str, Any]]) -> float:
        steps = sum(r["verify_steps"] for r in sel)
        return round(sum(r["completion_tokens"] - 1 for r in sel) / max(1, steps), 3)

    lengths = sorted({r["length"] for r in rows})
    at = {n: [r for r in rows if r["length"] == n] for n in lengths}
    tasks = sorted({r["task"] for r in rows})

    def of(task: str, n: int) -> list[dict[str, Any]]:
        return [r for r in at[n] if r["task"] == task]

    return {"accuracy": acc(rows), "accept_length": accept(rows),
            "per_length": {str(n): {"accuracy": acc(at[n]), "accept_length": accept(at[n]),
                                    "n": len(at[n])} for n in lengths},
            "per_task_length": {t: {str(n): acc(of(t, n)) for n in lengths} for t in tasks},
            # Why a task scores what it does: the quoted lines (reply_copy.py). A list (the
            # first version's positional fields, 2026-12-07's lease) is not read: re-read it.
            "copy_per_task_length": {t: {str(n): copy_shares(Copy(**r["copy"]) for r in of(t, n)
                                                             if isinstance(r.get("copy"), dict))
                                         for n in lengths} for t in tasks},
            "truncated": sum(r["truncated"] for r in rows)}  # fmt: skip


def length_lines(summary: dict[str, Any], length: int) -> list[str]:
    """The eval log's lines for one length: the whole, then each task's accuracy and copies.

    The log comes back even when ``metrics.json`` does not (2026-12-06: only these lines did).
    """
    n = str(length)
    lines = [f"[eval] {n}: {json.dumps(summary['per_length'][n])}"]
    for task, by_length in summary["per_task_length"].items():
        copied = summary["copy_per_task_length"][task][n]
        lines.append(f"[eval] {n} {task}: accuracy {by_length[n]} copy {json.dumps(copied)}")
    return lines


def evaluate(target_dir: Path, draft_dir: Path, samples: int,
             lengths: list[int] | None = None) -> dict[str, Any]:  # fmt: skip
    """Every task at every length (``samples`` questions each): ``summary`` and the rows."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = AutoTokenizer.from_pretrained(target_dir)
    target = (
        AutoModelForCausalLM.from_pretrained(target_dir, dtype=torch.bfloat16).to(device).eval()
    )
    draft = load_draft(draft_dir, target)
    start, rows = time.time(), []
    for length in lengths or LENGTHS:
        for task in TASKS:
            rows += [one(tok, target, draft, task, length, i) for i in range(samples)]
        print("\n".join(length_lines(summarize(rows), length)), flush=True)
    return {"summary": summarize(rows), "seconds": round(time.time() - start, 1),
            "device": str(target.device), "draft_tokens": DRAFT_TOKENS, "eval_seed": EVAL_SEED,
            "rows": rows}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("draft", type=Path)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--lengths", type=int, nargs="+", default=None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    metrics = evaluate(args.target, args.draft, args.samples, args.lengths)
    args.out.write_text(json.dumps(metrics, indent=1) + "\n")
    print(json.dumps(metrics["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
