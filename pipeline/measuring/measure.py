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
from collections.abc import Sequence
from pathlib import Path

from backends.server_info import ServerInfo
from evals.accounting import summarize_records
from evals.base import Eval, EvalRunError, HarnessEval, RequestTarget, is_harness, is_multi_turn
from evals.eval_conf import SamplingConf
from evals.longctx import LongCtxEval, context_refusals
from evals.sample_line import SampleJson
from pipeline.measuring.accept_stats import spec_records
from pipeline.measuring.accept_windows import (
    Window,
    accept_warnings,
    combine,
    fewest_iterations,
    window_accept,
)
from pipeline.measuring.concurrency import client_concurrency, longest_first
from pipeline.measuring.eval_window import MeasureError, check_traffic, close_window, open_window
from pipeline.measuring.evaluation import EvalRun, run_eval, run_turns, write_records
from pipeline.measuring.log_interval import left_out_share
from pipeline.measuring.measure_plan import MeasurePlan
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
from pipeline.measuring.speed.run import context_length
from pipeline.results.baseline_choice import CellKey, key_of_result
from pipeline.results.cell_error import CellError
from pipeline.results.cell_paths import samples_dir, samples_path
from pipeline.results.eval_block import EvalHead, EvalSummary, eval_block
from pipeline.results.result_draft import ResultDraft
from pipeline.results.resume import kept_samples, resuming_line
from pipeline.serving import server_api
from pipeline.serving.server import RunningServer

# Server-level and per-request accept lengths may differ by the log-interval effect
# (SGLang updates its totals once per ``--decode-log-interval``, 40 decode iterations by default:
# a short run may leave out up to 39 trailing iterations).
CROSS_CHECK_REL_TOLERANCE = 0.10
# Below this a reasoning model's answers are often cut off (model cards ask 32k; 81920 for AIME).
REASONING_MIN_MAX_TOKENS = 16384


def measure_cell(
    plan: MeasurePlan,
    evals: dict[str, Eval],
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
) -> None:
    """Run every eval against ``server`` and fill the result's eval blocks and accept block."""
    speculative = plan.speculative
    result.warnings.extend(generation_limit_warnings(plan))
    every: list[SampleJson] = []
    windows: list[Window] = []
    info = server_api.server_info(server.base_url, plan.api_key)
    _refuse_overlong(plan, evals, server)
    plan = _with_server_concurrency(plan, info)
    result.set_client(plan.client.concurrency)
    watch = ServerWatch.start(info, plan.on_mismatch)
    for name, ev in evals.items():
        try:
            records, window = _measure_eval(plan, name, ev, server, cell_dir, result, watch)
        except (server_api.ServerApiError, MeasureError) as err:
            _raise_if_stopped(plan, evals, server, cell_dir, result, name, err)
            raise
        every += records
        windows.append(window)
    cell = combine(windows)
    share = left_out_share([_steps(w.new) for w in windows], plan.client.concurrency)
    result.accept = window_accept(every, cell, speculative, CROSS_CHECK_REL_TOLERANCE, share)
    result.warnings.extend(accept_warnings("cell", result.accept))
    if result.accept.status == "missing" and any(not r.get("error_kind") for r in every):
        # With no answer at all the statistics were never sent: the cell's error check names
        # the errors instead.
        raise MeasureError(
            "missing_accept_metric",
            "speculative decoding was requested but no response carried accept "
            "statistics (return_meta_info / return_spec_tokens_details)",
        )


def _refuse_overlong(plan: MeasurePlan, evals: dict[str, Eval], server: RunningServer) -> None:
    """Refuse, before the first request, long-context prompts the server's context cannot hold."""
    if not any(isinstance(ev, LongCtxEval) for ev in evals.values()):
        return
    context = context_length(server.base_url, plan.api_key)
    budget = {name: sampling_for(plan, name)[0].max_tokens for name in evals}
    refusals = [] if context is None else context_refusals(evals, context, budget)
    if refusals:
        raise CellError("config", "; ".join(refusals))


