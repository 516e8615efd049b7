"""Monte Carlo check of the sign-off rules on GPQA-diamond-shaped paired data.

The benchmark: 198 questions whose success probabilities are either nearly 0 or nearly 1 (four in
five) or spread evenly over [0.15, 0.85] (one in five, the "uncertain" ones), set so that the mean
accuracy is about 0.72 and one repeat's accuracy has a standard deviation of 1.5 points, as SGLang
PR #32272 saw on Qwen3-Next-80B. The question set is fixed (it is the benchmark); each replication
draws every (question, repeat) outcome of the baseline and of the candidate independently, as two
backends sampling at temperature > 0 do.

A regression of ``drop`` (mean over questions) takes one of two shapes:
- ``proportional``: every question loses in proportion to its success probability,
  ``p' = p (1 - drop / mean(p))``;
- ``concentrated``: only the uncertain questions lose, in proportion to their probability.

The true drop is therefore exact on this question set, and interval coverage is measured
against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from pipeline.stats.noninferiority import GO, INCONCLUSIVE, NO_GO, margin_test, verdicts
from pipeline.stats.sequential import SequentialDesign, level_at

from .threshold import trtllm_band

SHAPES = ("proportional", "concentrated")


@dataclass(frozen=True)
class Benchmark:
    """Per-question success probabilities and which questions are uncertain."""

    p: np.ndarray
    uncertain: np.ndarray


def gpqa_like(
    n: int = 198, mean: float = 0.72, uncertain_share: float = 0.2, repeat_sd: float = 0.015
) -> Benchmark:
    """The GPQA-diamond-shaped benchmark described in the module docstring.

    The nearly-certain questions sit at ``eps`` or ``1 - eps`` with ``eps`` solved so that one
    repeat's accuracy has standard deviation ``repeat_sd``.
    """
    n_unc = round(uncertain_share * n)
    p_unc = np.linspace(0.15, 0.85, n_unc)
    n_cert = n - n_unc
    room = (repeat_sd * n) ** 2 - float(np.sum(p_unc * (1 - p_unc)))
    if room <= 0:
        raise ValueError(f"repeat_sd={repeat_sd} is too small for {n_unc} uncertain questions")
    eps = float(optimize.brentq(lambda e: n_cert * e * (1 - e) - room, 0.0, 0.5))
    n_right = round((mean * n - p_unc.sum() - n_cert * eps) / (1 - 2 * eps))
    p = np.concatenate([p_unc, np.full(n_right, 1 - eps), np.full(n_cert - n_right, eps)])
    return Benchmark(p=p, uncertain=np.arange(n) < n_unc)


def one_repeat_sd(p: np.ndarray) -> float:
    """Standard deviation of one repeat's accuracy over the benchmark."""
    return float(np.sqrt(np.sum(p * (1 - p))) / len(p))


def with_drop(bench: Benchmark, drop: float, shape: str) -> np.ndarray:
    """Candidate probabilities whose mean is ``drop`` below the benchmark's, in ``shape``."""
    p = bench.p
    if shape == "proportional":
        return p * (1 - drop / p.mean())
    if shape == "concentrated":
        share = drop * len(p) / p[bench.uncertain].sum()
        if share >= 1:
            raise ValueError(f"a drop of {drop} cannot be concentrated on the uncertain questions")
        return np.where(bench.uncertain, p * (1 - share), p)
    raise ValueError(f"shape={shape!r}: use one of {SHAPES}")


