"""Pairing: the baseline cell of a candidate, and their samples paired by (question, repeat)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.report.load.cells import CellRecord
from pipeline.results.baseline_choice import (
    BaselineChoice,
    CellKey,
    Where,
    choose_baseline,
    evals_of,
    key_of,
)
from pipeline.stats.signoff import Outcomes, paired_masks, question_diffs

Samples = dict[tuple[str, int], dict[str, Any]]
SampleReader = Callable[[CellRecord, str], Samples]


def baseline_key(cell: CellRecord) -> CellKey:
    """What the baseline rule reads of a report's cell (``pipeline.results.baseline_choice``)."""
    where = Where(
        str(cell.folder or cell.id), cell.sweep, cell.status, cell.layout,
        ended_at=ended_at(cell), label=cell.label, evals=evals_of(cell.result),
    )  # fmt: skip
    return key_of(cell.identity, where)


def choose_for(
    cell: CellRecord, cells: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> tuple[CellRecord | None, BaselineChoice]:
    """The baseline cell of ``cell`` among ``cells`` and the rule's choice (note, elsewhere)."""
    keyed = {baseline_key(c): c for c in cells}
    choice = choose_baseline(baseline_key(cell), list(keyed), baseline, match)
    return (keyed[choice.chosen] if choice.chosen else None), choice


def find_baseline(
    cell: CellRecord, cells: Sequence[CellRecord], baseline: str, match: Sequence[str]
) -> tuple[CellRecord | None, str]:
    """The baseline cell for ``cell`` and a note on how it was chosen (or why there is none).

    The rule of ``pipeline.results.baseline_choice``, the one sequential stopping uses: same
    values of ``match`` (exact-softmax fallback), same layout, an ok baseline, the most of the
    candidate's evals, the candidate's own sweep first, the one that ended last. Returns
    ``(None, reason)`` when there is none.
    """
    found, choice = choose_for(cell, cells, baseline, match)
    return found, choice.note


def ended_at(cell: CellRecord) -> str:
    """When the cell really ended (``timing.ended_at``, as the cell job writes it), or ''."""
    return cell.result.ended_at or ""


@dataclass(frozen=True)
class Paired:
    """A candidate and its baseline on the baseline's questions (``pipeline.stats.signoff``).

    Attributes:
        questions: the baseline's question ids (row order).
        outcomes: both sides' correctness, NaN where a request errored or was never asked.
        repeats_base: the baseline's repeat indices.
        repeats_cand: the candidate's repeat indices.
        extra_questions: questions only the candidate has (left out).
        rates: error and truncation rates of each side (``base_error`` etc.).
    """

    questions: list[str]
    outcomes: Outcomes
    repeats_base: list[int]
    repeats_cand: list[int]
    extra_questions: int
    rates: dict[str, float]

    @property
    def diffs(self) -> np.ndarray:
        """``(n, k)`` candidate minus baseline per answered pair (``(n, 1)`` when by question)."""
        base, cand = paired_masks(self.outcomes)
        if self.outcomes.by_repeat:
            by_pair: np.ndarray = cand - base
            return by_pair
        return question_diffs(self.outcomes)[:, None]

    @property
    def repeats(self) -> int:
        """Most answered pairs any question has (by repeat), else the candidate's repeats."""
        counts = np.sum(np.isfinite(self.diffs), axis=1)
        if not self.outcomes.by_repeat:
            counts = np.sum(np.isfinite(self.outcomes.cand), axis=1)
        return int(counts.max()) if counts.size else 0

    @property
    def pairing(self) -> str:
        """How the two sides were paired, in words."""
        if self.outcomes.by_repeat:
            return "paired by question and repeat"
        return (f"paired by question: repeat indices do not line up (baseline "
                f"{_span(self.repeats_base)}, candidate {_span(self.repeats_cand)})")  # fmt: skip

    def flat(self) -> tuple[np.ndarray, np.ndarray]:
        """Baseline and candidate correctness of every answered pair (for McNemar)."""
        base, cand = paired_masks(self.outcomes)
        keep = np.isfinite(base) & np.isfinite(cand)
        return base[keep], cand[keep]


def _span(repeats: list[int]) -> str:
    if not repeats:
        return "none"
    if repeats == list(range(repeats[0], repeats[-1] + 1)):
        return f"{repeats[0]}..{repeats[-1]}"
    return ",".join(map(str, repeats[:6])) + ("..." if len(repeats) > 6 else "")


def _answer(record: dict[str, Any]) -> float:
    # An errored request is no answer (NaN); a truncated one is an answer, and wrong.
    return np.nan if record.get("error_kind") else float(bool(record["correct"]))


def _rates(samples: Samples) -> tuple[float, float]:
    n = max(1, len(samples))
    errors = sum(1 for r in samples.values() if r.get("error_kind"))
    truncated = sum(
        1
        for r in samples.values()
        if not r.get("error_kind") and r.get("finish_reason") == "length"
    )
    return errors / n, truncated / n


def aborted_counts(base: Samples, cand: Samples) -> dict[str, int]:
    """Requests SGLang aborted on each side (retried or errored, never graded); empty if none.

    Only when a side had one, so that reports of sweeps without aborts read as before.
    """
    counts = {"base_aborted": _aborted(base), "cand_aborted": _aborted(cand)}
    return counts if any(counts.values()) else {}


def _aborted(samples: Samples) -> int:
    return sum(
        (r.get("error_kind") == "aborted") + list(r.get("retried") or []).count("aborted")
        for r in samples.values()
    )


def _matrix(samples: Samples, rows: dict[str, int], columns: dict[int, int]) -> np.ndarray:
    out = np.full((len(rows), max(1, len(columns))), np.nan)
    for (q, r), record in samples.items():
        if q in rows:
            out[rows[q], columns[r]] = _answer(record)
    return out


def _errored(samples: Samples, rows: dict[str, int], columns: dict[int, int]) -> np.ndarray:
    # Requests sent that errored (a repeat never sent is not one).
    out = np.zeros((len(rows), max(1, len(columns))), dtype=bool)
    for (q, r), record in samples.items():
        if q in rows and record.get("error_kind"):
            out[rows[q], columns[r]] = True
    return out


def nested_repeats(base: Samples, cand: Samples) -> bool:
    """Whether one side's repeat indices contain the other's (pair by question and repeat)."""
    rb, rc = {r for _, r in base}, {r for _, r in cand}
    return rb <= rc or rc <= rb


def pair_samples(base: Samples, cand: Samples) -> Paired:
    """Both cells' samples of one eval on the baseline's questions (see ``Paired``).

    By (question, repeat) when one side's repeat indices contain the other's (a sequential
    candidate runs a prefix of the baseline's); otherwise by question, and ``pairing`` says so.
    """
    questions = sorted({q for q, _ in base})
    rows = {q: i for i, q in enumerate(questions)}
    rb, rc = sorted({r for _, r in base}), sorted({r for _, r in cand})
    by_repeat = nested_repeats(base, cand)
    if by_repeat:
        cols = {r: j for j, r in enumerate(sorted(set(rb) | set(rc)))}
        b, c = _matrix(base, rows, cols), _matrix(cand, rows, cols)
        errored = _errored(cand, rows, cols)
    else:
        b = _matrix(base, rows, {r: j for j, r in enumerate(rb)})
        cols = {r: j for j, r in enumerate(rc)}
        c, errored = _matrix(cand, rows, cols), _errored(cand, rows, cols)
    asked = np.zeros(len(questions), dtype=bool)
    asked[[rows[q] for q, _ in cand if q in rows]] = True
    (be, bt), (ce, ct) = _rates(base), _rates(cand)
    extra = len({q for q, _ in cand} - set(rows))
    rates = {"base_error": be, "base_truncated": bt, "cand_error": ce, "cand_truncated": ct}
    rates.update(aborted_counts(base, cand))
    return Paired(questions, Outcomes(b, c, asked, by_repeat, errored), rb, rc, extra, rates)


def score_matrix(samples: Samples) -> np.ndarray:
    """One cell's correctness as ``(n_questions, max_repeats)``, NaN-padded.

    Only answers count, as in the pairs and in ``result.json``: an errored request is left out,
    and a question with no answered request has no row.
    """
    by_question: dict[str, list[float]] = {}
    for (q, _), record in sorted(samples.items()):
        if not record.get("error_kind"):
            by_question.setdefault(q, []).append(_answer(record))
    width = max((len(v) for v in by_question.values()), default=1)
    out = np.full((len(by_question), width), np.nan)
    for i, values in enumerate(by_question.values()):
        out[i, : len(values)] = values
    return out
