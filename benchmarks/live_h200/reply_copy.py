"""How a long-context reply copies its evidence: the diagnosis behind an accuracy (pure).

The long-context model's worked reply (``evals.longctx_tasks.worked_reply``) quotes the hidden
lines that answer the question, then answers. An accuracy of 0.17 says nothing of why; the lines
the model quoted do. The CPU study of 2026-12-07 read them by hand for the 2026-12-06 model
(``longctx-model-worked-0.5.23/cpu-study``): most quoted keys were garbled (``gentle-`` for
``golden-``), and most multi-key numbers were a distractor needle's, copied exactly. The retrain
with confusable keys is meant to move both, and a lease's eval should say whether it did even
where the accuracy stays low. Each quoted line is one of

- ``exact``: an evidence line, byte for byte (the right needle or chain step);
- ``distractor``: a line of the prompt that is not evidence (the wrong needle, copied whole);
- ``mismatched``: a prompt line's key (the line without its last word) with another line's value
  (the number or variable after the key): the key copied well, the wrong needle looked up, as
  in the 2026-12-06 model's multi-query replies (one number under every asked key);
- ``garbled_key``: a key found nowhere, with an evidence line's value: the key miscopied, a
  value the question asks for (with several asked keys, perhaps another key's);
- ``garbled_distractor``: a key found nowhere, with a line's value that is not evidence;
- ``invented``: a value found nowhere in the prompt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple, dataclass

from evals.longctx_tasks import FINAL

KINDS = ("exact", "distractor", "mismatched", "garbled_key", "garbled_distractor", "invented")


@dataclass(frozen=True)
class Copy:
    """One reply's quoted lines by kind (``KINDS``), and the evidence lines its question has."""

    exact: int = 0
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
    counts = dict.fromkeys(KINDS, 0)
    for line in (ln.strip() for ln in reply.split("\n")):
        if not line or line.startswith(FINAL):
            continue
        key, value = key_value(line)
        kind = ("exact" if line in evidence else "distractor" if line in prompt_lines else
                "invented" if value not in values else "mismatched" if key in keys else
                "garbled_key" if value in right else "garbled_distractor")  # fmt: skip
        counts[kind] += 1
    return Copy(**counts, evidence=len(evidence))


def copy_shares(copies: Iterable[Copy]) -> dict[str, float | int]:
    """Evidence recall and the quoted lines' split by kind, over ``copies`` (4 places).

    ``evidence_copied``: exact quotes / evidence lines asked for (a line quoted twice counts
    twice: read it beside ``quoted``). Each of ``KINDS`` but ``exact``: its share of the quoted
    lines.
    """
    total = sum(copies, Copy())
    quoted = max(1, total.quoted)
    shares: dict[str, float | int] = {
        "evidence_copied": round(total.exact / max(1, total.evidence), 4)
    }
    shares.update({k: round(getattr(total, k) / quoted, 4) for k in KINDS[1:]})
    return {**shares, "quoted": total.quoted}
