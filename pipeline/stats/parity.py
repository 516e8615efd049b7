"""Teacher-forced logprob parity: per-token divergence of a candidate from the baseline (pure).

The baseline generated each sequence (at temperature 1) and both servers re-scored exactly those
token ids by prefill (docs/sglang-logprobs.md). Per token, on the baseline's sampled token ``x``:

- ``kl_sampled = logp_base(x) - logp_cand(x)``: its mean over tokens sampled from the baseline's
  own distribution estimates KL(base || cand) (unbiased, but noisy: a token's value can be < 0);
- ``kl_topk``: KL between the two distributions coarsened to the baseline's top-k ids plus one
  bucket for the rest (every term >= 0, far less noise; null where top rows are missing);
- ``abs_delta = |logp_base(x) - logp_cand(x)|``;
- ``top1_disagree``: 1 where the two top-1 ids differ.

Every metric is "larger is further": ``parity_verdict`` reads any of them the same way.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

METRICS = ("kl_sampled", "kl_topk", "abs_delta", "top1_disagree")
# A candidate's logprob for an id outside its own top-k is at most its k-th logprob: the coarsened
# KL uses that bound; the rest bucket's mass is kept above this so its log stays finite.
_MIN_REST = 1e-12

TopRow = tuple[tuple[int, float], ...]  # (token id, logprob), best first; () when not returned


@dataclass(frozen=True)
class Scores:
    """One server's prefill re-score of one sequence: a value per scored token."""

    logprobs: tuple[float, ...]  # logprob of the scored token at each position
    top: tuple[TopRow, ...] = ()  # the top-k row per position (empty: not asked for)

    @property
    def top1(self) -> tuple[int | None, ...]:
        """The most likely id per position (None where the row is empty)."""
        return tuple(top1_id(row) for row in self.top)


def scores_of(logprobs: Sequence[float], top: Sequence[Sequence[Sequence[float]]] = ()) -> Scores:
    """``Scores`` from a parity file's lists (``logprobs``; ``top`` as ``[id, logprob]`` pairs)."""
    rows = tuple(tuple((int(i), float(lp)) for i, lp in row) for row in top)
    return Scores(tuple(float(x) for x in logprobs), rows)


@dataclass(frozen=True)
class ScoredSequence:
    """One baseline sequence scored by the baseline and by a candidate."""

    question: str  # the cluster: a question's sequences share its difficulty
    start: int  # context position of the first scored token (the prompt's length)
    base: Scores
    cand: Scores


@dataclass(frozen=True)
class TokenDivergence:
    """Per-token values of every metric of one sequence (``kl_topk`` NaN where unknown)."""

    values: dict[str, np.ndarray]
    positions: np.ndarray  # context position of each token

    @property
    def count(self) -> int:
        """Tokens scored."""
        return len(self.positions)


def top1_id(row: TopRow) -> int | None:
    """The best id of a top row (None when the row is empty)."""
    return row[0][0] if row else None


def coarse_kl(base: TopRow, cand: TopRow) -> float:
    """KL(base || cand) over the baseline's top ids plus one bucket for every other id.

    An id the candidate's row lacks gets the candidate's last (k-th) logprob, its largest possible
    value. NaN when either row is empty.
    """
    if not base or not cand:
        return math.nan
    cand_lp = dict(cand)
    floor = cand[-1][1]
    p = np.exp([lp for _, lp in base])
    q = np.exp([min(cand_lp.get(i, floor), 0.0) for i, _ in base])
    head = float(np.sum(p * (np.log(p) - np.log(q))))
    rest_p = max(1.0 - float(p.sum()), 0.0)
    rest_q = max(1.0 - float(q.sum()), _MIN_REST)
    tail = rest_p * math.log(rest_p / rest_q) if rest_p > _MIN_REST else 0.0
    return max(head + tail, 0.0)


