"""Which failed attempt of a chat request is tried again, and after how long (pure).

Three budgets, by what a retry can cure:
- ``RETRYABLE`` (HTTP 5xx, a dropped connection, a reply the server did not finish, a reply the
  server aborted without a client-side cause): up to ``client.max_retries``, doubling back-off.
- ``RETRY_ONCE`` (an error object inside a stream, a body that is not UTF-8): one retry; a
  second one in a row says the server means it.
- ``rate_limited`` (HTTP 429): after the server's ``Retry-After`` (seconds or an HTTP date, RFC
  9110 section 10.2.3; without one, the doubling back-off), up to ``client.rate_limit_retries``
  times and ``client.rate_limit_wait_s`` seconds of waiting in all for the request; a
  ``Retry-After`` beyond what is left of that ends the request at once.
Anything else (a 4xx, a timeout, a malformed body, an abort whose status is a 4xx) is final.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Sequence
from dataclasses import dataclass

RETRYABLE = frozenset({"http_5xx", "connection", "unfinished", "aborted"})
RETRY_ONCE = frozenset({"stream_error", "invalid_utf8"})
RATE_LIMITED = "rate_limited"


@dataclass(frozen=True)
class RetryBudget:
    """The client settings that bound retries (``evals.eval_conf.ClientConf``'s fields)."""

    max_retries: int = 4
    backoff_s: float = 0.5
    rate_limit_retries: int = 8
    rate_limit_wait_s: float = 120.0


def retry_after_s(header: str | None, now: float) -> float | None:
    """A ``Retry-After`` header in seconds from ``now`` (Unix time); None when absent or bad.

    Args:
        header: the header's value: delay-seconds (``"2"``) or an HTTP date
            (``"Fri, 04 Dec 2026 18:00:02 GMT"``); a date in the past is 0 s.
        now: the current Unix time, to turn a date into a delay.
    """
    if header is None or not header.strip():
        return None
    text = header.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110: an HTTP date is GMT
        return None
    return max(0.0, when.timestamp() - now)


def retry_wait(
    kind: str | None,
    retried: Sequence[str],
    budget: RetryBudget,
    retry_after: float | None = None,
    curable: bool = True,
) -> float | None:
    """Seconds to wait before the next attempt, or None when the request ends here.

    Args:
        kind: the error kind of the attempt that just failed (None: it succeeded).
        retried: the kinds of the attempts already retried, in order.
        budget: the limits.
        retry_after: the server's ``Retry-After`` in seconds (429 only).
        curable: False when the reply says a retry cannot help (an abort with a 4xx status).
    """
    if kind is None or not curable:
        return None
    if kind == RATE_LIMITED:
        return _rate_limit_wait(retried, budget, retry_after)
    if kind in RETRY_ONCE:
        return budget.backoff_s if kind not in retried else None
    if kind in RETRYABLE:
        done = sum(1 for k in retried if k in RETRYABLE)
        return budget.backoff_s * 2**done if done < budget.max_retries else None
    return None


def _rate_limit_wait(
    retried: Sequence[str], budget: RetryBudget, retry_after: float | None
) -> float | None:
    done = retried.count(RATE_LIMITED)
    if done >= budget.rate_limit_retries:
        return None
    wait = retry_after if retry_after is not None else budget.backoff_s * 2**done
    if not math.isfinite(wait) or wait > budget.rate_limit_wait_s:
        return None
    return wait


def rate_limit_spent(budget: RetryBudget, waited_s: float) -> RetryBudget:
    """The budget left once ``waited_s`` seconds were spent waiting on 429s."""
    left = max(0.0, budget.rate_limit_wait_s - waited_s)
    return RetryBudget(budget.max_retries, budget.backoff_s, budget.rate_limit_retries, left)
