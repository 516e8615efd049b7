"""The measuring part of a cell: run every eval in its own counter window, gather accept statistics.

Per eval: ``/flush_cache`` (zeroes the server's accept counters), a ``/metrics`` snapshot, the eval
(our client, turn by turn for multi-turn evals, or lm-eval for ``kind: lm_eval``), ``/server_info``
and ``/metrics`` again; ``pipeline.measuring.accept_windows`` turns that into the eval's accept
block and the cell's. Sampling is the eval's ``sampling`` when set, else the model's, so every
variant of a sweep sends identical requests.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import Any

from backends.server_info import ServerInfo
from evals.accounting import summarize_records
from evals.base import Eval, EvalRunError, HarnessEval, RequestTarget, is_harness, is_multi_turn
from evals.eval_conf import SamplingConf
from pipeline.config.schema import RootConf
from pipeline.measuring.accept_windows import Window, accept_warnings, combine, window_accept
from pipeline.measuring.concurrency import client_concurrency, longest_first
from pipeline.measuring.eval_window import MeasureError, check_traffic, close_window, open_window
from pipeline.measuring.evaluation import EvalRun, run_eval, run_turns, write_records
from pipeline.measuring.sequential_run import run_sequential
from pipeline.measuring.server_death import (
    STOPPED,
    answered_count,
    expected_count,
    log_tail,
    server_answers,
    stopped_message,
    summarise_from_disk,
)
from pipeline.measuring.server_watch import ServerWatch
from pipeline.results.baseline_choice import CellKey, key_of_result
from pipeline.results.cell_paths import samples_dir, samples_path
from pipeline.results.eval_block import EvalHead, EvalSummary, eval_block
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_types import CellResult
from pipeline.results.resume import kept_samples
from pipeline.serving import server_api
from pipeline.serving.server import RunningServer

# Server-level and per-request accept lengths may differ by the log-interval effect
# (SGLang updates its totals once per ``--decode-log-interval``, 40 decode iterations by default:
# a short run may leave out up to 39 trailing iterations).
CROSS_CHECK_REL_TOLERANCE = 0.10
# Below this a reasoning model's answers are often cut off (model cards ask 32k; 81920 for AIME).
REASONING_MIN_MAX_TOKENS = 16384


def measure_cell(
    conf: RootConf,
    evals: dict[str, Eval],
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
) -> None:
    """Run every eval against ``server`` and fill the result's eval blocks and accept block."""
    speculative = conf.model.speculative.algorithm is not None
    result.warnings.extend(generation_limit_warnings(conf))
    every: list[dict[str, Any]] = []
    windows: list[Window] = []
    info = server_api.server_info(server.base_url, _key(conf))
    conf = _with_server_concurrency(conf, info)
    result.set_client(conf.client.concurrency)
    watch = ServerWatch.start(info, conf.server.on_mismatch)
    for name, ev in evals.items():
        try:
            records, window = _measure_eval(conf, name, ev, server, cell_dir, result, watch)
        except (server_api.ServerApiError, MeasureError) as err:
            _raise_if_stopped(conf, evals, server, cell_dir, result, name, err)
            raise
        every += records
        windows.append(window)
    cell = combine(windows)
    result.accept = window_accept(every, cell, speculative, CROSS_CHECK_REL_TOLERANCE)
    result.warnings.extend(accept_warnings("cell", result.accept))
    if result.accept.status == "missing" and any(not r.get("error_kind") for r in every):
        # With no answer at all the statistics were never sent: the cell's error check names
        # the errors instead.
        raise MeasureError(
            "missing_accept_metric",
            "speculative decoding was requested but no response carried accept "
            "statistics (return_meta_info / return_spec_tokens_details)",
        )


def _measure_eval(
    conf: RootConf,
    name: str,
    ev: Eval,
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
    watch: ServerWatch,
) -> tuple[list[dict[str, Any]], Window]:
    """One eval in its counter window; its block is on ``result`` before the window closes."""
    idle_s = conf.server.idle_timeout_s
    before = open_window(server, _key(conf), idle_s, name, conf.client.admin_api_key)
    watch.check(server_api.server_info(server.base_url, _key(conf)), f"before eval {name}", result)
    me = key_of_result(CellResult.from_json(result.to_json()), cell_dir)
    records, new, block = _run_one(conf, name, ev, server, cell_dir, me)
    result.set_eval(name, block)  # summarised from its samples even if the server is gone now
    if server.process is not None and server.process.poll() is not None:
        raise MeasureError(STOPPED, "the server exited")
    window, info = close_window(server, _key(conf), new, before)
    watch.check(info, f"during eval {name}", result)
    speculative = conf.model.speculative.algorithm is not None
    accept = window_accept(records, window, speculative, CROSS_CHECK_REL_TOLERANCE)
    result.set_eval_accept(name, accept)
    result.warnings.extend(accept_warnings(f"eval {name}", accept))
    check_traffic(name, accept.traffic, conf.server.on_foreign_traffic)
    return records, window


