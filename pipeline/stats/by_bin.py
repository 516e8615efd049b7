"""Paired verdicts by bin: context length or category, where the changes under test act.

A skip-softmax threshold scales with the sequence length, fp8 KV error grows with context and
speculative acceptance differs by domain, so a change can cost 10 points at 64k while the eval's
aggregate over 4k-128k stays inside its margin. Each bin (a context-length range, or a category)
is its own paired comparison on the questions that fall in it, with the sign-off's own rule
(``signoff.accuracy_evidence``: question means, SE across questions, lost pairs at their worst for
GO and best for NO-GO; accept length: the token-weighted ratio on the log scale, SE by the
delete-one-question jackknife). Multiplicity across bins: NO-GO is an alarm, so its p-values are
Holm-corrected over the bins that had a test (the chance that any clean bin raises one stays at or
below alpha); GO is read per bin at alpha (a bin's GO says that bin is within the margin; the
eval's GO is the aggregate check's). The eval is NO-GO by bin when any bin is NO-GO after the
correction, which is how a drop concentrated in one bin shows although the aggregate is GO.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipeline.stats.multiplicity import holm_array
from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO, margin_test
from pipeline.stats.outcomes import Outcomes
from pipeline.stats.signoff import accuracy_evidence

FloatArray = np.ndarray
# Context-length bin edges in the served model's tokens: RULER's lengths, 4k to 128k.
LENGTH_EDGES = (4096, 8192, 16384, 32768, 65536, 131072)


def _k(tokens: int) -> str:
    return f"{tokens // 1024}k"


def length_bin(tokens: int, edges: Sequence[int] = LENGTH_EDGES) -> str:
    """The bin a prompt of ``tokens`` tokens falls in: '<=4k', '4k-8k', ..., '>128k'."""
    if tokens < 0:
        raise ValueError(f"tokens={tokens} must be >= 0")
    if tokens <= edges[0]:
        return f"<={_k(edges[0])}"
    for low, high in itertools.pairwise(edges):
        if tokens <= high:
            return f"{_k(low)}-{_k(high)}"
    return f">{_k(edges[-1])}"


def bin_order(labels: Sequence[str], edges: Sequence[int] = LENGTH_EDGES) -> list[str]:
    """Distinct labels in the order of the length bins (others, e.g. categories, sorted after)."""
    known = [length_bin(0, edges)] + [length_bin(e + 1, edges) for e in edges]
    present = set(labels)
    return [b for b in known if b in present] + sorted(present - set(known))


@dataclass(frozen=True)
class BinCheck:
    """One bin's paired check (drop > 0: the candidate is worse; accept length: log ratio).

    Attributes:
        label: the bin ('8k-16k', or a category).
        questions: questions in the bin with a paired answer (accuracy) or request (accept).
        drop: the estimated drop; ``lower`` / ``upper`` its one-sided (1 - alpha) bounds.
        p_go: GO's p-value, read at alpha per bin.
        p_nogo: NO-GO's p-value Holm-corrected over the family of bins.
        verdict: GO / NO-GO / INCONCLUSIVE (fewer than two questions: INCONCLUSIVE, no test).
    """

    label: str
    questions: int
    drop: float
    lower: float
    upper: float
    p_go: float
    p_nogo: float
    verdict: str


@dataclass(frozen=True)
class ByBin:
    """Every bin's check, and what they say together."""

    checks: tuple[BinCheck, ...]
    margin: float
    alpha: float

    @property
    def family(self) -> int:
        """Bins with a test: the size of the Holm family."""
        return sum(1 for c in self.checks if math.isfinite(c.p_nogo))

    @property
    def verdict(self) -> str:
        """NO-GO when any bin is (after Holm), GO when every bin is, else INCONCLUSIVE."""
        said = {c.verdict for c in self.checks}
        if NO_GO in said:
            return NO_GO
        return GO if said == {GO} else INCONCLUSIVE

    def multiplicity(self) -> str:
        """The correction, in words, for the report."""
        return (f"NO-GO Holm-corrected over {self.family} bins with a test; GO per bin at "
                f"alpha {self.alpha:g}")  # fmt: skip


def _finish(label: str, n: int, drop: float, lower: float, upper: float, p_go: float,
            p_nogo: float) -> BinCheck:  # fmt: skip
    return BinCheck(label, n, drop, lower, upper, p_go, p_nogo, INCONCLUSIVE)


def _holm(raw: list[BinCheck], margin: float, alpha: float) -> ByBin:
    adjusted = holm_array(np.asarray([c.p_nogo for c in raw], dtype=float))
    out = []
    for check, p_nogo in zip(raw, adjusted, strict=True):
        verdict = NO_GO if p_nogo <= alpha else GO if check.p_go <= alpha else INCONCLUSIVE
        out.append(BinCheck(check.label, check.questions, check.drop, check.lower, check.upper,
                            check.p_go, float(p_nogo), verdict))  # fmt: skip
    return ByBin(tuple(out), margin, alpha)


