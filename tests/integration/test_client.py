"""The client against a real aiohttp server on loopback: retries, errors, limits, streaming."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import web

from evals.client import ChatClient, RequestOutcome, build_chat_payload
from evals.eval_conf import ClientConf, SamplingConf

pytestmark = pytest.mark.integration

FAST = ClientConf(concurrency=4, request_timeout_s=5, max_retries=3, retry_backoff_s=0.01,
                  progress=False)  # fmt: skip
SPEC = {"spec_accept_rate": 0.5, "spec_accept_length": 2.0, "spec_num_correct_drafts": 10,
        "spec_num_proposed_drafts": 20, "spec_verify_ct": 8,
        "spec_correct_drafts_histogram": [2, 2, 4]}  # fmt: skip


def completion(content: str) -> dict[str, Any]:
    return {
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": content},
                     "meta_info": {"completion_tokens": 16, "prompt_tokens": 5}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 16, "total_tokens": 21},
        "sglext": {"spec_tokens_details": SPEC},
    }  # fmt: skip


class Server:
    """Modes are the first path segment: /<mode>/v1/chat/completions."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen: list[tuple[dict[str, Any], str | None]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.seen.append((body, request.headers.get("Authorization")))
        key = body["messages"][-1]["content"]
        self.calls[key] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            handler = getattr(self, "mode_" + request.match_info["mode"])
            response: web.StreamResponse = await handler(request, body, self.calls[key])
            return response
        finally:
            self.in_flight -= 1

    async def mode_ok(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        await asyncio.sleep(float(body.get("delay", 0.0)))
        return web.json_response(completion("Answer: " + body["messages"][-1]["content"]))

    async def mode_flaky(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        if n <= 2:
            return web.json_response({"object": "error", "message": "busy"}, status=503)
        return await self.mode_ok(request, body, n)

    async def mode_fail500(
        self, request: web.Request, body: dict[str, Any], n: int
    ) -> web.Response:
        return web.Response(status=500, text="internal")

    async def mode_bad(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        message = "max_tokens is too large"
        return web.json_response({"object": "error", "message": message, "code": 400}, status=400)

    async def mode_notjson(
        self, request: web.Request, body: dict[str, Any], n: int
    ) -> web.Response:
        return web.Response(status=200, text="{not json", content_type="application/json")

    async def mode_nochoices(
        self, request: web.Request, body: dict[str, Any], n: int
    ) -> web.Response:
        return web.json_response({"object": "chat.completion"})

    async def mode_slow(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        await asyncio.sleep(1.5)  # past the 0.3 s client timeout; short so shutdown is quick
        return await self.mode_ok(request, body, n)

    async def mode_reset(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        return (
            await self._reset(request)
            if n <= int(body.get("resets", 99))
            else await self.mode_ok(request, body, n)
        )

    async def mode_hangup(self, request: web.Request, body: dict[str, Any], n: int) -> web.Response:
        assert request.transport is not None
        request.transport.close()  # orderly close without a response: "server disconnected"
        raise web.HTTPInternalServerError()

    async def _reset(self, request: web.Request) -> web.Response:
        transport = request.transport
        assert transport is not None
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()  # linger 0: the peer gets a TCP RST
        raise web.HTTPInternalServerError()

    async def mode_stream(
        self, request: web.Request, body: dict[str, Any], n: int
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            {"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]},
            {"choices": [{"index": 0, "delta": {"content": "Answer:"}}]},
            {"choices": [{"index": 0, "delta": {"content": " D"}, "finish_reason": "stop"}]},
            {"choices": [], "sglext": {"spec_tokens_details": SPEC}},
            {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 16}},
        ]
        for chunk in chunks:
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


async def with_server(test: Callable[[str, Server], Awaitable[None]]) -> Server:
    server = Server()
    app = web.Application()
    app.router.add_post("/{mode}/v1/chat/completions", server.handle)
    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        await test(f"http://127.0.0.1:{port}", server)
    finally:
        await runner.cleanup()
    return server


def payload(content: str, **extra: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": content}]
    return build_chat_payload(messages, SamplingConf(), "m", {}, stream=False) | extra


def one(mode: str, conf: ClientConf = FAST, **extra: Any) -> tuple[RequestOutcome, Server]:
    got: list[RequestOutcome] = []

    async def test(base: str, server: Server) -> None:
        async with ChatClient(f"{base}/{mode}", "m", conf) as client:
            got.append(await client.chat(payload("C", **extra)))

    server = asyncio.run(with_server(test))
    return got[0], server


def test_ok_response_is_parsed_and_payload_and_auth_sent() -> None:
    out, server = one("ok", replace(FAST, api_key="sk-test"))
    assert out.error_kind is None and out.attempts == 1 and out.status == 200
    assert out.result is not None and out.result.content == "Answer: C"
    assert out.result.spec is not None and out.result.spec.verify_ct == 8
    body, auth = server.seen[0]
    assert auth == "Bearer sk-test"
    assert body["return_meta_info"] is True and body["return_spec_tokens_details"] is True


def test_no_auth_header_without_key() -> None:
    _, server = one("ok")
    assert server.seen[0][1] is None


def test_503_twice_then_200_is_retried_with_backoff() -> None:
    out, server = one("flaky")
    assert out.error_kind is None and out.attempts == 3 and server.calls["C"] == 3
    assert out.latency_s >= 0.01 + 0.02  # two doubling back-offs


def test_5xx_gives_up_after_max_retries() -> None:
    out, _ = one("fail500")
    assert (out.error_kind, out.status, out.attempts) == ("http_5xx", 500, FAST.max_retries + 1)
    assert out.error == "HTTP 500: internal" and out.result is None


def test_400_is_not_retried() -> None:
    out, server = one("bad")
    assert (out.error_kind, out.status, out.attempts) == ("http_4xx", 400, 1)
    assert out.error is not None and "max_tokens is too large" in out.error
    assert server.calls["C"] == 1


@pytest.mark.parametrize("mode", ["notjson", "nochoices"])
def test_malformed_body_is_not_retried(mode: str) -> None:
    out, server = one(mode)
    assert (out.error_kind, out.attempts, server.calls["C"]) == ("malformed", 1, 1)


@pytest.mark.serial  # a latency window: alone
def test_timeout_is_not_retried() -> None:
    out, server = one("slow", replace(FAST, request_timeout_s=0.3))
    assert (out.error_kind, out.attempts, server.calls["C"]) == ("timeout", 1, 1)
    assert 0.3 <= out.latency_s < 2


@pytest.mark.parametrize("mode", ["reset", "hangup"])
def test_dropped_connections_are_retried_until_the_limit(mode: str) -> None:
    out, server = one(mode)
    assert (out.error_kind, out.attempts) == ("connection", FAST.max_retries + 1)
    assert server.calls["C"] == FAST.max_retries + 1


def test_reset_once_then_success() -> None:
    out, _ = one("reset", resets=1)
    assert out.error_kind is None and out.attempts == 2 and out.result is not None


def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def go() -> RequestOutcome:
        async with ChatClient(f"http://127.0.0.1:{port}/v1", "m", FAST) as client:
            return await client.chat(payload("C"))

    out = asyncio.run(go())
    assert (out.error_kind, out.attempts, out.status) == ("connection", FAST.max_retries + 1, None)


def test_streaming_assembles_sse() -> None:
    got: list[RequestOutcome] = []

    async def test(base: str, server: Server) -> None:
        messages = [{"role": "user", "content": "s"}]
        body = build_chat_payload(messages, SamplingConf(), "m", {}, stream=True)
        async with ChatClient(f"{base}/stream/v1", "m", replace(FAST, stream=True)) as client:
            got.append(await client.chat(body))

    server = asyncio.run(with_server(test))
    out = got[0]
    assert out.error_kind is None and out.result is not None
    assert (out.result.content, out.result.reasoning_content) == ("Answer: D", "hmm")
    assert out.result.completion_tokens == 16 and out.result.spec is not None
    sent = server.seen[0][0]
    assert sent["stream_options"] == {"include_usage": True} and "return_meta_info" not in sent


def run_items(
    items: list[int],
    conf: ClientConf,
    delay: Callable[[int], float],
    on_done: Callable[[int, RequestOutcome], None] | None = None,
) -> tuple[list[tuple[int, RequestOutcome]], Server]:
    done: list[tuple[int, RequestOutcome]] = []

    async def test(base: str, server: Server) -> None:
        async with ChatClient(f"{base}/ok", "m", conf) as client:
            await client.run(
                items,
                lambda i: payload(str(i), delay=delay(i)),
                on_done or (lambda i, out: done.append((i, out))),
                desc="test",
            )

    return done, asyncio.run(with_server(test))


def test_run_bounds_concurrency_and_completes_every_item() -> None:
    done, server = run_items(list(range(40)), replace(FAST, concurrency=5), lambda i: 0.02)
    assert server.max_in_flight == 5
    assert sorted(i for i, _ in done) == list(range(40))
    assert all(out.result and out.result.content == f"Answer: {i}" for i, out in done)


def test_on_done_is_called_as_each_item_completes() -> None:
    done, _ = run_items(
        list(range(6)), replace(FAST, concurrency=6), lambda i: 0.4 if i == 0 else 0.01
    )
    assert [i for i, _ in done][-1] == 0  # the slow first item is reported last


@pytest.mark.serial  # under 2 s: alone
def test_on_done_failure_stops_the_run() -> None:
    def explode(item: int, out: RequestOutcome) -> None:
        raise RuntimeError(f"disk full at {item}")

    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="disk full"):
        run_items(list(range(50)), replace(FAST, concurrency=2), lambda i: 0.05, explode)
    assert time.perf_counter() - start < 2  # the other workers were cancelled, not drained


def test_run_with_no_items() -> None:
    done, server = run_items([], FAST, lambda i: 0.0)
    assert done == [] and not server.seen


def test_chat_outside_context_manager_is_a_clear_error() -> None:
    async def go() -> None:
        await ChatClient("http://127.0.0.1:1", "m", FAST).chat(payload("x"))

    with pytest.raises(RuntimeError, match="async with ChatClient"):
        asyncio.run(go())
