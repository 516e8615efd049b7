"""Simulated speculative-decoding statistics of one completion (pure).

A chain of ``S`` drafts is accepted position by position with probability ``p``; ``p`` solves
``1 + p + ... + p^S = accept_length`` so that the mean tokens per verify step (bonus included)
is the cell's accept length. The first token comes from prefill, as in SGLang, so
``completion_tokens == 1 + verify_ct + num_correct_drafts`` exactly.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class SpecDraw:
    """Per-request counters, named after SGLang's ``meta_info`` keys."""

    verify_ct: int
    num_correct_drafts: int
    histogram: tuple[int, ...]  # [steps with 0 correct drafts, with 1, ...] up to the max seen

    def accept_rate(self, num_draft_tokens: int) -> float:
        """``spec_accept_rate``: correct drafts over proposed drafts (no bonus token)."""
        proposed = self.num_proposed(num_draft_tokens)
        return self.num_correct_drafts / proposed if proposed else 0.0

    def num_proposed(self, num_draft_tokens: int) -> int:
        """``spec_num_proposed_drafts`` = verify_ct * (num_draft_tokens - 1)."""
        return self.verify_ct * (num_draft_tokens - 1)


def chain_probability(accept_length: float, num_steps: int) -> float:
    """Per-position acceptance ``p`` with ``sum(p**i for i in 0..S) == accept_length``.

    Args:
        accept_length: target mean tokens per verify step; clipped to [1, S + 1].
        num_steps: ``S``, the number of drafted positions per verify step.
    """
    target = min(max(accept_length, 1.0), num_steps + 1.0)
    if target >= num_steps + 1.0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection: the sum is increasing in p
        mid = (lo + hi) / 2
        if sum(mid**i for i in range(num_steps + 1)) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def thresholds(p: float, num_steps: int) -> list[float]:
    """``[p**S, ..., p**1]``: P(k >= i) = p**i, so k = #thresholds above a uniform draw."""
    return [p**i for i in range(num_steps, 0, -1)]


def draw_spec(rng: random.Random, completion_tokens: int, ascending: list[float]) -> SpecDraw:
    """Draw the verify steps that produce ``completion_tokens`` tokens.

    Args:
        rng: seeded per (seed, prompt, cell) by the caller, so reruns repeat exactly.
        completion_tokens: tokens of the completion, the first of them from prefill.
        ascending: ``thresholds(p, S)``.

    The last step is clipped so that the tokens add up exactly.
    """
    steps = len(ascending)
    counts = [0] * (steps + 1)
    remaining = completion_tokens - 1
    verify_ct = correct = 0
    rand = rng.random
    while remaining > 0:
        k = steps - bisect.bisect_right(ascending, rand())
        if k + 1 > remaining:
            k = remaining - 1
        counts[k] += 1
        verify_ct += 1
        correct += k
        remaining -= k + 1
    top = max((i for i, c in enumerate(counts) if c), default=-1)
    return SpecDraw(
        verify_ct=verify_ct, num_correct_drafts=correct, histogram=tuple(counts[: top + 1])
    )