def _measure_eval(
    plan: MeasurePlan,
    name: str,
    ev: Eval,
    server: RunningServer,
    cell_dir: Path,
    result: ResultDraft,
    watch: ServerWatch,
) -> tuple[list[SampleJson], Window]:
    """One eval in its counter window; its block is on ``result`` before the window closes."""
    idle_s = plan.idle_timeout_s
    before = open_window(server, plan.api_key, idle_s, name, plan.client.admin_api_key)
    watch.check(
        server_api.server_info(server.base_url, plan.api_key), f"before eval {name}", result
    )
    me = key_of_result(result.as_result(), cell_dir)
    records, new, block = _run_one(plan, name, ev, server, cell_dir, me)
    result.set_eval(name, block)  # summarised from its samples even if the server is gone now
    if server.process is not None and server.process.poll() is not None:
        raise MeasureError(STOPPED, "the server exited")
    window, info = close_window(server, plan.api_key, new, before)
    watch.check(info, f"during eval {name}", result)
    steps = _steps(new)
    share = left_out_share([steps], plan.client.concurrency)
    accept = window_accept(records, window, plan.speculative, CROSS_CHECK_REL_TOLERANCE, share)
    result.set_eval_accept(name, accept)
    iterations = fewest_iterations(steps, plan.client.concurrency)
    result.warnings.extend(accept_warnings(f"eval {name}", accept, iterations))
    check_traffic(name, accept.traffic, plan.on_foreign_traffic)
    return records, window


def _steps(records: Sequence[SampleJson]) -> list[int]:
    """Each request's verify steps (those that carried accept statistics)."""
    return [int(spec["verify_ct"]) for spec in spec_records(records)]


def _raise_if_stopped(
    plan: MeasurePlan,
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
    head = functools.partial(_head, plan)
    summarised = summarise_from_disk(evals, cell_dir, result, head, plan.speculative)
    if summarised:
        message += f"; summarised from the samples on disk: {', '.join(summarised)}"
    raise MeasureError(STOPPED, message, log_tail(server)) from err


def sampling_for(plan: MeasurePlan, name: str) -> tuple[SamplingConf, str]:
    """The sampling settings of eval ``name`` and where they come from (eval | model)."""
    own = plan.evals[name].sampling if name in plan.evals else None
    return (own, "eval") if own is not None else (plan.sampling, "model")


def generation_limit_warnings(plan: MeasurePlan) -> list[str]:
    """Warnings for evals whose ``max_tokens`` is likely to cut a reasoning model's answers."""
    if not plan.thinking:
        return []
    out = []
    for name in plan.evals:
        limit = sampling_for(plan, name)[0].max_tokens
        if limit < REASONING_MIN_MAX_TOKENS:
            out.append(
                f"eval {name}: max_tokens {limit} is small for a reasoning model (reasoning "
                "counts against it); truncated answers are counted in truncated_rate, never "
                "graded correct"
            )
    return out


def _with_server_concurrency(plan: MeasurePlan, info: ServerInfo) -> MeasurePlan:
    """The plan with the client's concurrency set to the server's running limit, if asked."""
    if not plan.client.follow_server:
        return plan
    wanted = min(client_concurrency(info, plan.client.concurrency), plan.client.max_concurrency)
    return plan.with_concurrency(wanted)


def _head(plan: MeasurePlan, name: str, ev: Eval) -> EvalHead:
    """The fields of an eval's result block that say what it is and how it sampled."""
    sampling, source = sampling_for(plan, name)
    kind = plan.evals[name].kind if name in plan.evals else None
    return EvalHead(ev.label, kind, {**dataclasses.asdict(sampling), "source": source})


def _run_one(
    plan: MeasurePlan,
    name: str,
    ev: Eval,
    server: RunningServer,
    cell_dir: Path,
    cell: CellKey,
) -> tuple[list[SampleJson], list[SampleJson], EvalSummary]:
    """(all records, records of requests sent now, the eval's result block without accept)."""
    target = _target(plan, name, server)
    head = _head(plan, name, ev)
    if is_harness(ev):
        return _run_harness(ev, target, cell_dir, head)
    path = samples_path(cell_dir, name)
    # A speculative cell asks again for samples that came back without accept statistics.
    kept = kept_samples(path, need_spec=plan.speculative)
    done = {(r["question_id"], r["repeat"]) for r in kept}
    todo = longest_first([p for p in ev.prompts() if (p.question_id, p.repeat) not in done], kept)
    if kept:
        print(resuming_line(name, len(kept), len(todo)), flush=True)
    run = EvalRun(ev, target, path)
    sequential = None
    if is_multi_turn(ev):
        new, wall = run_turns(run, todo, kept)
    elif plan.sequential.enabled and ev.graded:
        new, wall, sequential = run_sequential(
            plan.sequential, run, todo, kept, cell_dir, cell, len(plan.evals)
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


def _target(plan: MeasurePlan, name: str, server: RunningServer) -> RequestTarget:
    """Where eval ``name`` sends its requests and the settings each of them carries."""
    sampling = sampling_for(plan, name)[0]
    kwargs = plan.chat_template_kwargs
    return RequestTarget(server.base_url, plan.model_name, plan.client, sampling, kwargs)


def _run_harness(
    ev: HarnessEval, target: RequestTarget, cell_dir: Path, head: EvalHead
) -> tuple[list[SampleJson], list[SampleJson], EvalSummary]:
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