def _raise_if_stopped(
    conf: RootConf,
    evals: dict[str, Eval],
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
    name: str,
    err: Exception,
) -> None:
    """Turn an error into "the server stopped answering during ..." when that is what happened."""
    if server_answers(server):
        return
    message = stopped_message(
        server, name, answered_count(cell_dir, name), expected_count(evals[name])
    )
    speculative = conf.model.speculative.algorithm is not None
    head = functools.partial(_head, conf)
    summarised = summarise_from_disk(evals, cell_dir, result, head, speculative)
    if summarised:
        message += f"; summarised from the samples on disk: {', '.join(summarised)}"
    raise MeasureError(STOPPED, message, log_tail(server)) from err


def sampling_for(conf: RootConf, name: str) -> tuple[SamplingConf, str]:
    """The sampling settings of eval ``name`` and where they come from (eval | model)."""
    own = conf.evals[name].sampling if name in conf.evals else None
    return (own, "eval") if own is not None else (conf.model.sampling, "model")


def generation_limit_warnings(conf: RootConf) -> list[str]:
    """Warnings for evals whose ``max_tokens`` is likely to cut a reasoning model's answers."""
    kwargs = conf.model.chat_template_kwargs or {}
    thinking = bool(conf.model.reasoning_parser) or any(
        bool(kwargs.get(k)) for k in ("thinking", "enable_thinking")
    )
    if not thinking:
        return []
    out = []
    for name in conf.evals:
        limit = sampling_for(conf, name)[0].max_tokens
        if limit < REASONING_MIN_MAX_TOKENS:
            out.append(
                f"eval {name}: max_tokens {limit} is small for a reasoning model (reasoning "
                "counts against it); truncated answers are counted in truncated_rate, never "
                "graded correct"
            )
    return out


def _with_server_concurrency(conf: RootConf, info: ServerInfo) -> RootConf:
    """The config with the client's concurrency set to the server's running limit, if asked."""
    if not conf.client.follow_server:
        return conf
    wanted = min(client_concurrency(info, conf.client.concurrency), conf.client.max_concurrency)
    client = dataclasses.replace(conf.client, concurrency=wanted)
    return dataclasses.replace(conf, client=client)


def _head(conf: RootConf, name: str, ev: Eval) -> EvalHead:
    """The fields of an eval's result block that say what it is and how it sampled."""
    sampling, source = sampling_for(conf, name)
    kind = conf.evals[name].kind if name in conf.evals else None
    return EvalHead(ev.label, kind, {**dataclasses.asdict(sampling), "source": source})


def _run_one(
    conf: RootConf,
    name: str,
    ev: Eval,
    server: RunningServer,
    cell_dir: Path,
    cell: CellKey,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], EvalSummary]:
    """(all records, records of requests sent now, the eval's result block without accept)."""
    target = _target(conf, name, server)
    head = _head(conf, name, ev)
    if is_harness(ev):
        return _run_harness(ev, target, cell_dir, head)
    path = samples_path(cell_dir, name)
    # A speculative cell asks again for samples that came back without accept statistics.
    kept = kept_samples(path, need_spec=conf.model.speculative.algorithm is not None)
    done = {(r["question_id"], r["repeat"]) for r in kept}
    todo = longest_first([p for p in ev.prompts() if (p.question_id, p.repeat) not in done], kept)
    run = EvalRun(ev, target, path)
    sequential = None
    if is_multi_turn(ev):
        new, wall = run_turns(run, todo, kept)
    elif conf.sequential.enabled and ev.graded:
        new, wall, sequential = run_sequential(
            conf.sequential, run, todo, kept, cell_dir, cell, len(conf.evals)
        )
    else:
        new, wall = run_eval(run, todo) if todo else ([], 0.0)
    records = kept + new
    block = eval_block(
        head,
        summarize_records(records, ev.graded),
        wall_time_s=round(wall, 3),
        resumed_samples=len(kept),
        sequential=sequential,
    )
    return records, new, block


def _target(conf: RootConf, name: str, server: RunningServer) -> RequestTarget:
    """Where eval ``name`` sends its requests and the settings each of them carries."""
    sampling = sampling_for(conf, name)[0]
    kwargs = conf.model.chat_template_kwargs
    return RequestTarget(server.base_url, _model(conf), conf.client, sampling, kwargs)


def _run_harness(
    ev: HarnessEval, target: RequestTarget, cell_dir: Path, head: EvalHead
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], EvalSummary]:
    started = time.monotonic()
    try:
        run = ev.run(target, samples_dir(cell_dir))
    except EvalRunError as err:
        raise MeasureError("lm_eval_failed", str(err)) from err
    wall = time.monotonic() - started
    records = write_records(samples_path(cell_dir, ev.name), run.records, mode="w")
    block = eval_block(
        head,
        summarize_records(records, run.graded),
        wall_time_s=round(wall, 3),
        resumed_samples=0,  # lm-eval runs the whole task again on a rerun
        lm_eval=run.lm_eval,
    )
    return records, records, block


def _model(conf: RootConf) -> str:
    return conf.model.served_model_name or conf.model.path


def _key(conf: RootConf) -> str | None:
    return conf.client.api_key
