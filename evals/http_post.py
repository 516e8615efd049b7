"""The HTTP side both streaming clients share: the session, one POST as an attempt, the retries.

The eval client (chat, ``evals.client``) and the serving phase's ``/generate`` client
(``pipeline.measuring.speed.serving.generate_stream``) send alike: one aiohttp session, every
failure mapped to the error kind the retry policy reads (``retry_policy``), retried as it says,
and each retry's cause kept on the outcome. Only how a 2xx reply is read differs: ``read``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

import aiohttp

from evals.eval_conf import ClientConf
from evals.replies import ERROR_TEXT_LIMIT, Attempt, Unfinished, finished, http_error
from evals.responses import ChatResult, ResponseFormatError, StreamError
from evals.retry_policy import RATE_LIMITED, RetryBudget, rate_limit_spent, retry_wait

ReadReply = Callable[[aiohttp.ClientResponse], Awaitable[ChatResult]]
Owner = TypeVar("Owner", bound="SessionOwner")


@dataclass(frozen=True)
class RequestOutcome:
    """The result of one request after retries, or why it failed."""

    result: ChatResult | None
    # http_5xx | http_4xx | connection | timeout | malformed | unfinished | aborted |
    # rate_limited | stream_error | invalid_utf8
    error_kind: str | None
    error: str | None
    status: int | None
    attempts: int
    latency_s: float  # from the first attempt to the final answer, back-off included
    retried: tuple[str, ...] = ()  # the error kind of each attempt that was retried, in order


def open_session(conf: ClientConf) -> aiohttp.ClientSession:
    """A session of ``conf``'s pool size, request timeout and API key (Bearer)."""
    headers = {"Content-Type": "application/json"}
    if conf.api_key:
        headers["Authorization"] = f"Bearer {conf.api_key}"
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=conf.concurrency, limit_per_host=0),
        headers=headers,
        timeout=aiohttp.ClientTimeout(total=conf.request_timeout_s),
    )


class SessionOwner:
    """A client that opens its session on ``async with`` and closes it on the way out."""

    conf: ClientConf
    _session: aiohttp.ClientSession | None = None

    async def __aenter__(self: Owner) -> Owner:
        self._session = open_session(self.conf)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def budget_of(conf: ClientConf) -> RetryBudget:
    """The retries ``conf`` allows: failures with back-off, and rate limits with their wait."""
    return RetryBudget(
        conf.max_retries, conf.retry_backoff_s, conf.rate_limit_retries, conf.rate_limit_wait_s
    )


async def post_attempt(
    session: aiohttp.ClientSession, url: str, data: bytes, timeout_s: float, read: ReadReply
) -> Attempt:
    """One POST: a 2xx reply read by ``read``, else the failure as its error kind; never raises."""
    status = None
    try:
        async with session.post(url, data=data) as response:
            status = response.status
            if not 200 <= status < 300:
                return await http_error(response)
            return finished(await read(response), status)
    except asyncio.TimeoutError:  # before ClientError: ServerTimeoutError is both
        return Attempt(None, "timeout", f"no complete response within {timeout_s} s", status)
    except (aiohttp.ClientError, ConnectionError) as exc:
        return Attempt(None, "connection", f"{type(exc).__name__}: {exc}", status)
    except Unfinished as exc:
        return Attempt(None, "unfinished", str(exc), status)
    except StreamError as exc:
        return Attempt(None, "stream_error", str(exc)[:ERROR_TEXT_LIMIT], status)
    except UnicodeDecodeError as exc:  # before ValueError, of which it is one
        return Attempt(None, "invalid_utf8", f"the reply is not UTF-8: {exc}"[:500], status)
    except (ResponseFormatError, ValueError) as exc:  # ValueError: JSON or UTF-8 decoding
        return Attempt(None, "malformed", f"{type(exc).__name__}: {exc}"[:500], status)


async def with_retries(
    attempt: Callable[[], Awaitable[Attempt]], budget: RetryBudget
) -> RequestOutcome:
    """``attempt`` until it answers or the policy stops retrying; each retry's cause kept."""
    start = time.perf_counter()
    retried: list[str] = []
    waited_429 = 0.0
    # Kept over tenacity/backoff: a few lines, and each retry's cause lands on the outcome.
    while True:
        got = await attempt()
        spent = rate_limit_spent(budget, waited_429)
        wait = retry_wait(got.error_kind, retried, spent, got.retry_after, got.curable)
        if wait is None:
            return RequestOutcome(
                got.result, got.error_kind, got.error, got.status, len(retried) + 1,
                time.perf_counter() - start, tuple(retried),
            )  # fmt: skip
        retried.append(str(got.error_kind))
        waited_429 += wait if got.error_kind == RATE_LIMITED else 0.0
        await asyncio.sleep(wait)
