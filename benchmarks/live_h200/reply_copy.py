"""How a long-context reply copies its evidence: the diagnosis behind an accuracy.

The long-context model's worked reply (``evals.longctx_tasks.worked_reply``) quotes the hidden
lines that answer the question, then answers. An accuracy of 0.17 says nothing of why; the lines
the model quoted do. The CPU study of 2026-12-07 read them by hand for the 2026-12-06 model
(``longctx-model-worked-0.5.23/cpu-study``): most quoted keys were garbled (``gentle-`` for
``golden-``), and most multi-key numbers were a distractor needle's, copied exactly. The retrain
with confusable keys is meant to move both, and a lease's eval should say whether it did even
where the accuracy stays low. Each quoted line is one of

- ``exact``: an evidence line, byte for byte (the right needle or chain step), the first time;
- ``repeated``: a line the reply quoted already (the 2026-12-07 model quoted one multi-value
  needle four times: four exact quotes, one needle found);
- ``distractor``: a line of the prompt that is not evidence (the wrong needle, copied whole);
- ``mismatched``: a prompt line's key (the line without its last word) with another line's value
  (the number or variable after the key): the key copied well, the wrong needle looked up, as
  in the 2026-12-06 model's multi-query replies (one number under every asked key);
- ``garbled_key``: a key found nowhere, with an evidence line's value: the key miscopied, a
  value the question asks for (with several asked keys, perhaps another key's);
- ``garbled_distractor``: a key found nowhere, with a line's value that is not evidence;
- ``invented``: a value found nowhere in the prompt.

Pure but for ``main``, which re-reads a ``metrics.json`` (``reread``) into a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple, dataclass
from typing import Any

from evals.longctx_tasks import FINAL

KINDS = ("exact", "repeated", "distractor", "mismatched", "garbled_key", "garbled_distractor",
         "invented")  # fmt: skip


@dataclass(frozen=True)
class Copy:
    """One reply's quoted lines by kind (``KINDS``), and the evidence lines its question has."""

    exact: int = 0
    repeated: int = 0
    distractor: int = 0
    mismatched: int = 0
    garbled_key: int = 0
    garbled_distractor: int = 0
    invented: int = 0
    evidence: int = 0

    @property
    def quoted(self) -> int:
        """The reply's lines before its answer."""
        return sum(astuple(self)[: len(KINDS)])

    def __add__(self, other: Copy) -> Copy:
        return Copy(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


def key_value(line: str) -> tuple[str, str]:
    """A hidden line's key (all but its last word) and value (``4829173``, no full stop)."""
    key, _, value = line.rstrip(".").rpartition(" ")
    return key, value


def reply_copy(prompt: str, evidence: tuple[str, ...], reply: str) -> Copy:
    """Sort ``reply``'s quoted lines (every non-empty line not starting with the answer)."""
    prompt_lines = set(prompt.split("\n"))
    pairs = [key_value(ln) for ln in prompt_lines]
    keys, values = {k for k, _ in pairs}, {v for _, v in pairs}
    right = {key_value(ln)[1] for ln in evidence}
    counts, seen = dict.fromkeys(KINDS, 0), set()
    for line in (ln.strip() for ln in reply.split("\n")):
        if not line or line.startswith(FINAL):
            continue
        key, value = key_value(line)
        kind = ("repeated" if line in seen else "exact" if line in evidence else
                "distractor" if line in prompt_lines else
                "invented" if value not in values else "mismatched" if key in keys else
                "garbled_key" if value in right else "garbled_distractor")  # fmt: skip
        counts[kind] += 1
        seen.add(line)
    return Copy(**counts, evidence=len(evidence))


def as_json(copy: Copy) -> dict[str, int]:
    """A row's copy in ``metrics.json``: by name, so a kind added later cannot shift the others."""
    return {k: getattr(copy, k) for k in (*KINDS, "evidence")}


def copy_shares(copies: Iterable[Copy]) -> dict[str, float | int]:
    """Evidence recall and the quoted lines' split by kind, over ``copies`` (4 places).

    ``evidence_copied``: evidence lines quoted exactly (each once) / evidence lines asked for.
    Each of ``KINDS`` but ``exact``: its share of the quoted lines.
    """
    total = sum(copies, Copy())
    quoted = max(1, total.quoted)
    shares: dict[str, float | int] = {
        "evidence_copied": round(total.exact / max(1, total.evidence), 4)
    }
    shares.update({k: round(getattr(total, k) / quoted, 4) for k in KINDS[1:]})
    return {**shares, "quoted": total.quoted}


def reread(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of a ``metrics.json`` with each reply's copy read again from its text.

    The questions are regenerated (eval seed 0, bytes; a row's index is its place among its
    task's rows at its length, the eval's order), so an eval written before this reading, or by
    an older version of it, is read as a new one would be.
    """
    from evals.longctx_tasks import sample
    from evals.longctx_tokens import ByteCounter

    seen: dict[tuple[str, int], int] = {}
    out = []
    for row in rows:
        index = seen[row["task"], row["length"]] = seen.get((row["task"], row["length"]), -1) + 1
        s = sample(row["task"], row["length"], 0, index, ByteCounter())
        out.append({**row, "copy": as_json(reply_copy(s.text, s.evidence, row["text"]))})
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.live_h200.reply_copy METRICS --out FILE``: a metrics.json re-read."""
    import argparse
    import json
    from pathlib import Path

    from benchmarks.live_h200.longctx_eval import summarize

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("metrics", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    rows = reread(json.loads(args.metrics.read_text())["rows"])
    copies = summarize(rows)["copy_per_task_length"]
    args.out.write_text(json.dumps({"source": str(args.metrics), "copy_per_task_length": copies,
                                    "rows": [{k: r[k] for k in ("task", "length", "copy")}
                                             for r in rows]}, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
