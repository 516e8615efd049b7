"""The aiohttp application: SGLang's HTTP routes over one runtime.

Health answers 503 while starting or shutting down (and, once the hang fault hit, after
``SGLANG_HEALTH_CHECK_TIMEOUT`` seconds, as a stuck scheduler does); ``--api-key`` guards every
route but ``/health*``, and ``--admin-api-key``, when set, is the only key ``/flush_cache`` takes;
``/metrics`` exists only with ``--enable-metrics``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from pipeline.simserver import info
from pipeline.simserver.completions import CompletionHandlers, json_response
from pipeline.simserver.faults import stop_fault
from pipeline.simserver.runtime import Runtime
from pipeline.simserver.state import Ledger, ServerState, metrics_text
from pipeline.simserver.surface import surface_for

log = logging.getLogger("sglang.simserver")

FLUSH_OK = (
    "Cache flushed.\nPlease check backend logs for more details. (When there are running or "
    "waiting requests, the operation will not be performed.)\n"
)
FLUSH_FAILED = "Flush cache failed.\n"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Lifecycle:
    """Where the server is in its life (health reads it)."""

    ready: bool = False
    shutting_down: bool = False


class InfoHandlers:
    """Health, info, flush and metrics endpoints."""

    def __init__(self, rt: Runtime, state: ServerState, life: Lifecycle) -> None:
        self.rt, self.state, self.life = rt, state, life
        self.created = int(time.time())

    async def health(self, request: web.Request) -> web.Response:
        """GET /health and /health_generate."""
        if not self.life.ready or self.life.shutting_down:
            return web.Response(status=503)
        if stop_fault(self.rt.faults, self.state.completed) == "hang_after_requests":
            await asyncio.sleep(float(os.environ.get("SGLANG_HEALTH_CHECK_TIMEOUT", "20")))
            return web.Response(status=503)
        return web.Response(status=200)

    async def models(self, request: web.Request) -> web.Response:
        """GET /v1/models."""
        return json_response(info.v1_models(self.rt.args, self.created))

    async def model_info(self, request: web.Request) -> web.Response:
        """GET /model_info (and the deprecated /get_model_info)."""
        if request.path == "/get_model_info":
            log.warning("Endpoint '/get_model_info' is deprecated. Use '/model_info' instead.")
        return json_response(info.model_info(self.rt.args, self.rt.version))

    async def server_info(self, request: web.Request) -> web.Response:
        """GET /server_info (and the deprecated /get_server_info)."""
        if request.path == "/get_server_info":
            log.warning("Endpoint '/get_server_info' is deprecated. Use '/server_info' instead.")
        states = [
            info.internal_state(
                self.rt.args, rank.average(), self.state.last_gen_throughput, self.rt.env_vars,
                self.rt.startup_time, self.rt.version,
            )
            for rank in self.state.ranks
        ]  # fmt: skip
        rt = self.rt
        body = info.server_info(rt.args, states, rt.version, rt.launch_command, rt.startup_time)
        return json_response(body)

    async def flush_cache(self, request: web.Request) -> web.Response:
        """GET|POST /flush_cache[?timeout=s]: reset the spec totals when idle, else 400."""
        try:
            timeout = float(request.query.get("timeout", "0"))
        except ValueError:
            return web.Response(
                status=400, text=f"timeout={request.query['timeout']!r}: not a number"
            )
        deadline = time.monotonic() + timeout
        while self.state.running and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self.state.running:
            log.warning("Cache not flushed because there are pending requests. #queue-req: 0, "
                        "#running-req: %d", self.state.running)  # fmt: skip
            return web.Response(status=400, text=FLUSH_FAILED)
        self.state.flush()
        log.info("Cache flushed successfully!")
        return web.Response(status=200, text=FLUSH_OK)

    async def metrics(self, request: web.Request) -> web.Response:
        """GET /metrics (Prometheus text)."""
        args = self.rt.args
        labels = {"model_name": str(args["served_model_name"]), "engine_type": "unified"}
        spec = None
        if self.rt.spec_on:
            spec = (int(args["speculative_num_steps"]), int(args["speculative_num_draft_tokens"]))
        text = metrics_text(self.state, labels, spec, surface_for(self.rt.version))
        return web.Response(text=text, content_type="text/plain", charset="utf-8")


# SGLang's admin-optional endpoints among those served here: with --admin-api-key only that key
# opens them (the API key does not), with only --api-key that one does.
ADMIN_OPTIONAL = frozenset({"/flush_cache"})


def _auth_middleware(
    api_key: str | None, admin_api_key: str | None
) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        admin = request.path in ADMIN_OPTIONAL and admin_api_key
        key = admin_api_key if admin else api_key
        if request.path.startswith("/health") or not key:
            return await handler(request)
        if request.headers.get("Authorization") == f"Bearer {key}":
            return await handler(request)
        return json_response({"error": "Unauthorized"}, 401)

    return check


def build_app(rt: Runtime, state: ServerState, ledger: Ledger, life: Lifecycle) -> web.Application:
    """The application with every route SGLang serves that the pipeline uses."""
    keys = (rt.args.get("api_key"), rt.args.get("admin_api_key"))
    middlewares = [_auth_middleware(*keys)] if any(keys) else []
    app = web.Application(middlewares=middlewares, client_max_size=64 * 1024 * 1024)
    ih, ch = InfoHandlers(rt, state, life), CompletionHandlers(rt, state, ledger)
    for path in ("/health", "/health_generate"):
        app.router.add_get(path, ih.health)
    app.router.add_get("/v1/models", ih.models)
    for path in ("/model_info", "/get_model_info"):
        app.router.add_get(path, ih.model_info)
    for path in ("/server_info", "/get_server_info"):
        app.router.add_get(path, ih.server_info)
    app.router.add_route("*", "/flush_cache", ih.flush_cache)
    if rt.args.get("enable_metrics"):
        app.router.add_get("/metrics", ih.metrics)
    app.router.add_post("/v1/chat/completions", ch.chat)
    app.router.add_post("/generate", ch.generate)
    return app
