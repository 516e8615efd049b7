"""How far SGLang's own accept average may sit from the per-request one (pure).

SGLang folds its accept totals into ``/server_info``'s ``avg_spec_accept_length`` once per decode
log interval (``--decode-log-interval``, 40 iterations by default), so a window (an eval, after
its ``/flush_cache``) can end with up to 39 iterations it never folded in, each verifying at most
the requests in flight. A fixed 10% tolerance called that "more than the log-interval effect"
where it was not: on the trained long-context model nine variable-tracking requests verified
together in about 60 iterations, so up to 39 of them, most of the window, were left out, and the
two figures differed by 12.5% (2026-12-07, ``longctx-model-followups-0.5.23/cell-h100``).
"""

from __future__ import annotations

from collections.abc import Sequence

# Iterations, not verify steps: requests verified in one batch share an iteration.
DECODE_LOG_INTERVAL = 40


def left_out_share(windows: Sequence[Sequence[int]], in_flight: int) -> float:
    """The largest share of the verify steps SGLang's average can leave out.

    ``windows``: per window, each request's verify steps. Each window can end with
    ``DECODE_LOG_INTERVAL - 1`` iterations not folded in, each verifying at most ``in_flight`` of
    its requests (the client's concurrency, or fewer requests).
    """
    total = sum(sum(steps) for steps in windows)
    missing = sum(
        (DECODE_LOG_INTERVAL - 1) * min(in_flight, sum(1 for s in steps if s)) for steps in windows
    )
    return min(1.0, missing / total) if total else 1.0


def server_tolerance(share: float, positions: int, expected: float | None, base: float) -> float:
    """The relative difference ``share`` left-out steps can explain, and at least ``base``.

    Every verify step accepts between 1 and ``positions + 1`` tokens (``positions``: the draft
    tokens a step proposes), so two averages that differ only by a ``share`` of the steps differ
    by at most ``share * positions`` tokens a step: relative to ``expected`` (the per-request
    figure). Over many requests the share is small and ``base`` (10%) applies.
    """
    if not expected or positions <= 0:
        return base
    return max(base, share * positions / expected)
