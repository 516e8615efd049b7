"""The async OpenAI-compatible chat client shared by every eval of a cell.

One aiohttp session whose connection pool matches the concurrency; ``run`` drives a fixed set
of worker tasks over the items (cheaper than one task per item behind a semaphore when there
are thousands). Which failures are retried, how often and after how long is
``evals.retry_policy``: HTTP 5xx, connection failures, unfinished and aborted replies with
doubling back-off; HTTP 429 after the server's ``Retry-After``; an error object inside a stream
and a body that is not UTF-8 once. A 4xx will fail again, a timeout has already cost the full
budget, and a malformed body is a server bug to report. A reply is *unfinished* when it carries
no finish reason: a stream that ends without a finish chunk or without ``[DONE]`` (a load
balancer's idle timeout closes it cleanly), or a body whose JSON stops mid-document. It is
*aborted* when its finish reason is SGLang's ``abort`` (the request was cancelled or evicted
before it finished: ``evals.responses.abort_detail``). Neither's partial text is ever graded;
every retry's cause is kept on the outcome, so an eval can say how many 5xx, dropped
connections, cut and aborted replies it absorbed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import aiohttp

from evals.eval_conf import ClientConf, SamplingConf
from evals.http_post import (
    RequestOutcome,
    SessionOwner,
    budget_of,
    post_attempt,
    with_retries,
)
from evals.progress import progress_bar
from evals.replies import Attempt, body_result, stream_result
from evals.responses import ChatResult, stats_request_flags
from evals.sample_line import ChatMessage

__all__ = ["ChatClient", "RequestOutcome", "build_chat_payload", "chat_url"]

T = TypeVar("T")
_SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "max_tokens", "seed")


def build_chat_payload(
    messages: Sequence[ChatMessage],
    sampling: SamplingConf | None,
    model: str,
    chat_template_kwargs: dict[str, Any] | None,
    stream: bool,
) -> dict[str, Any]:
    """Build a ``/v1/chat/completions`` request body.

    Args:
        messages: the chat messages.
        sampling: sampling settings; only fields that are set (not None) are sent, so the
            server's (model's) defaults apply to the rest. None sends none.
        model: the served model name.
        chat_template_kwargs: e.g. ``{"enable_thinking": True}``; omitted when empty.
        stream: streaming request (spec stats then come from the final ``sglext`` chunk,
            because SGLang rejects ``return_meta_info`` with streaming).

    Returns:
        The JSON-ready payload.
    """
    payload: dict[str, Any] = {"model": model, "messages": list(messages), "stream": stream}
    for name in _SAMPLING_FIELDS:
        value = getattr(sampling, name, None)
        if value is not None:
            payload[name] = value
    if chat_template_kwargs:
        payload["chat_template_kwargs"] = dict(chat_template_kwargs)
    if stream:
        payload["stream_options"] = {"include_usage": True}
    payload.update(stats_request_flags(stream))
    return payload


def chat_url(base_url: str) -> str:
    """``http://host:port`` or ``http://host:port/v1`` -> the chat-completions endpoint."""
    base = base_url.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


class ChatClient(SessionOwner):
    """Async OpenAI-compatible chat client; use as ``async with ChatClient(...) as client``."""

    def __init__(self, base_url: str, model: str, conf: ClientConf) -> None:
        """Configure the client; the session opens in ``__aenter__``.

        Args:
            base_url: the server, with or without the trailing ``/v1``.
            model: default ``model`` for payloads that lack one.
            conf: concurrency, timeout, retries, streaming, progress and API key.
        """
        if conf.concurrency < 1:
            raise ValueError(f"client.concurrency={conf.concurrency}: use 1 or more.")
        self.url = chat_url(base_url)
        self.model = model
        self.conf = conf
        self._session = None
        self._slots = asyncio.Semaphore(conf.concurrency)
        self._budget = budget_of(conf)

    async def chat(self, payload: dict[str, Any]) -> RequestOutcome:
        """Send one chat request, retrying 5xx and connection errors with doubling back-off.

        Args:
            payload: a body from ``build_chat_payload`` (``model`` is filled in if missing).

        Returns:
            The outcome; failures are returned with ``error_kind``, never raised.
        """
        async with self._slots:
            return await self._send(payload)

    async def _send(self, payload: dict[str, Any]) -> RequestOutcome:
        # ``chat`` without the semaphore: ``run``'s fixed worker pool already bounds concurrency.
        body = json.dumps({"model": self.model, **payload}).encode()
        stream = bool(payload.get("stream"))
        return await with_retries(lambda: self._attempt(body, stream), self._budget)

    async def _attempt(self, body: bytes, stream: bool) -> Attempt:
        if self._session is None:
            raise RuntimeError("ChatClient is not open: use `async with ChatClient(...)`.")
        read = stream_result if stream else _body_result
        return await post_attempt(self._session, self.url, body, self.conf.request_timeout_s, read)

    async def run(
        self,
        items: Sequence[T],
        payload_of: Callable[[T], dict[str, Any]],
        on_done: Callable[[T, RequestOutcome], None],
        desc: str,
    ) -> None:
        """Send every item's request with bounded concurrency; report each as it finishes.

        Args:
            items: the work items (e.g. ``EvalPrompt``s still to run).
            payload_of: builds an item's request body.
            on_done: called with the item and its outcome as soon as it completes, so the
                caller can append the sample to disk at once (resume keeps finished work).
            desc: progress-bar label.
        """
        pending = iter(items)  # shared by the workers; safe, asyncio runs one at a time
        progress = self.conf.progress
        with progress_bar(progress, len(items), desc, self.conf.progress_every_s) as bar:

            async def worker() -> None:
                for item in pending:
                    on_done(item, await self._send(payload_of(item)))
                    bar.update(1)

            tasks = [
                asyncio.ensure_future(worker())
                for _ in range(min(self.conf.concurrency, len(items)))
            ]
            try:
                await asyncio.gather(*tasks)
            finally:  # an on_done failure or a cancel stops the other workers too
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)


async def _body_result(response: aiohttp.ClientResponse) -> ChatResult:
    return body_result(await response.read())
