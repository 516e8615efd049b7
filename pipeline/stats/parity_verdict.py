"""The paired parity verdict: a divergence's clustered bounds against a band from measured noise.

A question's sequences share its text and difficulty, so tokens are not independent: the mean is
the ratio of per-question totals and its standard error is clustered by question (the delta
method, as ``clustered.log_ratio_se`` does for accept length). The band is what the baseline shows
against itself (an A/A: the baseline re-scored by a second start) or a trusted reference pair
shows (e.g. flashinfer against fa3), times ``noise_factor``, at least ``floor`` and at most the
absolute ``ceiling`` of ``conf/tolerance``. Why a factor: a candidate exactly as noisy as the A/A
has an upper bound below the A/A's own upper bound only about half the time.

- GO: the candidate's upper bound is inside the band (``<= limit``);
- NO-GO: its lower bound is beyond the band (``> limit``);
- INCONCLUSIVE: otherwise (more sequences narrow the interval).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

# scipy.special, not scipy.stats: the same t quantile without a second of import time on the
# cell's start-up path (the parity phase imports this module).
from scipy import special

from pipeline.stats.parity import Totals

GO, NOGO, INCONCLUSIVE = "GO", "NO-GO", "INCONCLUSIVE"


@dataclass(frozen=True)
class ClusteredMean:
    """A token-weighted mean with one-sided bounds clustered by question."""

    estimate: float
    se: float  # inf with fewer than two questions
    lower: float
    upper: float
    questions: int
    tokens: int


def clustered_mean(by_question: Mapping[str, Totals], confidence: float = 0.95) -> ClusteredMean:
    """The ratio of totals over questions with Student-t bounds on ``questions - 1`` degrees.

    Args:
        by_question: question id -> the metric's sum and token count over its sequences.
        confidence: the level of each one-sided bound (0.95: 5% error on each side).

    Raises:
        ValueError: with no token at all, or a confidence outside (0.5, 1).
    """
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence {confidence}: expected a level in (0.5, 1), e.g. 0.95")
    rows = [t for t in by_question.values() if t.count > 0]
    tokens = sum(t.count for t in rows)
    if not tokens:
        raise ValueError("no scored token: re-score at least one sequence before a verdict")
    estimate = sum(t.total for t in rows) / tokens
    groups = len(rows)
    if groups < 2:
        return ClusteredMean(estimate, math.inf, -math.inf, math.inf, groups, tokens)
    resid = [(t.total - estimate * t.count) / tokens for t in rows]
    se = math.sqrt(groups / (groups - 1) * sum(r * r for r in resid))
    half = float(special.stdtrit(groups - 1, confidence)) * se
    return ClusteredMean(estimate, se, estimate - half, estimate + half, groups, tokens)


@dataclass(frozen=True)
class Band:
    """How far a candidate may be from the baseline, and which measurement set it."""

    limit: float
    source: str  # aa | reference | floor | ceiling
    noise: float  # the larger upper bound of the A/A and the reference (>= 0)


def parity_band(
    aa: ClusteredMean,
    ceiling: float,
    *,
    reference: ClusteredMean | None = None,
    noise_factor: float = 2.0,
    floor: float = 0.0,
) -> Band:
    """The band: ``noise_factor`` x the measured noise, at least ``floor``, at most ``ceiling``.

    Raises:
        ValueError: for a negative ceiling or floor, a floor above the ceiling, or a factor < 1.
    """
    if ceiling < 0 or floor < 0 or floor > ceiling:
        raise ValueError(
            f"parity band: floor {floor} and ceiling {ceiling} must satisfy 0 <= floor <= ceiling"
        )
    if noise_factor < 1:
        raise ValueError(f"parity band: noise_factor {noise_factor} must be >= 1")
    ref_upper = reference.upper if reference is not None else -math.inf
    noise = max(aa.upper, ref_upper, 0.0)
    source = "reference" if ref_upper > aa.upper else "aa"
    limit = noise_factor * noise
    if limit < floor:
        return Band(floor, "floor", noise)
    if limit > ceiling:
        return Band(ceiling, "ceiling", noise)
    return Band(limit, source, noise)


@dataclass(frozen=True)
class ParityVerdict:
    """GO, NO-GO or INCONCLUSIVE with the numbers that decided it."""

    verdict: str
    divergence: ClusteredMean
    band: Band

    @property
    def reason(self) -> str:
        """One line: the bounds against the band."""
        d, b = self.divergence, self.band
        return (
            f"{self.verdict}: divergence {d.estimate:.3g} in [{d.lower:.3g}, {d.upper:.3g}] over "
            f"{d.questions} questions ({d.tokens} tokens), band {b.limit:.3g} ({b.source})"
        )


def parity_verdict(candidate: ClusteredMean, band: Band) -> ParityVerdict:
    """GO when the upper bound is inside the band, NO-GO when the lower bound is beyond it."""
    if candidate.upper <= band.limit:
        kind = GO
    elif candidate.lower > band.limit:
        kind = NOGO
    else:
        kind = INCONCLUSIVE
    return ParityVerdict(kind, candidate, band)


@dataclass(frozen=True)
class ParityTolerance:
    """The parity policy ``conf/tolerance`` will carry as ``parity:`` (the report reads it).

    ``ceiling`` defaults to SGLang's own gate (``kl_div < 0.002`` on LongBench-V2 prompts, issue
    39); ``floor`` 0 leaves the band to measured noise: with bit-identical A/A starts, a kernel
    that legitimately differs needs a ``reference`` pair (a trusted backend against the baseline).
    """

    metric: str = "kl_topk"  # one of stats.parity.METRICS
    ceiling: float = 0.002
    floor: float = 0.0
    noise_factor: float = 2.0
    confidence: float = 0.95


def judge(
    policy: ParityTolerance,
    candidate: ClusteredMean,
    aa: ClusteredMean,
    reference: ClusteredMean | None = None,
) -> ParityVerdict:
    """The verdict of ``candidate`` against the band ``policy`` builds from the A/A (and pair)."""
    band = parity_band(
        aa,
        policy.ceiling,
        reference=reference,
        noise_factor=policy.noise_factor,
        floor=policy.floor,
    )
    return parity_verdict(candidate, band)
