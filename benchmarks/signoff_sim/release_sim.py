"""Monte Carlo check of the release sign-off through the report's own decision code.

Each replication draws a baseline run and ``m`` candidate runs of a fixed question set as
``(question, repeat)`` outcome arrays (NaN = an errored request), then decides them with the
functions the report calls: ``signoff.accuracy_evidence`` / ``broken_prompts`` per cell (what
``versus_baseline`` computes from samples), ``signoff.verdict_of`` at ``signoff.look_levels``
per sequential look (what ``sequential_run.look`` stops on), ``sequential_pvalues`` (how the
report reads a stopped candidate) and ``release.family_pvalues`` / ``family_verdicts`` /
``release_verdict`` across cells (what ``verdicts.finalize`` and the exit code apply).

The question set (the issue's generator): 198 questions whose success probabilities are the
quantiles of a Beta law with mean 0.70 and one repeat's accuracy SD 1.5 points. A drop ``d``
takes one of three shapes: ``diffuse`` (every question loses in proportion, ``p (1 - d/mean)``),
``uncertain`` (only the questions with 0.15 < p < 0.85 lose, in proportion) and ``few break``
(questions the baseline nearly always gets right go to always wrong until ``d`` is lost).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from pipeline.stats.anytime import AnytimeEvidence, anytime_verdict
from pipeline.stats.nogo_split import nogo_shares, on_family_scale
from pipeline.stats.noninferiority import GO, NO_GO
from pipeline.stats.outcomes import repeats_vary
from pipeline.stats.release import family_pvalues, family_verdicts, release_verdict
from pipeline.stats.sequential import SequentialDesign
from pipeline.stats.sequential_pvalues import bonferroni_over_looks, stagewise
from pipeline.stats.signoff import (
    Outcomes,
    accuracy_evidence,
    broken_prompts,
    look_levels,
    verdict_of,
)

SHAPES = ("diffuse", "uncertain", "few break")
QUESTIONS = (198, 0.70, 0.015)  # the question set: n, mean, one repeat's accuracy SD


def beta_questions(n: int = 198, mean: float = 0.70, repeat_sd: float = 0.015) -> np.ndarray:
    """Success probabilities: the ``n`` mid-quantiles of the Beta law with that mean and SD."""
    var = mean * (1 - mean) - n * repeat_sd**2  # E[p(1-p)] = mean(1-mean) - Var(p)
    size = mean * (1 - mean) / var - 1
    return np.sort(stats.beta.ppf((np.arange(n) + 0.5) / n, mean * size, (1 - mean) * size))


def with_drop(p: np.ndarray, drop: float, shape: str) -> np.ndarray:
    """The candidate's probabilities: ``drop`` lower on average, in ``shape``."""
    if drop == 0:
        return p.copy()
    if shape == "diffuse":
        return p * (1 - drop / p.mean())
    if shape == "uncertain":
        mid = (p > 0.15) & (p < 0.85)
        return np.where(mid, p * (1 - drop * len(p) / p[mid].sum()), p)
    if shape == "few break":
        order = np.flatnonzero(p > 0.9)[::-1][::3]  # every third of the nearly-always-right
        lost = np.cumsum(p[order]) / len(p)
        broken = order[: int(np.searchsorted(lost, drop - 1e-12)) + 1]
        out = p.copy()
        out[broken] = 0.0
        return out
    raise ValueError(f"shape={shape!r}: use one of {SHAPES}")


@dataclass(frozen=True)
class Condition:
    """One row of the tables: truth, errors, candidates and design."""

    drop: float = 0.0  # of the first candidate; the others are clean
    shape: str = "diffuse"
    base_errors: float = 0.0
    cand_errors: float = 0.0
    candidates: int = 1
    design: SequentialDesign | None = None  # None: fixed ``repeats``
    repeats: int = 8
    questions: tuple[int, float, float] = QUESTIONS  # beta_questions' (n, mean, repeat_sd)
    # "random": each request errors at the rate alone; "on wrong": the candidate's errors fall
    # only on requests it got wrong (timeouts on runaway generations), at the same overall rate.
    error_mode: str = "random"
    # The layout: ``baselines`` baseline cells, the candidates split evenly over them (the
    # release sign-off has a baseline per KV dtype: 4 baselines x 2 candidates); 1: all share one.
    baselines: int = 1


