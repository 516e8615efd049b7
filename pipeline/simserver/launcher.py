"""Start-up and shutdown of the simulated server process (the thin shell around the pure parts).

Order as in SGLang: argument errors end the process before anything binds (traceback, exit 1);
the scheduler child starts; the port opens (``Uvicorn running on ...``); health answers 503 for
``startup_delay_s`` and then 200 (``The server is fired up and ready to roll!``). SIGTERM drains
in-flight requests, stops the child and exits 0; SIGQUIT from the child kills the process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from pipeline.simserver import info, jit_cache
from pipeline.simserver.app import Lifecycle, build_app
from pipeline.simserver.args import parse_argv, sim_config_path, template_flags
from pipeline.simserver.effects import cell_targets, check_effect_keys
from pipeline.simserver.faults import Faults
from pipeline.simserver.logprob_replies import cell_model
from pipeline.simserver.model import AnswerIndex
from pipeline.simserver.nodes import Rendezvous, rendezvous, serve_as_other_node
from pipeline.simserver.resolve import resolve_server_args
from pipeline.simserver.runtime import Runtime, acceptance_thresholds, cell_id
from pipeline.simserver.served import Flavour
from pipeline.simserver.sglang_defaults import defaults_for
from pipeline.simserver.simconfig import SimConfigError, load_answer_key, load_sim_config
from pipeline.simserver.state import Ledger, ServerState
from pipeline.simserver.surface import surface_for
from pipeline.simserver.timing import prefill_skip_factor, timing_model

log = logging.getLogger("sglang.simserver")
_IMPORTED = time.perf_counter()  # start-up durations count from here, as measured
CHILD_SCRIPT = Path(__file__).with_name("child.py")
_SUMMARY_KEYS = (
    "model_path", "served_model_name", "host", "port", "tp_size", "dp_size", "attention_backend",
    "prefill_attention_backend", "decode_attention_backend", "kv_cache_dtype", "page_size",
    "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "speculative_attention_mode", "max_running_requests",
    "random_seed", "enable_metrics", "api_key", "admin_api_key",  # SGLang prints its keys too
)  # fmt: skip


def prepare(argv: Sequence[str], env: Mapping[str, str]) -> Runtime:
    """Parse, validate and resolve everything the server needs before it binds.

    Raises:
        SimConfigError: a bad --sim-config, answer key or effect key (exit 2).
        ValueError, AssertionError: SGLang's argument errors or the reject_message fault (exit 1).
    """
    path = sim_config_path(argv)
    if path is None:
        raise SimConfigError("--sim-config FILE.json is required (the simulated model)")
    conf = load_sim_config(path)
    ns, unknown = parse_argv(argv, conf.sglang_version)
    faults = Faults.from_dict(dataclasses.asdict(conf.faults))
    if faults.reject_message:
        raise ValueError(faults.reject_message)
    warnings: list[str] = []
    resolved = resolve_server_args(ns, env, warnings)
    for message in [*warnings, *([faults.log_warning] if faults.log_warning else [])]:
        log.warning(message)
    extra, ignored = template_flags(unknown, defaults_for(conf.sglang_version).server_args)
    if ignored:
        log.warning("Simulated server ignores these arguments: %s", " ".join(ignored))
    args = info.server_args(resolved, extra, conf.sglang_version)
    try:
        check_effect_keys(conf.effects, args)
        args.update(_served_instead(faults, args))
    except ValueError as exc:
        raise SimConfigError(f"--sim-config {path}: {exc}") from exc
    try:
        factor = prefill_skip_factor(env)
        timing = timing_model(conf.timing_model, args, conf.timing_jitter, factor,
                              copied_pool(args, conf.sglang_version))  # fmt: skip
    except ValueError as exc:
        raise SimConfigError(f"--sim-config {path}: {exc}") from exc
    rendezvous(args)  # several nodes need --dist-init-addr (SGLang's argument error, exit 1)
    targets = cell_targets(conf.accuracy, conf.accept_length, conf.effects, args, env)
    index = AnswerIndex(load_answer_key(conf.answer_key) if conf.answer_key else [])
    ndt = int(args["speculative_num_draft_tokens"] or 0) if args["speculative_algorithm"] else 0
    flavour = Flavour(
        conf.sglang_version, ndt, bool(args["enable_metrics"]), not faults.missing_spec_keys
    )
    words = [a for a in argv if not a.startswith("--sim-config")]
    return Runtime(
        conf=conf, faults=faults, args=args, version=conf.sglang_version, targets=targets,
        index=index, flavour=flavour, cell_id=cell_id(args, env, targets),
        env_vars=info.exposed_env_vars(env, conf.sglang_version),
        launch_command=shlex.join(words),  # live 0.5.23: the flags alone, no interpreter
        startup_time=info.startup_time(time.perf_counter() - _IMPORTED, conf.sglang_version),
        ascending=acceptance_thresholds(args, targets),
        sampling_nonce=secrets.token_hex(8) if conf.sampling_spread > 0 else "",
        timing=timing,
        logprobs=cell_model(conf, targets.matched, secrets.randbits(64), bool(ndt)),
    )  # fmt: skip


def copied_pool(args: Mapping[str, Any], version: str) -> int:
    """KV pool tokens an fmha_v2 prefill of this release copies on each call (0: none)."""
    return info.pool_tokens(args) if surface_for(version).fmha_v2_copies_pool else 0


def _served_instead(faults: Faults, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``serve_instead`` fault's keys (a server that runs something else than asked)."""
    unknown = sorted(k for k, _ in faults.serve_instead if k not in args)
    if unknown:
        raise ValueError(f"faults.serve_instead: {unknown} are not /server_info keys")
    if faults.serve_instead:
        log.warning("Simulated misconfiguration: serving %s", dict(faults.serve_instead))
    return dict(faults.serve_instead)


