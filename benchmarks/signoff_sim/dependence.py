"""Answers whose repeats are not independent: greedy server starts and copied repeats.

Three ways a side's ``(question, repeat)`` outcomes are drawn, every repeat of question ``i``
right with the same probability (its marginal), so the truth (the mean difference) is the same
whatever the dependence:

- ``independent``: every repeat a fresh draw (sampling at temperature > 0 with fresh seeds);
- ``copied`` at ``rho``: repeat ``r > 1`` is a copy of repeat 1 with probability ``rho``, else a
  fresh draw (sticky answers; ``rho = 1``: every repeat a copy);
- ``greedy``: one greedy answer per question, right with probability ``p_i`` (a draw per
  replication: the model's own answer), shared by both sides; each server start flips each
  question's answer with probability ``phi`` (``2 phi (1 - phi)`` = the share of questions two
  starts disagree on: 3.6% measured live on SGLang), and every repeat within a start is a copy.
  A drop ``d`` turns each of the candidate start's right answers wrong with probability
  ``d / (its expected accuracy)``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import numpy as np

from pipeline.stats.nogo_split import BROKEN_SHARE, nogo_shares
from pipeline.stats.noninferiority import GO
from pipeline.stats.sequential import SequentialDesign
from pipeline.stats.signoff import Outcomes, accuracy_evidence, broken_prompts, verdict_of

from .release_sim import _anytime, beta_questions, with_drop

FLIPS = 0.036  # share of greedy answers two starts of one engine disagree on (live, SGLang)
MARGIN, ALPHA = 0.02, 0.05


def start_flip(disagree: float = FLIPS) -> float:
    """``phi``: each start's flip probability so that two starts disagree on ``disagree``."""
    return float((1 - np.sqrt(1 - 2 * disagree)) / 2)


def copied(rng: np.random.Generator, p: np.ndarray, lead: tuple[int, ...], k: int,
           rho: float) -> np.ndarray:  # fmt: skip
    """``(*lead, n, k)`` outcomes: repeat 1 fresh, each later one repeat 1's copy w.p. ``rho``."""
    fresh = (rng.random((*lead, len(p), k)) < p[:, None]).astype(float)
    if rho <= 0:
        return fresh
    copy = rng.random(fresh.shape) < rho
    copy[..., 0] = False
    out: np.ndarray = np.where(copy, fresh[..., :1], fresh)
    return out


def greedy_pair(rng: np.random.Generator, p: np.ndarray, lead: tuple[int, ...], k: int,
                drop: float, disagree: float = FLIPS) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(base, cand)`` of two greedy starts: shared greedy answers, per-start flips, copies.

    ``drop``: the candidate start's right answers go wrong with probability ``drop / acc``,
    ``acc`` its expected accuracy, so its expected accuracy is ``drop`` lower.
    """
    phi = start_flip(disagree)
    answer = rng.random((*lead, len(p))) < p
    sides = [answer ^ (rng.random(answer.shape) < phi) for _ in range(2)]
    if drop:
        acc = float(np.mean(p * (1 - phi) + (1 - p) * phi))
        sides[1] = sides[1] & ~(rng.random(answer.shape) < drop / acc)
    base, cand = (np.repeat(s[..., None], k, axis=-1).astype(float) for s in sides)
    return base, cand


SETS = ("issue 14's set", "bimodal 40/40/20", "48 near-certain")


def question_set(name: str) -> np.ndarray:
    """Success probabilities of a question set by name (``SETS``)."""
    if name == SETS[0]:
        return beta_questions()
    if name == SETS[1]:  # 40% near-certain, 40% near-impossible, 20% coin flips (198 q)
        return np.concatenate([np.full(79, 0.98), np.full(79, 0.02), np.full(40, 0.5)])
    if name == SETS[2]:  # synth_retrieval as measured live (benchmarks/results/live-h200)
        return beta_questions(48, 0.964, 0.0172)
    raise ValueError(f"question set {name!r}: use one of {SETS}")


@dataclass(frozen=True)
class Dependent:
    """One row: how repeats depend, the truth, the question set and the design."""

    dependence: str = "independent"  # independent | copied | greedy
    rho: float = 0.0  # copied: the chance a later repeat copies the first
    drop: float = 0.0
    questions: str = SETS[0]
    design: str = "fixed 8"  # fixed K | anytime (rounds of 2 up to 32)


ANYTIME = SequentialDesign(32, 2, 0.05, 0.02, statistic="eprocess", broken_share=BROKEN_SHARE,
                           alpha_looks="doubling")  # fmt: skip
# At temperature 0 the runner plans one look (``sequential_run.design_of``) and ends an undecided
# cell whose repeats are copies on both sides (``copies_only``).
GREEDY_ANYTIME = replace(ANYTIME, planned_looks=1)


def draw_pair(c: Dependent, rng: np.random.Generator, reps: int, k: int,
              ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(base, cand)`` of ``reps`` replications, ``k`` repeats, as ``c`` says they depend."""
    p = question_set(c.questions)
    if c.dependence == "greedy":
        return greedy_pair(rng, p, (reps,), k, c.drop)
    q = with_drop(p, c.drop, "diffuse")
    rho = c.rho if c.dependence == "copied" else 0.0
    return copied(rng, p, (reps,), k, rho), copied(rng, q, (reps,), k, rho)


