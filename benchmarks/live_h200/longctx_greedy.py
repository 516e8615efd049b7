"""HF's greedy reference of the long-context model at several lengths, for ``greedy_check server``.

``python -m benchmarks.live_h200.longctx_greedy TARGET OUT [--lengths ...] [--per-length N]``
writes ``greedy_check``'s ``hf.json`` layout (eval, question_id, messages, prompt_ids, hf_ids,
hf_text per item): the long-context eval's own questions (eval seed 0, byte lengths), a spread of
tasks at each length, rendered by the saved tokenizer's chat template (checked against the
training encoding), greedy with HF one prompt at a time. Then, beside a served SGLang:
``python -m benchmarks.live_h200.greedy_check server URL OUT RESULT LABEL`` compares token for
token. A wrong RoPE scaling reads the same weights as another function, so the longest lengths are
where a mismatch would show.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.live_h200 import synth_train as st
from evals.longctx_tasks import TASKS, sample
from evals.longctx_tokens import ByteCounter

LENGTHS = (4096, 16384, 32768, 65536, 131072)
MAX_NEW_TOKENS = 384  # the worked reply: four quoted needles (about 260 bytes), then the answer


def main(argv: list[str] | None = None) -> int:
    """Write the HF reference; 0 when every prompt was generated."""
    import torch

    from benchmarks.live_h200.model_eval import chat_ids, load

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--per-length", type=int, default=2)
    args = parser.parse_args(argv)
    tok, model = load(args.target)
    eot, items = st.SPECIAL_ID[st.EOT], []
    for length in args.lengths:
        for i in range(args.per_length):
            task = TASKS[(len(items) + i) % len(TASKS)]
            s = sample(task, length, 0, i, ByteCounter())
            messages = [{"role": "user", "content": s.text}]
            ids = chat_ids(tok, messages)
            pad = st.SPECIAL_ID[st.PAD]
            with torch.no_grad():
                gen = model.generate(input_ids=torch.tensor([ids], device=model.device),
                                     max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                                     eos_token_id=eot, pad_token_id=pad)  # fmt: skip
            out = gen[0, len(ids) :].tolist()
            out = out[: out.index(eot) + 1] if eot in out else out
            items.append({"eval": f"longctx_{task}", "question_id": f"{task}@{length}#{i}",
                          "messages": messages, "prompt_ids": ids, "hf_ids": out,
                          "hf_text": tok.decode(out, skip_special_tokens=True)})  # fmt: skip
    args.out.write_text(json.dumps({"target": str(args.target), "items": items}) + "\n")
    print(f"longctx_greedy: {len(items)} HF greedy completions -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
