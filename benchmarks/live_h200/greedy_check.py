"""SGLang's greedy output against HF transformers' on the trained model.

A wrong RoPE base, tokenizer or chat template makes SGLang serve another function of the same
weights without any error, so the folder is checked by its outputs:

- ``hf OUT``: with the machine's python (transformers 5.17, before the bundle shadows it), the
  project's own eval classes build the prompts of a spread of questions of every synthetic eval,
  the saved tokenizer renders them (checked id for id against the training encoding) and HF
  generates greedily, one prompt at a time (no padding, so no padding numerics);
- ``server URL HF OUT``: the same prompt ids go to SGLang's ``/generate`` at temperature 0 and
  the same messages to ``/v1/chat/completions``; the completions are compared token for token
  (and the chat prompt's token count with HF's), then each long prompt is sent alone after a
  cache flush with one output token, and SGLang's own prefill time is read from ``meta_info``
  (``prefill_finished_time - forward_entry_time``, present with ``--enable-metrics``).

Only the standard library is used on the server side, so it runs beside any SGLang.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

PER_EVAL = {"synth_arith": 12, "synth_mcq": 12, "synth_retrieval": 8}
MAX_NEW_TOKENS = 320


def spread(items: list[Any], count: int) -> list[Any]:
    """``count`` items spread evenly over the list, the first and the last included."""
    if len(items) <= count:
        return list(items)
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def hf_reference(target: Path, out: Path) -> None:
    """Write the prompts and HF's greedy completions of the check set to ``out``."""
    from benchmarks.live_h200 import model_eval as me
    from evals.base import make_eval
    from evals.eval_conf import DatasetConf, EvalConf

    tok, model = me.load(target)
    items = []
    for name, kind, file, _, _ in me.EVALS:
        ev = make_eval(name, EvalConf(kind=kind, dataset=DatasetConf(source="bundled", path=file)))
        for prompt in spread(ev.prompts(), PER_EVAL[name]):
            ids = me.chat_ids(tok, prompt.messages)
            completion = me.greedy(model, [ids])[0]
            items.append(
                {
                    "eval": name,
                    "question_id": prompt.question_id,
                    "messages": prompt.messages,
                    "prompt_ids": ids,
                    "hf_ids": completion,
                    "hf_text": tok.decode(completion, skip_special_tokens=True),
                }
            )
    out.write_text(json.dumps({"target": str(target), "items": items}) + "\n")
    print(f"greedy_check: {len(items)} HF greedy completions -> {out}")


def post_raw(url: str, body: dict[str, Any], timeout: float = 300) -> bytes:
    """POST JSON, return the raw answer (``/flush_cache`` answers in plain text)."""
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read()  # type: ignore[no-any-return]


def post(url: str, body: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
    """POST JSON, return the decoded JSON answer."""
    return json.loads(post_raw(url, body, timeout))  # type: ignore[no-any-return]


def flush(base: str) -> bool:
    """``/flush_cache``, retried: SGLang answers 400 while a request is still running."""
    for _ in range(20):
        try:
            post_raw(f"{base}/flush_cache", {})
            return True
        except urllib.error.HTTPError:
            time.sleep(0.5)
    return False


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def strip_end(ids: list[int], eot: int) -> list[int]:
    """Ids without a trailing end-of-turn token (SGLang and HF differ in keeping it)."""
    return ids[:-1] if ids and ids[-1] == eot else ids


def compare_one(base: str, model: str, item: dict[str, Any], eot: int) -> dict[str, Any]:
    """One prompt through /generate (ids) and chat (messages), compared with HF."""
    # As many tokens as HF made, at least: a reference longer than ours (longctx_greedy's 384) is
    # compared whole, not cut at our budget.
    budget = max(MAX_NEW_TOKENS, len(item["hf_ids"]))
    gen = post(
        f"{base}/generate",
        {
            "input_ids": item["prompt_ids"],
            "sampling_params": {"temperature": 0, "max_new_tokens": budget},
        },
    )
    chat = post(
        f"{base}/v1/chat/completions",
        {
            "model": model,
            "messages": item["messages"],
            "temperature": 0,
            "max_tokens": budget,
        },
    )
    hf, got = strip_end(item["hf_ids"], eot), strip_end(list(gen.get("output_ids") or []), eot)
    text = chat["choices"][0]["message"]["content"] or ""
    return {
        "eval": item["eval"],
        "question_id": item["question_id"],
        "prompt_tokens": len(item["prompt_ids"]),
        "hf_tokens": len(hf),
        "sglang_tokens": len(got),
        "common_prefix": common_prefix(hf, got),
        "ids_equal": hf == got,
        "chat_text_equal": text == item["hf_text"],
        "chat_prompt_tokens": chat.get("usage", {}).get("prompt_tokens"),
        "accept_length": gen.get("meta_info", {}).get("spec_accept_length"),
    }


def prefill_times(base: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each long prompt alone after a cache flush, one output token: SGLang's prefill time."""
    out = []
    for item in items:
        flush(base)
        start = time.perf_counter()
        gen = post(
            f"{base}/generate",
            {
                "input_ids": item["prompt_ids"],
                "sampling_params": {"temperature": 0, "max_new_tokens": 1},
            },
        )
        meta = gen.get("meta_info", {})
        entry, done = meta.get("forward_entry_time"), meta.get("prefill_finished_time")
        out.append(
            {
                "prompt_tokens": len(item["prompt_ids"]),
                "prefill_s": round(done - entry, 5) if entry and done else None,
                "wall_s": round(time.perf_counter() - start, 4),
            }
        )
    return out


def check_server(base: str, hf_file: Path, out: Path, label: str) -> int:
    """Compare a running server with the HF reference; write the findings; 0 when all match."""
    ref = json.loads(hf_file.read_text())
    with urllib.request.urlopen(f"{base}/v1/models", timeout=30) as resp:
        model = json.loads(resp.read())["data"][0]["id"]
    eot = 261
    rows = [compare_one(base, model, item, eot) for item in ref["items"]]
    # The long prompts: the retrieval eval's, or every long-context item (longctx_greedy.py).
    longs = [i for i in ref["items"] if i["eval"] == "synth_retrieval" or "longctx" in i["eval"]]
    found = {
        "label": label,
        "server": base,
        "n": len(rows),
        "ids_equal": sum(r["ids_equal"] for r in rows),
        "chat_text_equal": sum(r["chat_text_equal"] for r in rows),
        "chat_prompt_tokens_equal": sum(
            r["chat_prompt_tokens"] == r["prompt_tokens"] for r in rows
        ),
        "items": rows,
        "prefill": prefill_times(base, longs),
    }
    out.write_text(json.dumps(found, indent=1) + "\n")
    print(
        f"greedy_check {label}: ids equal {found['ids_equal']}/{len(rows)}, chat text equal "
        f"{found['chat_text_equal']}/{len(rows)}, chat prompt tokens equal "
        f"{found['chat_prompt_tokens_equal']}/{len(rows)}"
    )
    return 0 if found["ids_equal"] == len(rows) else 1


def main(argv: list[str]) -> int:
    """``hf TARGET OUT`` or ``server URL HF_FILE OUT LABEL``."""
    if argv[:1] == ["hf"] and len(argv) == 3:
        hf_reference(Path(argv[1]), Path(argv[2]))
        return 0
    if argv[:1] == ["server"] and len(argv) == 5:
        return check_server(argv[1].rstrip("/"), Path(argv[2]), Path(argv[3]), argv[4])
    print(__doc__.split("\n\n")[0] + "\nusage: hf TARGET OUT | server URL HF_FILE OUT LABEL")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
