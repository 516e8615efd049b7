"""Anytime-valid sign-off: the question-level check at each look, alpha spent over looks.

The unit of evidence is the **question**, not the repeat. A question's repeats may be copies
(greedy decoding within one server start), sticky, or independent, and nothing here assumes
which: each look reads the fixed design's paired check (``signoff.accuracy_evidence``: every
question's mean difference over its pairs so far, the standard error taken across questions, the
candidate's lost pairs at their worst for GO and best for NO-GO), whose level rests only on the
questions' answers being independent of each other. What the older rule did instead, bet on
every (question, repeat) pair as a new observation, is valid only when repeats are independent
draws: on two greedy starts of one engine (3.6% of answers flipped) it said NO-GO 6.8% and GO
33.4% with a real 2-point drop (``benchmarks/results/signoff_dependence.md``).

Why stopping anywhere, and extending past the plan, keeps the level: look ``j``'s p-values
``p_j`` are read at ``alpha s_j`` with ``sum_j s_j <= 1`` over *every* look, planned or not, for
each check (``pipeline.stats.look_schedule``: which looks spend, and how much), so by the union
bound the chance that any look ever rejects a true null is at most ``alpha``; the reported
``p = min_j p_j / s_j`` is at most ``alpha`` exactly when some look rejected. This holds whatever
the correlation between looks (copies make look ``j + 1`` repeat look ``j``), which is why no
group-sequential spending (it assumes independent increments) is used here.

NO-GO is read at ``alpha / family`` (Bonferroni over the sweep's candidates x evals, fixed before
the first look), split between the mean check and the broken-prompt check
(``pipeline.stats.nogo_split``); GO at ``alpha`` per cell (the release is GO only if every cell
is). Broken prompts (``pipeline.stats.breaks``, a question-level test) are read at the
schedule's share of theirs.
The statistic keeps its recorded name ``eprocess`` (cells written under the older per-repeat
bet are read by this rule too: its p-values are valid wherever those cells stopped).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pipeline.stats.breaks import broken_prompts
from pipeline.stats.look_schedule import PLANNED_SHARE, LookSchedule, look_share, look_weight
from pipeline.stats.nogo_split import BROKEN_SHARE, nogo_shares
from pipeline.stats.outcomes import Outcomes

FloatArray = np.ndarray
# Re-exported: the schedule's shares were defined here before it had a module of its own.
__all__ = ["PLANNED_SHARE", "AnytimeEvidence", "LookSchedule", "anytime_evidence",
           "anytime_verdict", "broken_over_looks", "broken_p", "look_pvalues", "look_repeats",
           "look_share", "look_weight", "paired_steps"]  # fmt: skip


@dataclass(frozen=True)
class AnytimeEvidence:
    """Both checks' p-values over the looks so far, and the broken-prompt check's.

    Attributes:
        p_go: ``(...)`` ``min_j p_j / s_j`` of GO's check (the lost pairs counted wrong).
        p_nogo: ``(...)`` the same of NO-GO's (the lost pairs counted right).
        p_broken: ``(...)`` the broken-prompt check's p-value over looks (``alpha``'s scale:
            ``min_j p_j (j (j + 1))``).
        steps: ``(...)`` repeats with at least one pair.
    """

    p_go: FloatArray
    p_nogo: FloatArray
    p_broken: FloatArray
    steps: FloatArray


def look_pvalues(
    o: Outcomes, margin: float, alpha: float, schedule: LookSchedule, max_absent: float = 0.0,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """``(p_go, p_nogo)``: ``min_j p_j / s_j`` over the looks a run in rounds made on these pairs.

    Each look is the fixed design's check on the first ``k_j`` repeats (``look_repeats``), read
    at the schedule's share of each side (a look that spends nothing is skipped). NaN (no
    verdict) when the sides are not paired by repeat: the looks need repeat indices.
    """
    from pipeline.stats.signoff import accuracy_evidence

    lead = o.cand.shape[:-2]
    if not o.by_repeat:
        return np.full(lead, np.nan), np.full(lead, np.nan)
    steps = paired_steps(o)
    width = int(np.max(steps)) if np.size(steps) else 0
    out = [np.ones(lead), np.ones(lead)]
    for j, k in enumerate(look_repeats(width, schedule.per_round), start=1):
        shares = (schedule.go(j), schedule.nogo(j))
        if not any(shares):
            continue
        ev = accuracy_evidence(_first(o, k), margin, alpha, max_absent)
        for i, (p, share) in enumerate(zip((ev.p_go, ev.p_nogo), shares, strict=True)):
            if share > 0:
                out[i] = np.fmin(out[i], np.asarray(p) / share)
    return np.minimum(out[0], 1.0), np.minimum(out[1], 1.0)


def _first(o: Outcomes, k: int) -> Outcomes:
    errored = None if o.cand_errored is None else o.cand_errored[..., :k]
    return Outcomes(o.base[..., :k], o.cand[..., :k], o.cand_asked, o.by_repeat, errored)


def broken_over_looks(
    o: Outcomes, alpha: float, rounds: list[int], share: Callable[[int], float] = look_share
) -> FloatArray:
    """The broken-prompt check's p-value over looks after ``rounds`` repeats each (cumulative).

    ``min_j p_j / share(j)``: at most ``alpha`` exactly when some look's check broke at its
    share of ``alpha`` (a look with no share is skipped).
    """
    out = np.ones(o.cand.shape[:-2])
    for j, k in enumerate(rounds, start=1):
        if share(j) <= 0:
            continue
        part = _first(o, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = broken_prompts(part, alpha * share(j)).p_cell
        out = np.minimum(out, p / share(j))
    return np.minimum(out, 1.0)


def look_repeats(answered: int, per_round: int) -> list[int]:
    """Repeats after each look, up to ``answered`` repeats (the last look may be partial)."""
    looks = list(range(per_round, answered + 1, per_round))
    return looks if looks and looks[-1] == answered else [*looks, answered] if answered else []


def paired_steps(o: Outcomes) -> FloatArray:
    """``(...)`` repeats with at least one pair (answered, or lost by the candidate)."""
    ran = np.isfinite(o.cand) | o.lost()
    steps: FloatArray = np.any(ran & np.isfinite(o.base), axis=-2).sum(-1)
    return steps


def broken_p(o: Outcomes, alpha: float, schedule: LookSchedule) -> FloatArray:
    """The broken check over the looks a run in the schedule's rounds made on these pairs."""
    steps = paired_steps(o)
    width = int(np.max(steps)) if np.size(steps) else 0
    return broken_over_looks(o, alpha, look_repeats(width, schedule.per_round), schedule.broken)