@dataclass
class Outcome:
    """Per replication: the first candidate's verdict, the release's, repeats used.

    ``alone`` is the first candidate's verdict on its own: where a sequential one stopped (or
    GO / NO-GO / INCONCLUSIVE at alpha, fixed design), before any correction across cells.
    ``broke``: the report's broken-prompt check of the first candidate FAILed (the check alone).
    ``repeats`` counts every baseline at all its repeats (``sequential.baseline_runs=first``);
    ``beside`` each at the repeats its last paired candidate stopped at (``beside``: the
    baseline stops on the round its candidates' last look needed; the verdicts are the same).
    """

    first: np.ndarray
    release: np.ndarray
    repeats: np.ndarray
    alone: np.ndarray
    broke: np.ndarray
    beside: np.ndarray


def _outcomes(rng: np.random.Generator, errors: np.random.Generator, p: np.ndarray,
              lead: tuple[int, ...], k: int, err: float, on_wrong: bool = False,
              ) -> np.ndarray:  # fmt: skip
    # Outcomes and error masks come from separate streams: the same outcomes with and without
    # errors (common random numbers), so a table shows what the errors alone change.
    x = (rng.random((*lead, len(p), k)) < p[:, None]).astype(float)
    draw = errors.random(x.shape)
    mask = (x == 0) & (draw < err / max(1 - p.mean(), 1e-9)) if on_wrong else draw < err
    x[mask] = np.nan
    return x


def _cells(base: np.ndarray, cand: np.ndarray, margin: float, alpha: float) -> Decided:
    # The report's per-cell numbers: evidence on answered pairs, broken-prompt p-value.
    o = Outcomes(base, cand, np.ones(cand.shape[:-1], dtype=bool), True)
    ev = accuracy_evidence(o, margin, alpha)
    return ev.p_go, ev.p_nogo, broken_prompts(o, alpha).p_cell


