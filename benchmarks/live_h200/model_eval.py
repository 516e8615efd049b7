"""Held-out accuracy and draft accept length of a trained target/draft pair (HF, greedy).

The prompts are the pipeline's own: the project's eval classes (``evals.gsm8k`` for the
arithmetic and retrieval files, ``evals.gpqa`` with its per-question permutation for the multiple
choice) build the messages and grade the answers, exactly as a cell against SGLang would. The chat
template renders them through the saved tokenizer, checked id for id against
``synth_train.encode_chat`` (the training encoding).

Accept length: chain speculative decoding, 3 drafted tokens per step plus the target's own, at
temperature 0, computed from one teacher-forced draft pass over prompt + target completion
(``synth_train.spec_steps``). It equals what a server with bit-identical kernels would count.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.live_h200 import synth_train as st
from evals import chat_tokens
from evals.base import make_eval, question_id
from evals.datasets import DATA_DIR, read_file
from evals.eval_conf import DatasetConf, EvalConf

EVALS = (("synth_arith", "gsm8k", "synth_arith.jsonl", "question", "level"),
         ("synth_mcq", "gpqa", "synth_mcq.csv", "Question", "Level"),
         ("synth_retrieval", "gsm8k", "synth_retrieval.jsonl", "question", "level"))  # fmt: skip
MAX_NEW_TOKENS = 320
BATCH_TOKENS = 262144


def load(path: Path) -> tuple[Any, Any]:
    """Tokenizer and bf16 model of a saved folder, on the GPU when there is one."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16).to(device).eval()
    return tok, model


def chat_ids(tok: Any, messages: list[dict[str, Any]]) -> list[int]:
    """The prompt ids the saved tokenizer's chat template gives (must equal the training's)."""
    ids = chat_tokens.chat_ids(tok, messages)  # the speed phase's eval prompts use it too
    mine, _ = st.encode_chat(messages, generation_prompt=True)
    if ids != mine:
        raise RuntimeError(f"chat template and training encoding differ: {ids[:40]} vs {mine[:40]}")
    return ids


def in_batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    """Indices grouped so that each group's padded size stays under ``BATCH_TOKENS``."""
    groups: list[list[int]] = [[]]
    for i in order:
        widest = max([lengths[j] for j in groups[-1]] + [lengths[i]]) + MAX_NEW_TOKENS
        if groups[-1] and widest * (len(groups[-1]) + 1) > BATCH_TOKENS:
            groups.append([])
        groups[-1].append(i)
    return [g for g in groups if g]


def greedy(model: Any, prompts: list[list[int]]) -> list[list[int]]:
    """Greedy completions (up to and including ``<|eot|>``), batched with left padding."""
    import torch

    eot, pad = st.SPECIAL_ID[st.EOT], st.SPECIAL_ID[st.PAD]
    out: list[list[int]] = [[] for _ in prompts]
    order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
    for group in in_batches(order, [len(p) for p in prompts]):
        width = max(len(prompts[i]) for i in group)
        ids = torch.tensor([[pad] * (width - len(prompts[i])) + prompts[i] for i in group])
        starts = torch.tensor([width - len(prompts[i]) for i in group])
        mask = torch.arange(width)[None] >= starts[:, None]
        with torch.no_grad():
            gen = model.generate(input_ids=ids.to(model.device),
                                 attention_mask=mask.long().to(model.device),
                                 max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                                 eos_token_id=eot, pad_token_id=pad)  # fmt: skip
        for row, i in enumerate(group):
            seq = gen[row, width:].tolist()
            out[i] = seq[: seq.index(eot) + 1] if eot in seq else seq
    return out


