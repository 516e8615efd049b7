"""Is the by-bin accept-length check (``pipeline.stats.by_bin.accept_by_bin``) calibrated?

    python -m benchmarks.accept_bin_calibration [--reps 2000] [--seed 0]

Two variants serve the same questions; each request's accept length is an independent draw of
SGLang's chain model (``pipeline.simserver.spec``: ``S`` drafts accepted position by position
with ``p`` solving ``1 + p + ... + p^S = AL``) around the question's own mean, with a
request-level wobble of that mean and a lognormal completion length. 8 bins x 10 questions,
1 or 4 repeats, band 5 % and alpha 0.05 (the tolerance file's defaults). The check's own
function decides; reported per shape, with a 95 % Wilson interval:

- clean (same means): share of runs NO-GO in any bin (the family-wise false alarm, <= alpha);
- at the margin (one bin drops exactly ``band``): share of runs that bin's raw (un-Holm)
  NO-GO p is <= alpha (a calibrated test: about alpha) and that its GO p is (false GO, <= alpha);
- power: share of runs NO-GO when one bin drops 10 % / 20 %.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np

from pipeline.simserver.spec import chain_probability
from pipeline.stats.by_bin import AcceptPairs, ByBin, accept_by_bin
from pipeline.stats.noninferiority import NO_GO

BINS, QUESTIONS, STEPS, BAND, ALPHA = 8, 10, 3, 0.05, 0.05


@dataclass(frozen=True)
class Shape:
    """How a run is drawn: repeats, the request-level wobble of AL, the completions' length."""

    repeats: int
    wobble: float = 0.10  # SD of log AL between requests of one question (sampling differs)
    median_tokens: float = 250.0
    length_sigma: float = 0.7


_GRID = np.linspace(1.0, STEPS + 1.0, 401)
_P = np.array([chain_probability(float(a), STEPS) for a in _GRID])


# The last two: heavier-tailed completion lengths (MT-Bench's writing against its math), and short
# ones; a few long requests then carry a bin's token-weighted ratio.
SHAPES = (Shape(1), Shape(4), Shape(1, wobble=0.0), Shape(4, wobble=0.0),
          Shape(1, length_sigma=1.2), Shape(1, median_tokens=40.0, length_sigma=0.8))  # fmt: skip


def _step_probabilities(al: np.ndarray) -> np.ndarray:
    # P(k correct drafts) of the chain, per request: P(k >= i) = p^i for i <= S.
    p = np.interp(al, _GRID, _P)
    at_least = np.stack([p**i for i in range(STEPS + 1)] + [np.zeros_like(p)], axis=1)
    probs: np.ndarray = at_least[:, :-1] - at_least[:, 1:]
    out: np.ndarray = probs / probs.sum(axis=1, keepdims=True)
    return out


def _side(rng: np.random.Generator, means: np.ndarray, shape: Shape) -> tuple[np.ndarray, ...]:
    """Tokens and verify steps of every request (rows: question-major, then repeat)."""
    targets = np.repeat(means, shape.repeats) * np.exp(
        rng.normal(0.0, shape.wobble, len(means) * shape.repeats)
    )
    targets = np.clip(targets, 1.0, STEPS + 1.0)
    lengths = np.clip(rng.lognormal(math.log(shape.median_tokens), shape.length_sigma,
                                    len(targets)), 16, 4096)  # fmt: skip
    verify = np.maximum(1, np.round(lengths / targets)).astype(int)
    probs = _step_probabilities(targets)
    counts = rng.multinomial(verify, probs)
    tokens = verify + counts @ np.arange(STEPS + 1)
    return tokens.astype(float), verify.astype(float)


def draw_pairs(rng: np.random.Generator, shape: Shape, drop: float, in_bin: int = 0) -> AcceptPairs:
    """One run: per-question means 1.6-3.6, the candidate's ``in_bin`` scaled by ``1 - drop``."""
    means = rng.uniform(1.6, 3.6, BINS * QUESTIONS)
    bins = np.repeat(np.arange(BINS), QUESTIONS)
    cand_means = np.where(bins == in_bin, means * (1 - drop), means)
    cb, vb = _side(rng, means, shape)
    cc, vc = _side(rng, cand_means, shape)
    questions = [f"q{i}" for i in range(BINS * QUESTIONS) for _ in range(shape.repeats)]
    labels = [f"bin{i // QUESTIONS}" for i in range(BINS * QUESTIONS) for _ in range(shape.repeats)]
    return AcceptPairs(cb, vb, cc, vc, questions, labels)


def wilson(hits: int, n: int) -> tuple[float, float]:
    """95 % Wilson interval of a proportion."""
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(hits: int, n: int) -> str:
    """``hits / n`` as a percentage with its Wilson interval."""
    low, high = wilson(hits, n)
    return f"{100 * hits / n:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


def run_shape(rng: np.random.Generator, shape: Shape, reps: int) -> dict[str, str]:
    """The four rates of one shape over ``reps`` runs each."""
    checks: dict[str, int] = {"clean": 0, "margin_nogo": 0, "margin_go": 0, "p10": 0, "p20": 0}
    for _ in range(reps):
        checks["clean"] += accept_by_bin(draw_pairs(rng, shape, 0.0), BAND, ALPHA).verdict == NO_GO
        found = _raw(draw_pairs(rng, shape, BAND))
        checks["margin_nogo"] += found[0] <= ALPHA
        checks["margin_go"] += found[1] <= ALPHA
        for key, drop in (("p10", 0.10), ("p20", 0.20)):
            checks[key] += accept_by_bin(draw_pairs(rng, shape, drop), BAND, ALPHA).verdict == NO_GO
    return {k: rate(v, reps) for k, v in checks.items()}


def _raw(pairs: AcceptPairs) -> tuple[float, float]:
    # Bin 0 alone (a family of one): its raw NO-GO and GO p-values.
    rows = np.asarray(pairs.labels) == "bin0"
    one = AcceptPairs(pairs.base_tokens[rows], pairs.base_verify[rows], pairs.cand_tokens[rows],
                      pairs.cand_verify[rows], list(np.asarray(pairs.questions)[rows]),
                      list(np.asarray(pairs.labels)[rows]))  # fmt: skip
    found: ByBin = accept_by_bin(one, BAND, ALPHA)
    return found.checks[0].p_nogo, found.checks[0].p_go


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"band {BAND}, alpha {ALPHA}, {BINS} bins x {QUESTIONS} questions, {args.reps} runs")
    print(
        "| repeats | wobble | tokens (median, log-sd) | clean: NO-GO any bin "
        "| margin: raw NO-GO | margin: GO "
        "| 10 % drop: NO-GO | 20 % drop: NO-GO |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for shape in SHAPES:
        r = run_shape(rng, shape, args.reps)
        print(
            f"| {shape.repeats} | {shape.wobble} | {shape.median_tokens:g}, {shape.length_sigma:g} "
            f"| {r['clean']} | {r['margin_nogo']} "
            f"| {r['margin_go']} | {r['p10']} | {r['p20']} |"
        )


if __name__ == "__main__":
    main()