@dataclass
class Tally:
    """Counts of verdicts (and interval coverage, repeats used) over replications."""

    counts: dict[str, int] = field(default_factory=lambda: {GO: 0, NO_GO: 0, INCONCLUSIVE: 0})
    covered: int | None = None
    repeats_used: float = 0.0
    reps: int = 0

    def add(
        self,
        verdict_array: np.ndarray,
        covered: np.ndarray | None = None,
        repeats: np.ndarray | float = 0.0,
    ) -> None:
        """Fold one block of replications in."""
        for key in self.counts:
            self.counts[key] += int(np.sum(verdict_array == key))
        if covered is not None:
            self.covered = (self.covered or 0) + int(np.sum(covered))
        self.repeats_used += float(np.sum(np.broadcast_to(repeats, verdict_array.shape)))
        self.reps += len(verdict_array)

    def rate(self, key: str) -> float:
        """Share of replications with verdict ``key``."""
        return self.counts[key] / self.reps

    @property
    def coverage(self) -> float | None:
        """Share of replications whose 95% interval held the true drop (None: no interval)."""
        return None if self.covered is None else self.covered / self.reps

    @property
    def mean_repeats(self) -> float:
        """Average repeats per question the rule used."""
        return self.repeats_used / self.reps


def _paired(
    cum_a: np.ndarray, cum_b: np.ndarray, k: int, margin: float, alpha: float, true_drop: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    diffs = (cum_b[:, k - 1] - cum_a[:, k - 1]) / k
    n = diffs.shape[-1]
    test = margin_test(-diffs.mean(-1), diffs.std(-1, ddof=1) / np.sqrt(n), n - 1, margin, alpha)
    covered = (test.ci95_low <= true_drop) & (true_drop <= test.ci95_high)
    return test.p_go, test.p_nogo, covered, diffs


def _unpaired(
    cum_a: np.ndarray, cum_b: np.ndarray, k: int, margin: float, alpha: float
) -> np.ndarray:
    # Each run alone: accuracy and its SE clustered by question; the runs treated as independent.
    acc = [c[:, k - 1] / k for c in (cum_a, cum_b)]
    n = acc[0].shape[-1]
    se = np.sqrt(sum(a.var(-1, ddof=1) / n for a in acc))
    test = margin_test(acc[0].mean(-1) - acc[1].mean(-1), se, n - 1, margin, alpha)
    return verdicts(test.p_go, test.p_nogo, alpha)


def _trtllm(cum_a: np.ndarray, cum_b: np.ndarray, k: int, n_samples: int) -> np.ndarray:
    # Reference = the baseline run's accuracy; pass iff the candidate is within the band.
    n = cum_a.shape[-1]
    ref, acc = cum_a[:, k - 1].sum(-1) / (n * k), cum_b[:, k - 1].sum(-1) / (n * k)
    return np.where(acc >= ref - trtllm_band(n_samples), GO, NO_GO).astype(object)


def _sequential(
    cum_a: np.ndarray, cum_b: np.ndarray, design: SequentialDesign, true_drop: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    reps = cum_a.shape[0]
    out = np.full(reps, INCONCLUSIVE, dtype=object)
    used = np.full(reps, float(design.max_repeats))
    covered = np.zeros(reps, dtype=bool)
    open_ = np.ones(reps, dtype=bool)
    for look in range(1, design.n_looks + 1):
        k = design.repeats_at(look)
        p_go, p_nogo, cov, _ = _paired(cum_a, cum_b, k, design.margin, design.alpha, true_drop)
        v = verdicts(p_go, p_nogo, level_at(design, look))
        stop = open_ & ((v != INCONCLUSIVE) | (look == design.n_looks))
        out[stop], used[stop], covered[stop] = v[stop], k, cov[stop]
        open_ &= ~stop
    return out, used, covered


@dataclass(frozen=True)
class Setup:
    """What to simulate: margin, level, fixed repeats, the sequential design, replications."""

    margin: float = 0.02
    alpha: float = 0.05
    fixed_repeats: tuple[int, ...] = (8, 16)
    design: SequentialDesign = field(default_factory=lambda: SequentialDesign(16, 2, 0.05, 0.02))
    max_repeats: int = 16
    reps: int = 20000
    block: int = 2000
    seed: int = 20260724


PAIRED, UNPAIRED = "paired fixed", "unpaired (clustered SE per run)"
TRT_QUESTIONS, TRT_SAMPLES = (
    "TensorRT-LLM threshold, n=questions",
    "TensorRT-LLM threshold, n=samples",
)
FAMILIES = (PAIRED, UNPAIRED, TRT_QUESTIONS, TRT_SAMPLES)


def key(family: str, repeats: int) -> str:
    """Label of a fixed-repeat rule in ``simulate``'s result."""
    return f"{family}, {repeats} repeat{'s' if repeats != 1 else ''}"


def sequential_key(design: SequentialDesign) -> str:
    """Label of the sequential rule in ``simulate``'s result."""
    return f"paired sequential, rounds of {design.repeats_per_round} up to {design.max_repeats}"


def method_names(setup: Setup) -> list[str]:
    """The rules the summary table shows, in display order."""
    k0 = setup.fixed_repeats[0]
    return [
        *(key(PAIRED, k) for k in setup.fixed_repeats),
        sequential_key(setup.design),
        key(UNPAIRED, k0),
        key(TRT_QUESTIONS, 1),
        key(TRT_QUESTIONS, k0),
        key(TRT_SAMPLES, k0),
    ]


def _fixed_block(
    cum_a: np.ndarray, cum_b: np.ndarray, k: int, setup: Setup, true_drop: float
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    n = cum_a.shape[-1]
    p_go, p_nogo, cov, _ = _paired(cum_a, cum_b, k, setup.margin, setup.alpha, true_drop)
    return {
        key(PAIRED, k): (verdicts(p_go, p_nogo, setup.alpha), cov),
        key(UNPAIRED, k): (_unpaired(cum_a, cum_b, k, setup.margin, setup.alpha), None),
        key(TRT_QUESTIONS, k): (_trtllm(cum_a, cum_b, k, n), None),
        key(TRT_SAMPLES, k): (_trtllm(cum_a, cum_b, k, n * k), None),
    }


def simulate(
    p_base: np.ndarray, p_cand: np.ndarray, setup: Setup, rng: np.random.Generator
) -> dict[str, Tally]:
    """Verdict rates of every rule on the same replications.

    Returns:
        Label -> tally: ``key(family, k)`` for every family and every k in 1..max_repeats, and
        ``sequential_key(setup.design)``.
    """
    tallies: dict[str, Tally] = {}
    true_drop = float(p_base.mean() - p_cand.mean())
    for start in range(0, setup.reps, setup.block):
        b = min(setup.block, setup.reps - start)
        shape = (b, setup.max_repeats, len(p_base))
        cum_a = np.cumsum(rng.random(shape) < p_base, axis=1, dtype=np.int16)
        cum_b = np.cumsum(rng.random(shape) < p_cand, axis=1, dtype=np.int16)
        for k in range(1, setup.max_repeats + 1):
            for label, (v, cov) in _fixed_block(cum_a, cum_b, k, setup, true_drop).items():
                tallies.setdefault(label, Tally()).add(v, cov, k)
        seq, used, cov = _sequential(cum_a, cum_b, setup.design, true_drop)
        tallies.setdefault(sequential_key(setup.design), Tally()).add(seq, cov, used)
    return tallies


def scenarios(margin: float) -> list[tuple[str, float, str]]:
    """(label, true drop, shape) of the scenarios the issue asks about."""
    out: list[tuple[str, float, str]] = [("no drop", 0.0, "proportional")]
    for drop in (margin, 0.04, 0.05):
        for shape in SHAPES:
            out.append((f"{drop * 100:g}-pt drop, {shape}", drop, shape))
    return out


def min_repeats(
    tallies: dict[str, Tally], family: str, verdict: str, target: float, ks: Sequence[int]
) -> int | None:
    """Smallest repeat count of ``family`` whose rate of ``verdict`` reaches ``target``."""
    for k in ks:
        if tallies[key(family, k)].rate(verdict) >= target:
            return k
    return None