def token_divergence(seq: ScoredSequence) -> TokenDivergence:
    """Every metric per token of one sequence.

    Raises:
        ValueError: when the two scores cover different numbers of tokens.
    """
    base, cand = seq.base, seq.cand
    n = len(base.logprobs)
    if len(cand.logprobs) != n:
        raise ValueError(
            f"question {seq.question!r}: baseline scored {n} tokens, candidate "
            f"{len(cand.logprobs)}; re-score exactly the baseline's token ids"
        )
    delta = np.asarray(base.logprobs, dtype=float) - np.asarray(cand.logprobs, dtype=float)
    values = {
        "kl_sampled": delta,
        "kl_topk": _per_position(base.top, cand.top, n, coarse_kl),
        "abs_delta": np.abs(delta),
        "top1_disagree": _per_position(base.top, cand.top, n, _disagree),
    }
    return TokenDivergence(values, seq.start + np.arange(n))


def _disagree(base: TopRow, cand: TopRow) -> float:
    a, b = top1_id(base), top1_id(cand)
    return math.nan if a is None or b is None else float(a != b)


def _per_position(
    base: Sequence[TopRow], cand: Sequence[TopRow], n: int, fn: Callable[[TopRow, TopRow], float]
) -> np.ndarray:
    if len(base) != n or len(cand) != n:
        return np.full(n, np.nan)
    return np.asarray([fn(b, c) for b, c in zip(base, cand, strict=True)], dtype=float)


@dataclass(frozen=True)
class Totals:
    """Sums and counts of one metric (NaN tokens left out): what clustering and binning add up."""

    total: float
    count: int

    @property
    def mean(self) -> float:
        """The token-weighted mean (NaN with no token)."""
        return self.total / self.count if self.count else math.nan


def totals(values: np.ndarray) -> Totals:
    """The sum and count of the known (non-NaN) values."""
    known = values[~np.isnan(values)]
    return Totals(float(known.sum()), int(known.size))


@dataclass(frozen=True)
class SequenceParity:
    """One sequence's totals per metric."""

    question: str
    tokens: int
    metrics: dict[str, Totals]


def sequence_parity(seq: ScoredSequence) -> SequenceParity:
    """Per-sequence totals of every metric."""
    div = token_divergence(seq)
    return SequenceParity(seq.question, div.count, {k: totals(v) for k, v in div.values.items()})


def question_totals(seqs: Sequence[SequenceParity], metric: str) -> dict[str, Totals]:
    """A metric's totals per question (its sequences added up): the clusters of the verdict."""
    out: dict[str, Totals] = {}
    for s in seqs:
        t, have = s.metrics[metric], out.get(s.question, Totals(0.0, 0))
        out[s.question] = Totals(have.total + t.total, have.count + t.count)
    return out


@dataclass(frozen=True)
class PositionBin:
    """One context-position bin: ``[low, high)`` with each metric's totals."""

    low: int
    high: int | None  # None: open-ended
    metrics: dict[str, Totals]


def position_bins(seqs: Sequence[ScoredSequence], edges: Sequence[int]) -> list[PositionBin]:
    """Each metric per context-position bin (a divergence that only bites at long context).

    Args:
        seqs: the scored sequences.
        edges: increasing bin starts; the first bin starts at ``edges[0]`` (use 0), the last is
            open-ended.

    Raises:
        ValueError: when ``edges`` is empty or not increasing.
    """
    if not edges or any(b <= a for a, b in itertools.pairwise(edges)):
        raise ValueError(
            f"position bin edges {list(edges)}: need increasing starts, e.g. [0, 1024]"
        )
    divs = [token_divergence(s) for s in seqs]
    bins = []
    for i, low in enumerate(edges):
        high = edges[i + 1] if i + 1 < len(edges) else None
        sums = {}
        for metric in METRICS:
            parts = [_in_bin(d, metric, low, high) for d in divs]
            sums[metric] = Totals(sum(p.total for p in parts), sum(p.count for p in parts))
        bins.append(PositionBin(low, high, sums))
    return bins


def _in_bin(div: TokenDivergence, metric: str, low: int, high: int | None) -> Totals:
    pos = div.positions
    mask = (pos >= low) & (pos < high) if high is not None else pos >= low
    return totals(div.values[metric][mask])
