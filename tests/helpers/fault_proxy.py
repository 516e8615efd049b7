"""A fault-injecting reverse proxy in front of SGLang (or the simulated server), as a real process.

``python -m tests.helpers.fault_proxy --port P --upstream URL [--upstream URL2 --switch-after N]
[--cut-every N --cut-after K [--cut-json-after TEXT]] [--http-5xx-every M] [--ledger FILE]``

Every path is forwarded to the current upstream. Chat requests (``/v1/chat/completions``) are
numbered in arrival order, from 1; fault rules act on that number, so a run sees a fixed count of
faults whatever the order of its requests:

- ``--http-5xx-every M``: request M, 2M, ... is answered HTTP 500 (``--http-status``: another
  code) and never reaches the upstream.
- ``--cut-every N --cut-after K``: request N, 2N, ... is forwarded, but its reply ends cleanly
  after K server-sent events (a stream: no finish chunk, no ``[DONE]``, as a load balancer's
  idle timeout ends it) or after half of its body (a JSON reply, cut mid-document).
  ``--cut-json-after TEXT``: a cut JSON reply ends right after the first TEXT in it instead
  (half of it where TEXT is absent), so a test picks where the cut falls: inside ``null``, after
  a number's decimal point. Half of a body falls wherever the reply's length puts it.
- ``--flush-after N``: once chat request N is answered, the proxy calls the upstream's
  ``/flush_cache`` itself (another client resetting the accept counters).
- ``--switch-after N``: from chat request N + 1 on, everything goes to the next ``--upstream``
  (a server swapped behind one address).

Each chat request's fate is a line of ``--ledger`` (``n``, ``fault``, ``upstream``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

CHAT = "/v1/chat/completions"
_HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "content-encoding", "host"}


@dataclass
class Proxy:
    """The rules and the count of chat requests seen so far."""

    upstreams: list[str]
    switch_after: int | None = None
    flush_after: int | None = None
    cut_every: int | None = None
    cut_after: int = 3
    http_5xx_every: int | None = None
    http_status: int = 500
    ledger: Path | None = None
    cut_json_after: bytes | None = None
    chats: int = 0
    session: aiohttp.ClientSession | None = field(default=None, repr=False)

    def upstream(self) -> str:
        """The upstream that serves now (the next one once ``switch_after`` chats went by)."""
        if self.switch_after is not None and self.chats > self.switch_after:
            return self.upstreams[min(1, len(self.upstreams) - 1)]
        return self.upstreams[0]

    def fault(self, n: int) -> str | None:
        """The fault of chat request ``n`` (1-based), or None."""
        if self.http_5xx_every and n % self.http_5xx_every == 0:
            return "http_5xx"
        if self.cut_every and n % self.cut_every == 0:
            return "cut"
        return None

    def note(self, n: int, fault: str | None, upstream: str) -> None:
        """One ledger line for chat request ``n``."""
        if self.ledger is not None:
            with self.ledger.open("a") as fh:
                fh.write(json.dumps({"n": n, "fault": fault, "upstream": upstream}) + "\n")


async def forward(request: web.Request) -> web.StreamResponse:
    """Forward one request to the current upstream, applying the chat fault rules."""
    proxy: Proxy = request.app["proxy"]
    fault, n = None, 0
    if request.path == CHAT:
        proxy.chats += 1
        n = proxy.chats
        fault = proxy.fault(n)
    upstream = proxy.upstream()
    if n:
        proxy.note(n, fault, upstream)
    if fault == "http_5xx":
        return web.Response(status=proxy.http_status, text="injected by fault_proxy")
    assert proxy.session is not None
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
    url = upstream + request.path_qs
    async with proxy.session.request(
        request.method, url, headers=headers, data=await request.read()
    ) as up:
        out_headers = {k: v for k, v in up.headers.items() if k.lower() not in _HOP_HEADERS}
        resp = web.StreamResponse(status=up.status, headers=out_headers)
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        if fault == "cut":
            await _cut(up, resp, proxy.cut_after, proxy.cut_json_after)
        else:
            async for piece in up.content.iter_any():
                await resp.write(piece)
        await resp.write_eof()
    if n and n == proxy.flush_after:
        async with proxy.session.post(upstream + "/flush_cache") as flushed:
            proxy.note(n, f"flush_cache {flushed.status}", upstream)
    return resp


async def _cut(
    up: aiohttp.ClientResponse, resp: web.StreamResponse, events: int, mark: bytes | None
) -> None:
    if up.headers.get("Content-Type", "").startswith("text/event-stream"):
        sent = 0
        async for line in up.content:  # one line at a time; a blank line ends an event
            await resp.write(line)
            sent += line.strip() == b""
            if sent >= events:
                return
        return
    await resp.write(json_cut(await up.read(), mark))


def json_cut(body: bytes, mark: bytes | None) -> bytes:
    """What a cut JSON reply keeps: up to the end of the first ``mark``, else half of it."""
    at = body.find(mark) if mark else -1
    return body[: at + len(mark)] if mark and at >= 0 else body[: len(body) // 2]


async def _open(app: web.Application) -> None:
    app["proxy"].session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))


async def _close(app: web.Application) -> None:
    await app["proxy"].session.close()


def main(argv: list[str] | None = None) -> None:
    """Parse the rules and serve until killed."""
    parser = argparse.ArgumentParser(prog="fault_proxy")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", action="append", required=True)
    parser.add_argument("--switch-after", type=int)
    parser.add_argument("--flush-after", type=int)
    parser.add_argument("--cut-every", type=int)
    parser.add_argument("--cut-after", type=int, default=3)
    parser.add_argument("--cut-json-after")
    parser.add_argument("--http-5xx-every", type=int)
    parser.add_argument("--http-status", type=int, default=500)
    parser.add_argument("--ledger", type=Path)
    args = parser.parse_args(argv)
    proxy = Proxy(
        [u.rstrip("/") for u in args.upstream], args.switch_after, args.flush_after,
        args.cut_every, args.cut_after, args.http_5xx_every, args.http_status, args.ledger,
    )  # fmt: skip
    proxy.cut_json_after = args.cut_json_after.encode() if args.cut_json_after else None
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app["proxy"] = proxy
    app.on_startup.append(_open)
    app.on_cleanup.append(_close)
    app.router.add_route("*", "/{tail:.*}", forward)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