def decide(c: Dependent, base: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(verdicts, repeats used)`` through the report's functions (``release_sim``'s paths)."""
    if c.design == "anytime":
        greedy = c.dependence == "greedy"
        design = GREEDY_ANYTIME if greedy else ANYTIME
        found = _anytime(design, base[:, None], cand[:, None], MARGIN, ALPHA, greedy)
        return found[5][:, 0], found[4][:, 0]
    k = int(c.design.split()[1])
    o = Outcomes(base[..., :k], cand[..., :k], np.ones(cand.shape[:-1], dtype=bool), True)
    ev = accuracy_evidence(o, MARGIN, ALPHA)
    mean, broken = nogo_shares()
    p_broken = broken_prompts(o, ALPHA).p_cell
    verdict = verdict_of(ev.p_go, ev.p_nogo, p_broken, ALPHA, ALPHA * broken, ALPHA * mean)
    return verdict, np.full(len(verdict), float(k))


def run_dependent(c: Dependent, reps: int, seed: int, block: int = 500,
                  ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Verdicts and repeats of ``reps`` replications of ``c`` (its stream: the seed and ``c``)."""
    rng = np.random.default_rng([seed, zlib.crc32(repr(c).encode())])
    k = ANYTIME.max_repeats if c.design == "anytime" else int(c.design.split()[1])
    out = [decide(c, *draw_pair(c, rng, min(block, reps - s), k)) for s in range(0, reps, block)]
    return np.concatenate([v for v, _ in out]), np.concatenate([u for _, u in out])


def rerun_until_go(reps: int, seed: int, kept: bool, runs: tuple[int, ...] = (8, 16, 24, 32),
                   ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """A fixed design at the margin rerun with more repeats until GO: ``(any run GO, first GO)``.

    ``kept``: each rerun adds repeats to the earlier ones; else every run is fresh (what the
    pipeline does: another ``repeats`` is another config hash, the old samples moved aside).
    The report reads the first run only once a folder holds an earlier run (``first GO``).
    """
    c = Dependent(drop=MARGIN, design=f"fixed {max(runs)}")
    rng = np.random.default_rng([seed, zlib.crc32(f"rerun {kept}".encode())])
    any_go, first_go = np.zeros(reps, dtype=bool), np.zeros(reps, dtype=bool)
    base, cand = draw_pair(c, rng, reps, sum(runs) if not kept else max(runs))
    start = 0
    for i, k in enumerate(runs):
        lo = 0 if kept else start
        part = Dependent(drop=MARGIN, design=f"fixed {k}")
        verdict, _ = decide(part, base[..., lo : lo + k], cand[..., lo : lo + k])
        any_go |= verdict == GO
        if i == 0:
            first_go = verdict == GO
        start += k
    return any_go, first_go