def anytime_evidence(
    o: Outcomes, margin: float, alpha: float, schedule: LookSchedule, max_absent: float = 0.0,
) -> AnytimeEvidence:  # fmt: skip
    """Both checks' p-values over the looks and the broken check's, on the data seen so far.

    ``schedule``: the design's (``SequentialDesign.schedule``). GO is impossible (p 1) when
    more of the baseline's questions were never asked of the candidate than ``max_absent``
    allows (``signoff.mean_check``).
    """
    p_go, p_nogo = look_pvalues(o, margin, alpha, schedule, max_absent)
    steps = paired_steps(o).astype(float)
    return AnytimeEvidence(p_go, p_nogo, broken_p(o, alpha, schedule), steps)


def anytime_verdict(
    ev: AnytimeEvidence, alpha: float, family: int, broken_share: float | None = BROKEN_SHARE
) -> np.ndarray:
    """GO / NO-GO / INCONCLUSIVE: the look's decision and the report's, one function.

    The cell's NO-GO alpha is ``alpha / family``, split between NO-GO's e-process and the broken
    check (``nogo_split``; ``broken_share`` None: a cell written before the split, each at the
    full share). GO when GO's p is at most ``alpha`` and nothing broke at the broken check's
    level; NO-GO when NO-GO's p or the broken check's is at most its level.
    """
    from pipeline.stats.signoff import verdict_of

    mean, broken = nogo_shares(broken_share)
    share = alpha / family
    return verdict_of(ev.p_go, ev.p_nogo, ev.p_broken, alpha, share * broken, share * mean)
