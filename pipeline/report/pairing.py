"""Pairing: the baseline cell of a candidate, and their samples paired by (question, repeat)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.report.load import CellRecord

Samples = dict[tuple[str, int], dict[str, Any]]
SampleReader = Callable[[CellRecord, str], Samples]


def _exact(skip: Any) -> bool:
    return skip in (None, 0, 0.0, "None", "null")


def _key(cell: CellRecord, match: Sequence[str], exact_skip: bool = False) -> tuple[Any, ...]:
    parts: list[Any] = []
    for name in match:
        if name == "model":
            parts.append(cell.model)
        elif name == "kv_dtype":
            parts.append(cell.kv_dtype)
        elif name == "gpu":
            parts.append(cell.gpu)
        elif name == "speculative":
            parts.append(repr(sorted((cell.speculative or {}).items())))
        elif name == "skip_softmax":
            parts.append(
                ("exact", "exact")
                if exact_skip
                else (
                    ("exact" if _exact(cell.skip_prefill) else str(cell.skip_prefill)),
                    ("exact" if _exact(cell.skip_decode) else str(cell.skip_decode)),
                )
            )
    return tuple(parts)


def find_baseline(
    cell: CellRecord, cells: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> tuple[CellRecord | None, str]:
    """The baseline cell for ``cell`` and a note on how it was chosen (or why there is none).

    Same values of ``match`` and variant ``baseline``; with skip-softmax set and no baseline at
    the same factors, the baseline at exact softmax. Several candidates: the ok one that finished
    last. Returns ``(None, reason)`` when there is no ok baseline.
    """
    pool = [c for c in cells if c.variant == baseline and c is not cell]
    same = [c for c in pool if _key(c, match) == _key(cell, match)]
    note = ""
    if (
        not same
        and "skip_softmax" in match
        and not (_exact(cell.skip_prefill) and _exact(cell.skip_decode))
    ):
        same = [c for c in pool if _key(c, match) == _key(cell, match, exact_skip=True)]
        note = "baseline at exact softmax (none at the same skip-softmax factors)"
    ok = [c for c in same if c.status == "ok"]
    if not ok:
        if same:
            return None, f"baseline {same[0].label} is {same[0].status.upper()}"
        return None, (f"no {baseline} cell with the same {', '.join(match)} among the inputs")
    ok.sort(key=lambda c: str((c.result.get("timing") or {}).get("finished_at") or ""))
    if len(ok) > 1:
        note = (note + "; " if note else "") + f"{len(ok)} baseline cells match, used the latest"
    return ok[-1], note


@dataclass(frozen=True)
class Paired:
    """Outcomes of a candidate and its baseline on the same (question, repeat) prompts.

    Attributes:
        questions: question ids (row order of ``diffs``).
        diffs: ``(n_questions, max_repeats)`` candidate minus baseline (1/0/-1), NaN-padded.
        base: baseline correctness per pair (flat, key order).
        cand: candidate correctness per pair.
        keys: the (question, repeat) keys of the pairs.
        unpaired: samples on either side without a partner.
    """

    questions: list[str]
    diffs: np.ndarray
    base: np.ndarray
    cand: np.ndarray
    keys: list[tuple[str, int]]
    unpaired: int

    @property
    def repeats(self) -> int:
        """Most repeats any question has."""
        return int(np.max(np.sum(~np.isnan(self.diffs), axis=1))) if len(self.keys) else 0


def pair_samples(base: Samples, cand: Samples) -> Paired:
    """Pair two cells' samples of one eval by (question_id, repeat)."""
    keys = sorted(set(base) & set(cand))
    unpaired = len(set(base) ^ set(cand))
    b = np.array([base[k]["correct"] for k in keys], dtype=float)
    c = np.array([cand[k]["correct"] for k in keys], dtype=float)
    questions = sorted({q for q, _ in keys})
    row = {q: i for i, q in enumerate(questions)}
    by_question: dict[str, list[float]] = {}
    for (q, _), d in zip(keys, c - b, strict=True):
        by_question.setdefault(q, []).append(float(d))
    width = max((len(v) for v in by_question.values()), default=0)
    diffs = np.full((len(questions), max(width, 1)), np.nan)
    for q, values in by_question.items():
        diffs[row[q], : len(values)] = values
    return Paired(questions, diffs, b, c, keys, unpaired)


def score_matrix(samples: Samples) -> np.ndarray:
    """One cell's correctness as ``(n_questions, max_repeats)``, NaN-padded."""
    by_question: dict[str, list[float]] = {}
    for (q, _), record in sorted(samples.items()):
        by_question.setdefault(q, []).append(float(record["correct"]))
    width = max((len(v) for v in by_question.values()), default=1)
    out = np.full((len(by_question), width), np.nan)
    for i, values in enumerate(by_question.values()):
        out[i, : len(values)] = values
    return out


def _spec(record: dict[str, Any]) -> tuple[float, float] | None:
    spec = record.get("spec") or {}
    verify, tokens = spec.get("verify_ct"), spec.get("completion_tokens")
    if record.get("error_kind") or not verify or not tokens:
        return None
    return float(tokens), float(verify)


def accept_rows(samples: Samples) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Completion tokens, verify steps and question id of every request with spec statistics."""
    rows = [(q, s) for (q, _), r in sorted(samples.items()) if (s := _spec(r)) is not None]
    return (
        np.array([s[0] for _, s in rows]),
        np.array([s[1] for _, s in rows]),
        [q for q, _ in rows],
    )


def accept_pairs(base: Samples, cand: Samples) -> tuple[list[np.ndarray], list[str]]:
    """``[c_base, v_base, c_cand, v_cand]`` over prompts where both have spec statistics."""
    keys = [
        k
        for k in sorted(set(base) & set(cand))
        if _spec(base[k]) is not None and _spec(cand[k]) is not None
    ]
    cols: list[list[float]] = [[], [], [], []]
    for k in keys:
        (cb, vb), (cc, vc) = _spec(base[k]), _spec(cand[k])  # type: ignore[misc]
        for col, value in zip(cols, (cb, vb, cc, vc), strict=True):
            col.append(value)
    return [np.array(c) for c in cols], [q for q, _ in keys]