def spawn_child(rt: Runtime) -> subprocess.Popen[bytes]:
    """Start the scheduler stand-in in this process group (it outlives a killed parent)."""
    cmd = ["sglang::scheduler_TP0", str(CHILD_SCRIPT)]
    if rt.faults.crash_at_start:
        delay = max(0.2, rt.conf.startup_delay_s * 0.5)
        cmd += ["--crash-after", str(delay), "--crash-message", rt.faults.crash_at_start]
    return subprocess.Popen(cmd, executable=sys.executable, stdin=subprocess.DEVNULL)


def _stop_child(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=2)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


async def serve(rt: Runtime) -> int:
    """Run the HTTP server until SIGTERM (exit code 0) or a bind failure (1).

    With ``--nnodes N``: node 0 also holds the rendezvous; the other nodes only join it
    (``pipeline.simserver.nodes``).
    """
    meet = rendezvous(rt.args)
    if meet is not None and int(rt.args["node_rank"]) > 0:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        return await serve_as_other_node(*meet, int(rt.args["node_rank"]), stop)
    held = Rendezvous(int(rt.args.get("nnodes") or 1) - 1)
    try:
        if meet is not None:
            await held.open(*meet)
    except OSError as exc:
        log.error("Failed to open the rendezvous %s: %s", rt.args["dist_init_addr"], exc)
        return 1
    return await _serve_http(rt, held)


async def _serve_http(rt: Runtime, held: Rendezvous) -> int:
    state = ServerState(
        int(rt.args["dp_size"]),
        int(rt.args["decode_log_interval"]),
        rt.flavour.num_draft_tokens,
        foreign_requests=rt.faults.foreign_requests,
        foreign_running=1 if rt.faults.busy else 0,
    )
    ledger, life = Ledger(rt.conf.ledger), Lifecycle()
    child = spawn_child(rt)
    runner = web.AppRunner(
        build_app(rt, state, ledger, life), access_log=None, handle_signals=False
    )
    await runner.setup()
    host, port = str(rt.args["host"]), int(rt.args["port"])
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        log.error("Failed to bind http://%s:%d: %s", host, port, exc)
        _stop_child(child)
        return 1
    log.info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, port)
    stop = _install_signals(child, life)
    ready = None
    if not rt.faults.crash_at_start and not rt.faults.never_healthy:
        ready = asyncio.ensure_future(_ready_when_joined(rt.conf.startup_delay_s, held, life))
    await stop.wait()
    if ready is not None:
        ready.cancel()  # stopped before every node joined: never ready
    held.close()  # the schedulers go first: other nodes lose node 0 while HTTP still drains
    await _drain(state)
    await asyncio.sleep(rt.conf.shutdown_s)
    _stop_child(child)
    await runner.cleanup()
    ledger.close()
    return 0