def accuracy_by_bin(o: Outcomes, labels: Sequence[str], margin: float, alpha: float) -> ByBin:
    """Each bin's accuracy-vs-baseline check (``labels``: the bin of each of ``o``'s questions)."""
    if len(labels) != o.base.shape[-2]:
        raise ValueError(f"{len(labels)} bin labels for {o.base.shape[-2]} questions")
    tags = np.asarray(labels)
    raw = []
    for label in bin_order(labels):
        rows = tags == label
        part = Outcomes(o.base[rows], o.cand[rows], np.asarray(o.cand_asked)[rows], o.by_repeat,
                        None if o.cand_errored is None else o.cand_errored[rows])  # fmt: skip
        ev = accuracy_evidence(part, margin, alpha)
        # nogo_bound: the drop's lower bound (missing answers at their best), go_bound its upper.
        raw.append(_finish(label, int(ev.n_paired), float(ev.drop), float(ev.nogo_bound),
                           float(ev.go_bound), float(ev.p_go), float(ev.p_nogo)))  # fmt: skip
    return _holm(raw, margin, alpha)


@dataclass(frozen=True)
class AcceptPairs:
    """Per paired request: both sides' completion tokens and verify steps, its question and bin."""

    base_tokens: FloatArray
    base_verify: FloatArray
    cand_tokens: FloatArray
    cand_verify: FloatArray
    questions: Sequence[str]
    labels: Sequence[str]


def accept_by_bin(pairs: AcceptPairs, band: float, alpha: float) -> ByBin:
    """Each bin's accept-length check: drop = log(AL_base / AL_cand) against ``-log(1 - band)``."""
    tags, questions = np.asarray(pairs.labels), np.asarray(pairs.questions)
    margin = -math.log(1 - band)
    raw = []
    for label in bin_order(list(pairs.labels)):
        rows = tags == label
        cb, vb = pairs.base_tokens[rows], pairs.base_verify[rows]
        cc, vc = pairs.cand_tokens[rows], pairs.cand_verify[rows]
        groups = len(set(questions[rows].tolist()))
        if groups < 2 or min(cb.sum(), vb.sum(), cc.sum(), vc.sum()) <= 0:
            raw.append(_finish(label, groups, math.nan, math.nan, math.nan, math.nan, math.nan))
            continue
        drop = math.log((cb.sum() / vb.sum()) / (cc.sum() / vc.sum()))
        se = jackknife_log_ratio_se([cc, vb], [vc, cb], questions[rows].tolist())
        test = margin_test(drop, se, groups - 1, margin, alpha)
        raw.append(_finish(label, groups, drop, float(test.lower), float(test.upper),
                           float(test.p_go), float(test.p_nogo)))  # fmt: skip
    return _holm(raw, margin, alpha)


def jackknife_log_ratio_se(
    numerators: Sequence[FloatArray], denominators: Sequence[FloatArray], clusters: Sequence[str]
) -> float:
    """Delete-one-cluster jackknife SE of ``sum(log(sum num_j)) - sum(log(sum den_j))``.

    A bin holds about 10 questions, and the sandwich (CR1) SE of ``clustered.log_ratio_se``
    is small there: with token-weighted requests of lognormal length, the bin's test at the
    margin rejected 6.3-7.2 % of the time at alpha 5 % (``benchmarks.accept_bin_calibration``).
    The jackknife, ``(G - 1) / G * sum_g (t_-g - mean t_-g)^2`` over the G leave-one-question-out
    log ratios, is larger by about the leverage of each question and brings it back to alpha.

    Args:
        numerators: arrays of per-row values whose totals are in the numerator.
        denominators: arrays of per-row values whose totals are in the denominator.
        clusters: the cluster (question id) of each row; at least two distinct.
    """
    labels, index = np.unique(np.asarray(clusters), return_inverse=True)
    groups = len(labels)
    if groups < 2:
        raise ValueError(f"{groups} cluster: the jackknife needs at least two questions")
    parts = [np.bincount(index, weights=np.asarray(a, dtype=float), minlength=groups)
             for a in (*numerators, *denominators)]  # fmt: skip
    with np.errstate(divide="ignore"):  # a question holding a whole total leaves log(0)
        left = [np.log(p.sum() - p) for p in parts]
    loo = sum(left[: len(numerators)]) - sum(left[len(numerators) :])
    loo = np.asarray(loo, dtype=float)
    if not np.all(np.isfinite(loo)):
        return math.inf  # one question carries a side's whole total: no estimate of the spread
    return float(math.sqrt((groups - 1) / groups * np.sum((loo - loo.mean()) ** 2)))
