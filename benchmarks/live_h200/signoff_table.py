"""The tables of the live sign-off's write-up, from its committed files.

    python -m benchmarks.live_h200.signoff_table benchmarks/results/live-h200/signoff

Prints markdown: every cell (accuracy per eval with the repeats it ran, accept length, launch to
ready, eval time), the skip-softmax estimate per prompt length and factor, the prefill time of each
long prompt sent alone, and the greedy checks against HF. Every live figure quoted in
a sign-off folder's ``README.md`` (``signoff/``, ``signoff-0.5.23/``) is printed here.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from pipeline.results.store import read_result

REPO = Path(__file__).resolve().parents[2]

EVALS = ("synth_mcq", "synth_arith", "synth_retrieval")
FACTORS = ("10000.0", "30000.0", "100000.0", "1000000.0")


def cell_rows(root: Path) -> list[str]:
    """One markdown row per cell of ``root/cells/<sweep>/<cell>/``."""
    rows = ["| sweep | variant | KV | skip (prefill) | "
            + " | ".join(f"{e} acc (repeats)" for e in EVALS)
            + " | accept length | ready (s) | evals (s) |",
            "|---" * (7 + len(EVALS)) + "|"]  # fmt: skip
    for path in sorted(root.glob("cells/*/*/result.json")):
        res = read_result(path.parent)
        if res is None:
            continue
        accs = [f"{res.evals[e].accuracy:.3f} ({res.evals[e].n_repeats})" for e in EVALS]
        marks = res.marks
        rows.append(f"| {path.parent.parent.name} | {res.cell.variant} | {res.cell.kv_dtype} | "
                    f"{res.cell.skip_prefill or 0:g} | " + " | ".join(accs)
                    + f" | {res.accept.accept_length:.3f} | {marks['ready'] - marks['launch']:.0f}"
                    f" | {marks['evals_done'] - marks['verified']:.0f} |")  # fmt: skip
    return rows


def skip_rows(root: Path) -> list[str]:
    """Estimated share of (64-row block, key tile) pairs skipped, per prompt length and factor."""
    found = json.loads((root / "checks/skip_fraction.json").read_text())
    tally: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for prompt in found["prompts"]:
        t = tally[prompt["tokens"]]
        t["tiles"] += prompt["auto"]["tiles"]
        for f in FACTORS:
            t[f] += prompt["auto"]["skipped"][f]
    rows = ["| prompt tokens | " + " | ".join(f"factor {float(f):g}" for f in FACTORS) + " |",
            "|---" * (1 + len(FACTORS)) + "|"]  # fmt: skip
    for tokens, t in sorted(tally.items()):
        rows.append(
            f"| {tokens} | " + " | ".join(f"{t[f] / t['tiles']:.1%}" for f in FACTORS) + " |"
        )
    total = found["skip_fraction"]["auto"]
    rows.append("| all 48 | " + " | ".join(f"{total[f]:.1%}" for f in FACTORS) + " |")
    return rows


def prefill_rows(root: Path) -> list[str]:
    """Prefill ms of each long prompt sent alone (one output token, cache flushed before)."""
    # The 0.5.19 run timed them on servers of their own; the 0.5.23 warm-ups time them too.
    files = sorted((root / "serial-prefill").glob("greedy-*.json")) or sorted(
        (root / "checks").glob("greedy-*.json")
    )
    found = {f.stem.removeprefix("greedy-"): json.loads(f.read_text()) for f in files}
    lengths = [p["prompt_tokens"] for p in next(iter(found.values()))["prefill"]]
    rows = ["| server | " + " | ".join(str(n) for n in lengths) + " |",
            "|---" * (1 + len(lengths)) + "|"]  # fmt: skip
    for name, data in found.items():
        ms = [f"{p['prefill_s'] * 1000:.1f}" for p in data["prefill"]]
        rows.append(f"| {name} | " + " | ".join(ms) + " |")
    return rows


def greedy_rows(root: Path) -> list[str]:
    """SGLang's greedy output against HF's, per server."""
    rows = [
        "| server | ids equal | chat text equal | chat prompt tokens equal | differing |",
        "|---|---|---|---|---|",
    ]
    for f in sorted([*root.glob("checks/greedy-*.json"), *root.glob("serial-prefill/*.json")]):
        d: dict[str, Any] = json.loads(f.read_text())
        bad = [f"{i['eval']} {i['question_id'][:8]} (same for {i['common_prefix']} of "
               f"{i['hf_tokens']} tokens)" for i in d["items"] if not i["ids_equal"]]  # fmt: skip
        rows.append(f"| {f.parent.name}/{f.stem} | {d['ids_equal']}/{d['n']} | "
                    f"{d['chat_text_equal']}/{d['n']} | {d['chat_prompt_tokens_equal']}/{d['n']} | "
                    f"{'; '.join(bad[:2])}{' ...' if len(bad) > 2 else ''} |")  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    """Print every table for the folder given (default: the committed sign-off)."""
    root = Path(argv[0]) if argv else REPO / "benchmarks/results/live-h200/signoff"
    # The 0.5.23 sign-off reused the 0.5.19 run's skip-softmax estimate (same model, same prompts).
    skip = skip_rows if (root / "checks/skip_fraction.json").exists() else None
    tables = (("Cells", cell_rows), ("Skip-softmax estimate", skip),
              ("Prefill alone (ms)", prefill_rows), ("Greedy vs HF", greedy_rows))  # fmt: skip
    for title, table in tables:
        if table is not None:
            print(f"### {title}\n\n" + "\n".join(table(root)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
