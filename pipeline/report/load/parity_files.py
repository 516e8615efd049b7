"""What a cell's parity phase wrote (``parity/``, ``pipeline.measuring.parity_run``), read typed.

``summary.json`` holds each metric's clustered mean against the cell whose sequences it
re-scored (``sequences_from``) and its mean per context-position bin; ``scores.jsonl`` holds the
cell's own re-score per sequence, from which the worst sequences are found here (the summary
does not keep them).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pipeline.results.cell_paths import parity_dir
from pipeline.results.parity_rows import ScoreRow
from pipeline.stats.parity import ScoredSequence, Scores, scores_of, sequence_parity
from pipeline.stats.parity_verdict import ClusteredMean

SEQUENCES, SCORES, SUMMARY = "sequences.jsonl", "scores.jsonl", "summary.json"
DECODE = "decode.json"  # decoding against the cell's own prefill (issue 39 item 2)


class ParityFileError(ValueError):
    """A parity file is unreadable; the message names it and the fix."""


@dataclass(frozen=True)
class ParityBin:
    """One context-position bin: ``[low, high)`` and each metric's mean (None: no token)."""

    low: int
    high: int | None
    means: dict[str, float | None]
    tokens: dict[str, int]


@dataclass(frozen=True)
class ParitySummary:
    """A cell's ``parity/summary.json``: its divergence from the cell whose sequences it scored."""

    folder: Path  # the cell that wrote it
    source: Path  # the cell whose sequences (and own re-score) it was compared with
    sequences: int
    metrics: dict[str, dict[str, Any]]  # metric -> estimate, se, questions, tokens
    bins: tuple[ParityBin, ...]

    def mean(self, metric: str, confidence: float) -> ClusteredMean | None:
        """The metric's clustered mean with bounds at ``confidence`` (None: not measured)."""
        m = self.metrics.get(metric)
        if m is None or m.get("estimate") is None:
            return None
        est, questions = float(m["estimate"]), int(m["questions"])
        se = math.inf if m.get("se") is None else float(m["se"])
        if questions < 2 or math.isinf(se):
            return ClusteredMean(est, math.inf, -math.inf, math.inf, questions, int(m["tokens"]))
        # scipy.stats costs a second: a cell's start-up (parity.gate reads this) must not pay it.
        from scipy import stats as sps

        half = float(sps.t.ppf(confidence, questions - 1)) * se
        return ClusteredMean(est, se, est - half, est + half, questions, int(m["tokens"]))


def has_parity(folder: Path | None) -> bool:
    """Whether the cell at ``folder`` ran the parity phase (its re-scores are there)."""
    return folder is not None and (parity_dir(folder) / SCORES).is_file()


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ParityFileError(f"{path}: {err}; run the cell's parity phase again") from err


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, ValueError) as err:
        raise ParityFileError(f"{path}: {err}; run the cell's parity phase again") from err


def read_parity_summary(folder: Path, name: str = SUMMARY) -> ParitySummary | None:
    """The cell's parity summary (None when it scored no other cell's sequences).

    ``name``: ``DECODE`` reads the decode-path summary instead (its source: the cell itself).

    Raises:
        ParityFileError: naming the file when it is not the summary the parity phase writes.
    """
    path = parity_dir(folder) / name
    if not path.is_file():
        return None
    raw = _json(path)
    try:
        bins = tuple(
            ParityBin(int(b["low"]), None if b["high"] is None else int(b["high"]),
                      {k: v["mean"] for k, v in b.items() if isinstance(v, dict)},
                      {k: int(v["tokens"]) for k, v in b.items() if isinstance(v, dict)})
            for b in raw["bins"]
        )  # fmt: skip
        return ParitySummary(folder, Path(raw["sequences_from"]), int(raw["sequences"]),
                             dict(raw["metrics"]), bins)  # fmt: skip
    except (KeyError, TypeError, ValueError) as err:
        raise ParityFileError(f"{path}: {type(err).__name__} {err}: not a parity summary") from err


@dataclass(frozen=True)
class WorstSequence:
    """One sequence's divergence (its mean per token of the metric)."""

    question: str
    prompt_tokens: int
    tokens: int
    mean: float
    eval: str | None = None  # the eval whose question the prompt is (parity.prompts=eval:NAME)
    question_id: str | None = None  # that question's id in the eval's samples

    def to_json(self) -> dict[str, Any]:
        """The entry of a check's ``worst`` list (the eval and question only where known)."""
        found = {"eval": self.eval, "question_id": self.question_id}
        return {"question": self.question, "prompt_tokens": self.prompt_tokens,
                "tokens": self.tokens, "mean": self.mean,
                **{k: v for k, v in found.items() if v is not None}}  # fmt: skip


def _scores(row: ScoreRow) -> Scores:
    return scores_of(row["logprobs"], row.get("top", []))


def worst_sequences(
    summary: ParitySummary, metric: str, count: int = 5, source: Path | None = None
) -> list[WorstSequence]:
    """The ``count`` sequences furthest from the source's re-score by ``metric``.

    ``source``: where the source cell is now (default: where the summary says it was; a cell
    made on another machine names that machine's path).

    Raises:
        ParityFileError: when a file is unreadable or the files list other sequences.
    """
    at = parity_dir(source or summary.source)
    seqs, base = _jsonl(at / SEQUENCES), _jsonl(at / SCORES)
    cand = _jsonl(parity_dir(summary.folder) / SCORES)
    if (
        not [s["question"] for s in seqs]
        == [b["question"] for b in base]
        == [c["question"] for c in cand]
    ):
        raise ParityFileError(
            f"{parity_dir(summary.folder)}: its scores are not of {summary.source}'s sequences"
        )
    out = []
    for s, b, c in zip(seqs, base, cand, strict=True):
        scored = ScoredSequence(s["question"], len(s["prompt_ids"]), _scores(cast(ScoreRow, b)),
                                _scores(cast(ScoreRow, c)))  # fmt: skip
        t = sequence_parity(scored).metrics[metric]
        if t.count:
            asked = (s.get("eval"), s.get("question_id"))
            out.append(WorstSequence(s["question"], len(s["prompt_ids"]), t.count, t.mean, *asked))
    return sorted(out, key=lambda w: -w.mean)[:count]