def _report(
    p_go: np.ndarray, p_nogo: np.ndarray, p_broken: np.ndarray, level: np.ndarray, alpha: float,
    split: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    # verdicts.finalize across the cells (last axis), then the cell and release verdicts (and
    # which cells' broken-prompt check failed).
    scale = alpha / level
    go, nogo = family_pvalues(p_go, p_nogo, scale, True, split)
    acc = family_verdicts(go, nogo, alpha)
    _, broken = family_pvalues(np.full_like(p_broken, np.nan), p_broken, scale, True, split)
    cell = np.where(broken <= alpha, NO_GO, acc)
    return cell, release_verdict(cell), broken <= alpha


def run_condition(
    c: Condition, reps: int, seed: int, margin: float = 0.02, alpha: float = 0.05,
    block: int = 250,
) -> Outcome:  # fmt: skip
    """Simulate ``reps`` replications of condition ``c``.

    The outcome stream depends on the seed and the truth (not the error rates), so conditions
    that differ only in errors share their outcomes.
    """
    p = beta_questions(*c.questions)
    probs = [with_drop(p, c.drop, c.shape)] + [p] * (c.candidates - 1)
    key: tuple[object, ...] = (c.drop, c.shape, c.candidates, c.design, c.repeats)
    if c.questions != QUESTIONS:  # the set keeps the streams of the committed tables
        key += (c.questions,)
    if c.baselines != 1:
        key += (c.baselines,)
    # The key spells a design as it did before ``broken_share``: a design with and without the
    # NO-GO split sees the same data, that of the committed tables (common random numbers).
    truth = zlib.crc32(re.sub(r", broken_share=[^,)]*", "", repr(key)).encode())
    rng = np.random.default_rng([seed, truth])
    errors = np.random.default_rng([seed, truth, 1])
    parts = []
    for start in range(0, reps, block):
        b = min(block, reps - start)
        parts.append(_block(c, b, p, probs, (rng, errors), margin, alpha))
    return Outcome(*(np.concatenate([x[i] for x in parts]) for i in range(6)))


Rngs = tuple[np.random.Generator, np.random.Generator]
Decided = tuple[np.ndarray, ...]


def _block(
    c: Condition, b: int, p: np.ndarray, probs: list[np.ndarray], rngs: Rngs, margin: float,
    alpha: float,
) -> Decided:  # fmt: skip
    k_max = c.design.max_repeats if c.design else c.repeats
    if c.candidates % c.baselines:
        raise ValueError(f"{c.candidates} candidates do not split over {c.baselines} baselines")
    base = _outcomes(*rngs, p, (b, c.baselines), k_max, c.base_errors)
    # Candidate j is paired with baseline j // (candidates per baseline).
    base = base[:, np.arange(c.candidates) * c.baselines // c.candidates]
    on_wrong = c.error_mode == "on wrong"
    cand = np.stack(
        [_outcomes(*rngs, q, (b,), k_max, c.cand_errors, on_wrong) for q in probs], axis=1
    )
    if c.design is None:
        p_go, p_nogo, p_br = _cells(base, cand, margin, alpha)
        level = np.full(p_go.shape, alpha)
        used = np.full(p_go.shape, float(c.repeats))
        mean, broken = nogo_shares()
        alone = verdict_of(p_go, p_nogo, p_br, alpha, alpha * broken, alpha * mean)
    else:
        # The family is the sweep's candidates, known before the first look.
        anytime = c.design.statistic == "eprocess"
        # Group-sequential conditions run as cells write them since the null-variance SE.
        design = replace(c.design, family=c.candidates, statistic=c.design.statistic if anytime
                         else "null")  # fmt: skip
        run = _anytime if anytime else _sequential
        p_go, p_nogo, p_br, level, used, alone = run(design, base, cand, margin, alpha)
    split = c.candidates if c.design is not None else 1
    # The report reads each NO-GO check on its cell's family scale (stopped_cells.nogo_split_of).
    mean, broken = nogo_shares(c.design.broken_share) if c.design else nogo_shares()
    p_nogo, p_br = on_family_scale(p_nogo, mean), on_family_scale(p_br, broken)
    cell, release, broke = _report(p_go, p_nogo, p_br, level, alpha, split)
    # Baselines first: each runs all its repeats; each candidate the repeats its rule used.
    # Beside: a baseline stops with the last candidate paired with it (pipeline/measuring/
    # sequential_beside.py; a fixed design's candidates all use k_max, so it is the same).
    first = used.sum(axis=1) + k_max * c.baselines
    per_base = used.reshape(len(used), c.baselines, c.candidates // c.baselines).max(axis=-1)
    beside = used.sum(axis=1) + per_base.sum(axis=1)
    return cell[:, 0], release, first, alone[:, 0], broke[:, 0], beside


def _sequential(
    design: SequentialDesign, base: np.ndarray, cand: np.ndarray, margin: float, alpha: float
) -> tuple[np.ndarray, ...]:
    # sequential_run.look at every look (the candidate's first k repeats against the
    # baseline's), then what the report reads from the look each candidate stopped at.
    shape = cand.shape[:2]
    found = [np.full(shape, np.nan) for _ in range(3)]
    stopped_at = np.full(shape, design.n_looks)
    decision = np.full(shape, "INCONCLUSIVE", dtype=object)
    open_ = np.ones(shape, dtype=bool)
    for look in range(1, design.n_looks + 1):
        k = design.repeats_at(look)
        p_go, p_nogo, p_br = _cells(base[..., :k], cand[..., :k], margin, alpha)
        decided = verdict_of(p_go, p_nogo, p_br, *look_levels(design, look))
        stop = open_ & ((decided != "INCONCLUSIVE") | (look == design.n_looks))
        for arr, value in zip(found, (p_go, p_nogo, p_br), strict=True):
            arr[stop] = np.broadcast_to(value, shape)[stop]
        stopped_at[stop], decision[stop] = look, np.broadcast_to(decided, shape)[stop]
        open_ &= ~stop
        if not open_.any():
            break
    go_d, nogo_d = design.side(True), design.side(False)
    p_go, p_nogo = stagewise(go_d, stopped_at, found[0]), stagewise(nogo_d, stopped_at, found[1])
    p_br = bonferroni_over_looks(nogo_d, stopped_at, found[2])
    used = stopped_at * float(design.repeats_per_round)
    return p_go, p_nogo, p_br, np.full(shape, alpha), used, decision


def _anytime(
    design: SequentialDesign, base: np.ndarray, cand: np.ndarray, margin: float, alpha: float,
    greedy: bool = False,
) -> tuple[np.ndarray, ...]:  # fmt: skip
    # sequential_run.look at every look: ``anytime_evidence`` on the first k repeats, decided
    # by ``anytime_verdict``; the report reads the same evidence. Each look reads the fixed
    # design's check on the first k repeats at its share of alpha (``design.schedule``: which
    # looks spend, how much per check); the running minima are ``look_pvalues``' and
    # ``broken_over_looks``' (a unit test checks both). ``greedy``: the runner's copies stop
    # (``sequential_run.copies_only``): an undecided cell whose repeats vary on neither side ends.
    shape = cand.shape[:2]
    asked = np.ones(cand.shape[:-1], dtype=bool)
    p_go, p_nogo, p_br = (np.ones(shape) for _ in range(3))
    stopped_at = np.full(shape, design.n_looks)
    decision = np.full(shape, "INCONCLUSIVE", dtype=object)
    open_ = np.ones(shape, dtype=bool)
    running = [np.ones(shape) for _ in range(3)]
    plan = design.schedule
    for look in range(1, design.n_looks + 1):
        k = design.repeats_at(look)
        # Only cells still running look again (the CPU), and only where the look spends.
        shares = (plan.go(look), plan.nogo(look), plan.broken(look))
        if any(shares):
            part = Outcomes(base[open_][..., :k], cand[open_][..., :k], asked[open_], True)
            ev_look = accuracy_evidence(part, margin, alpha)
            found = (ev_look.p_go, ev_look.p_nogo, broken_prompts(part, alpha * shares[2]).p_cell)
            for arr, new, share in zip(running, found, shares, strict=True):
                if share > 0:
                    arr[open_] = np.fmin(arr[open_], new / share)
        ev = AnytimeEvidence(*(np.minimum(r, 1.0) for r in running), np.full(shape, float(k)))
        decided = anytime_verdict(ev, alpha, design.family, design.broken_share)
        stop = open_ & ((decided != "INCONCLUSIVE") | (look == design.n_looks))
        if greedy and k >= 2:
            stop |= open_ & ~repeats_vary(base[..., :k], cand[..., :k])
        for arr, value in zip((p_go, p_nogo, p_br), (ev.p_go, ev.p_nogo, ev.p_broken),
                              strict=True):  # fmt: skip
            arr[stop] = value[stop]
        stopped_at[stop], decision[stop] = look, decided[stop]
        open_ &= ~stop
        if not open_.any():
            break
    used = stopped_at * float(design.repeats_per_round)
    return p_go, p_nogo, p_br, np.full(shape, alpha), used, decision


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score 95% interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    phat = successes / n
    denom = 1 + z**2 / n
    centre = (phat + z**2 / (2 * n)) / denom
    half = z * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / denom
    return float(centre - half), float(centre + half)


def rate(verdicts: np.ndarray, value: str | bool) -> tuple[float, float, float]:
    """Share of ``value`` and its Wilson interval."""
    hits, n = int(np.sum(verdicts == value)), len(verdicts)
    low, high = wilson(hits, n)
    return hits / n, low, high


__all__ = ["GO", "NO_GO", "QUESTIONS", "Condition", "Outcome", "beta_questions", "rate",
           "run_condition", "wilson", "with_drop"]  # fmt: skip
