"""The measuring part of a cell: flush counters, run every eval, gather accept statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.base import Eval
from evals.metrics import summarize
from pipeline import server_api
from pipeline.accept_stats import cross_check, server_accept_length, summarize_accept
from pipeline.evaluation import run_eval, samples_path
from pipeline.resume import kept_samples
from pipeline.schema import RootConf
from pipeline.server import RunningServer, tail

# Server-level and per-request accept lengths may differ by the log-interval effect
# (reference/sglang.md 2.3: up to 39 of every 40 decode iterations left out on short runs).
CROSS_CHECK_REL_TOLERANCE = 0.10


class MeasureError(RuntimeError):
    """Measuring stopped for a reason that fails the cell (``kind`` goes into result.json)."""

    def __init__(self, kind: str, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.kind, self.log_tail = kind, log_tail


def measure_cell(
    conf: RootConf,
    evals: dict[str, Eval],
    server: RunningServer,
    cell_dir: Path,
    result: dict[str, Any],
) -> None:
    """Run every eval against ``server`` and fill ``result['evals']`` and ``result['accept']``."""
    key = conf.client.api_key
    server_api.flush_cache(server.base_url, key)
    metrics_before = server_api.metrics_text(server.base_url, key)
    speculative = conf.model.speculative.algorithm is not None
    model = conf.model.served_model_name or conf.model.path
    every: list[dict[str, Any]] = []
    this_run: list[dict[str, Any]] = []  # the server's counters only saw these
    for name, ev in evals.items():
        path = samples_path(cell_dir, name)
        kept = kept_samples(path, need_spec=speculative)
        done = {(r["question_id"], r["repeat"]) for r in kept}
        todo = [p for p in ev.prompts() if (p.question_id, p.repeat) not in done]
        new, wall = (
            run_eval(
                ev,
                todo,
                server.base_url,
                model,
                conf.client,
                conf.model.sampling,
                conf.model.chat_template_kwargs,
                path,
            )
            if todo
            else ([], 0.0)
        )
        _check_alive(server)
        records = kept + new
        result["evals"][name] = {
            "label": getattr(ev, "label", name),
            **summarize(records),
            "wall_time_s": round(wall, 3),
            "resumed_samples": len(kept),
            "accept": summarize_accept(records, speculative),
        }
        every += records
        this_run += new
    per_request = summarize_accept(every, speculative)
    info = server_api.server_info(server.base_url, key)
    server_level = server_accept_length(info)
    metrics = _metric_deltas(metrics_before, server_api.metrics_text(server.base_url, key))
    check = cross_check(
        summarize_accept(this_run, speculative), server_level, CROSS_CHECK_REL_TOLERANCE
    )
    result["accept"] = {
        **per_request,
        "server_avg_spec_accept_length": server_level,
        "metrics": metrics,
        "cross_check": check,
    }
    _warn_on_disagreement(result)
    if per_request["status"] == "missing":
        raise MeasureError(
            "missing_accept_metric",
            "speculative decoding was requested but no response carried accept "
            "statistics (return_meta_info / return_spec_tokens_details)",
        )


def _check_alive(server: RunningServer) -> None:
    if server.process is not None and server.process.poll() is not None:
        raise MeasureError(
            "server_died",
            f"the server exited with code {server.process.returncode} during the "
            "evals; the samples answered before are kept",
            tail(server.log_path),
        )


def _metric_deltas(before: str | None, after: str | None) -> dict[str, Any]:
    names = (
        "sglang:generation_tokens_total",
        "sglang:spec_verify_calls_total",
        "sglang:num_requests_total",
    )
    deltas: dict[str, Any] = {}
    for name in names:
        a, b = server_api.metric_total(before, name), server_api.metric_total(after, name)
        deltas[name] = None if a is None or b is None else b - a
    gen, verify = deltas[names[0]], deltas[names[1]]
    deltas["accept_length"] = gen / verify if gen is not None and verify else None
    return deltas


def _warn_on_disagreement(result: dict[str, Any]) -> None:
    check = result["accept"]["cross_check"]
    if check.get("agrees") is False:
        result["warnings"].append(
            f"server-level avg_spec_accept_length {check['server']:.3f} differs from the "
            f"per-request totals {check['per_request']:.3f} by "
            f"{100 * check['relative_difference']:.1f}% (more than the log-interval effect)"
        )