def draft_matches(draft: Any, prompts: list[list[int]],
                  completions: list[list[int]]) -> list[list[bool]]:  # fmt: skip
    """Per completion token: the draft's greedy token after the target's prefix equals it."""
    import torch

    pad = st.SPECIAL_ID[st.PAD]
    out: list[list[bool]] = [[] for _ in prompts]
    seqs = [p + c for p, c in zip(prompts, completions, strict=True)]
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    for group in in_batches(order, [len(s) for s in seqs]):
        width = max(len(seqs[i]) for i in group)
        # Causal attention: padding on the right changes nothing before it.
        ids = torch.tensor([seqs[i] + [pad] * (width - len(seqs[i])) for i in group])
        with torch.no_grad():
            guess = draft(input_ids=ids.to(draft.device)).logits.argmax(-1).cpu()
        for row, i in enumerate(group):
            start = len(prompts[i]) - 1
            predicted = guess[row, start : start + len(completions[i])].tolist()
            out[i] = [a == b for a, b in zip(predicted, completions[i], strict=True)]
    return out


def levels(file: str, column: str, level_column: str) -> dict[str, Any]:
    """question id -> level, read from the bundled file."""
    rows = read_file(DATA_DIR / file)
    return {question_id(str(r[column]).strip()): r[level_column] for r in rows}


def evaluate_one(name: str, kind: str, file: str, columns: tuple[str, str], tok: Any,
                 target: Any, draft: Any, limit: int | None) -> dict[str, Any]:  # fmt: skip
    """Accuracy (overall and per level), accept length and a few answers for one eval."""
    dataset = DatasetConf(source="bundled", path=file, limit=limit)
    ev = make_eval(name, EvalConf(kind=kind, dataset=dataset))
    prompts = ev.prompts()
    ids = [chat_ids(tok, p.messages) for p in prompts]
    start = time.time()
    completions = greedy(target, ids)
    matches = draft_matches(draft, ids, completions)
    level_of = levels(file, *columns)
    per_level: dict[str, list[int]] = {}
    correct, tokens, steps = 0, 0, 0
    samples = []
    for prompt, completion, match in zip(prompts, completions, matches, strict=True):
        text = tok.decode([t for t in completion if t != st.SPECIAL_ID[st.EOT]])
        extracted, ok = ev.grade(prompt, text)
        correct += ok
        per_level.setdefault(str(level_of[prompt.question_id]), [0, 0])[0] += ok
        per_level[str(level_of[prompt.question_id])][1] += 1
        tokens, steps = tokens + len(completion), steps + st.spec_steps(match)
        if len(samples) < 4:
            samples.append({"answer": prompt.answer, "extracted": extracted, "text": text})
    return {"n": len(prompts), "accuracy": round(correct / len(prompts), 4),
            "per_level": {k: round(c / n, 4) for k, (c, n) in sorted(per_level.items())},
            "accept_length": round(tokens / max(1, steps), 3), "completion_tokens": tokens,
            "truncated": sum(st.SPECIAL_ID[st.EOT] not in c for c in completions),
            "prompt_tokens": [min(map(len, ids)), max(map(len, ids))],
            "seconds": round(time.time() - start, 1), "samples": samples}  # fmt: skip


def evaluate(target_dir: Path, draft_dir: Path, limit: int | None = None) -> dict[str, Any]:
    """Every synthetic eval on the saved target/draft pair; ``summary`` holds the headline."""
    tok, target = load(target_dir)
    _, draft = load(draft_dir)
    results = {name: evaluate_one(name, kind, file, (col, lvl), tok, target, draft, limit)
               for name, kind, file, col, lvl in EVALS}  # fmt: skip
    summary = {name: {k: r[k] for k in ("accuracy", "per_level", "accept_length", "truncated",
                                         "prompt_tokens")}
               for name, r in results.items()}  # fmt: skip
    return {"summary": summary, "evals": results}


def main(argv: list[str] | None = None) -> int:
    """Score a saved pair again (e.g. on a CPU): ``TARGET DRAFT [--only NAME] --out FILE``."""
    import argparse
    import json
    import platform

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("draft", type=Path)
    parser.add_argument("--only", choices=[e[0] for e in EVALS], default=None)
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args(argv)
    tok, target = load(args.target)
    _, draft = load(args.draft)
    results = {name: evaluate_one(name, kind, file, (col, lvl), tok, target, draft, None)
               for name, kind, file, col, lvl in EVALS if args.only in (None, name)}  # fmt: skip
    results["machine"] = {"device": str(target.device), "platform": platform.machine()}
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({n: r.get("accuracy") for n, r in results.items() if n != "machine"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