async def _ready_when_joined(delay_s: float, held: Rendezvous, life: Lifecycle) -> None:
    """Ready after the start-up delay and once every other node has joined."""
    await asyncio.sleep(delay_s)
    await held.complete.wait()
    _mark_ready(life)


def _mark_ready(life: Lifecycle) -> None:
    log.info('127.0.0.1 - "POST /generate HTTP/1.1" 200 OK')
    life.ready = True
    log.info("The server is fired up and ready to roll!")


def _install_signals(child: subprocess.Popen[bytes], life: Lifecycle) -> asyncio.Event:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def on_term(signum: int) -> None:
        log.info(
            "SIGTERM received. signum=%d frame=None. Draining requests and shutting down...", signum
        )
        life.shutting_down = True
        stop.set()

    def on_quit() -> None:
        log.error("Received sigquit from a child process. It usually means the child failed.")
        logging.shutdown()
        _stop_child(child)
        os.kill(os.getpid(), signal.SIGKILL)  # SGLang's kill_process_tree includes the parent

    loop.add_signal_handler(signal.SIGTERM, on_term, signal.SIGTERM)
    loop.add_signal_handler(signal.SIGINT, on_term, signal.SIGINT)
    loop.add_signal_handler(signal.SIGQUIT, on_quit)
    return stop


async def _drain(state: ServerState) -> None:
    """Wait for in-flight requests like SGLang's sigterm watchdog (a hung one blocks forever)."""
    waited = 0.0
    while state.in_flight:
        if waited % 5.0 < 0.05:
            log.info("Gracefully exiting... Remaining number of requests %d", state.in_flight)
        await asyncio.sleep(0.05)
        waited += 0.05


def _configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s] %(message)s",
        datefmt="%Y-%m-%d %H:%M:%S",
        stream=sys.stderr,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pipeline.simserver <sglang launch args> --sim-config FILE.json``."""
    words = list(sys.argv[1:] if argv is None else argv)
    _configure_logging()
    try:
        rt = prepare(words, os.environ)
    except SimConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, AssertionError):
        traceback.print_exc()
        return 1
    logging.getLogger().setLevel(str(rt.args["log_level"]).upper())
    jit_cache.compile_kernels(rt.args, os.environ)
    summary = ", ".join(f"{k}={rt.args.get(k)!r}" for k in _SUMMARY_KEYS)
    log.info("server_args=ServerArgs(%s, ...)", summary)
    t = rt.targets
    log.info(
        "Simulated SGLang %s: accuracy=%.3f accept_length=%.3f (effects matched: %s)",
        rt.version, t.accuracy, t.accept_length, list(t.matched),
    )  # fmt: skip
    if rt.logprobs is not None and rt.logprobs.noises:
        log.info("Logprob noise: %s", [(n.sigma, n.from_position) for n in rt.logprobs.noises])
    if rt.conf.sampling_spread > 0:
        log.info("Sampling noise: sampling_spread=%.3f nonce=%s", rt.conf.sampling_spread,
                 rt.sampling_nonce)  # fmt: skip
    log.info(
        "max_total_num_tokens=%d, chunked_prefill_size=%s, max_prefill_tokens=%s, "
        "max_running_requests=%s, context_len=%d, available_gpu_mem=74.52 GB",
        info.pool_tokens(rt.args), rt.args["chunked_prefill_size"], rt.args["max_prefill_tokens"],
        rt.args["max_running_requests"], info.context_len(rt.args),
    )  # fmt: skip
    return asyncio.run(serve(rt))
