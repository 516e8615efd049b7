"""The shape of ``result.json`` (schema_version 1) and the steps that fill it in."""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from backends.launch import LaunchPlan
from pipeline.cell.provenance import now_iso, provenance
from pipeline.cluster.slurm_job import job_facts
from pipeline.config.schema import RootConf
from pipeline.results.cell_paths import cell_name as cell_name_of
from pipeline.results.redact import redact_argv
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import CellJson
from pipeline.results.store import config_hash
from pipeline.serving.server import RunningServer
from pipeline.serving.server_kind import ServerKind

_NOT_MEASURED = (
    "faults", "latency_s", "prefill_s_per_1k_tokens", "startup_delay_s", "shutdown_s",
)  # fmt: skip
# Keys added later, left out at their default so that earlier cells keep their config hash.
_LATER_DEFAULTS: dict[str, Any] = {"sampling_spread": 0.0, "timing_model": None,
                   "timing_jitter": 0.0, "logprobs": {}, "prompt_tokens": "words"}  # fmt: skip
_LATER_MODEL_DEFAULTS = {
    "hybrid_mamba": False, "kv_cache_quant_algo": None, "load_format": None, "tokenizer_path": None,
}  # fmt: skip
_LATER_GEOMETRY_DEFAULTS = {"v_head_dim": None}
_LATER_SPEED_DEFAULTS = {"prompts": "random"}
# The parity gate (parity first, issue 39 item 4): parity cells from before it keep their hash.
_LATER_PARITY_DEFAULTS = {"gate": False}
# The long-context and SPEED-Bench evals' nodes (issue 40).
_LATER_EVAL_DEFAULTS = {"longctx": None, "speed_bench": None}


def _without_later_defaults(node: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if not (k in later and v == later[k])}


def _measured_model(conf: RootConf) -> dict[str, Any]:
    model = _without_later_defaults(dataclasses.asdict(conf.model), _LATER_MODEL_DEFAULTS)
    model["attention"] = _without_later_defaults(model["attention"], _LATER_GEOMETRY_DEFAULTS)
    return model


def cell_name(conf: RootConf) -> str:
    """Human-readable identity of a cell: model/variant/kv dtype/skip-softmax factors."""
    skip = conf.skip_softmax
    return cell_name_of(
        conf.model.name, conf.backend.name, conf.kv_dtype.name, skip.prefill, skip.decode
    )


def measured_config(conf: RootConf, kind: ServerKind) -> dict[str, Any]:
    """The settings that define what a cell measures (its hash decides whether to rerun)."""
    data = {
        "model": _measured_model(conf),
        "backend": dataclasses.asdict(conf.backend),
        "kv_dtype": conf.kv_dtype.name,
        "skip_softmax": dataclasses.asdict(conf.skip_softmax),
        "gpu": dataclasses.asdict(conf.gpu),
        "evals": {
            k: _without_later_defaults(dataclasses.asdict(v), _LATER_EVAL_DEFAULTS)
            for k, v in conf.evals.items()
        },
        "server_kind": conf.server.kind,
        "server_extra_args": list(conf.server.extra_args),
    }
    if conf.speed.enabled:  # left out when off, so cells from before it keep their hash
        data["speed"] = _without_later_defaults(
            dataclasses.asdict(conf.speed), _LATER_SPEED_DEFAULTS
        )
    if conf.parity.enabled:  # the same: a cell's hash moves only when it measures parity
        data["parity"] = _without_later_defaults(
            dataclasses.asdict(conf.parity), _LATER_PARITY_DEFAULTS
        )
    if conf.serving.enabled:  # and serving (speculation off also empties model.speculative)
        data["serving"] = dataclasses.asdict(conf.serving)
    if kind.simulated:
        # Fault injection and latency change how a run goes, not what it measures: a rerun
        # without them resumes the same cell.
        sim = dataclasses.asdict(conf.server.simulated)
        measured = {k: v for k, v in sim.items() if k not in _NOT_MEASURED}
        data["simulated"] = _without_later_defaults(measured, _LATER_DEFAULTS)
    return data


def initial_result(conf: RootConf, kind: ServerKind) -> ResultDraft:
    """A result that says ``failed`` until the cell proves otherwise."""
    measured = measured_config(conf, kind)
    identity: CellJson = {
        "name": cell_name(conf),
        "model": conf.model.name,
        "model_path": conf.model.path,
        "variant": conf.backend.name,
        "kv_dtype": conf.kv_dtype.name,
        "skip_softmax": {"prefill": conf.skip_softmax.prefill, "decode": conf.skip_softmax.decode},
        "speculative": dataclasses.asdict(conf.model.speculative),
        "server_kind": conf.server.kind,
    }
    return ResultDraft.start(
        identity,
        config_hash(measured),
        measured,
        simulated=kind.simulated,
        slurm=job_facts(os.environ),  # record_plan adds the rest of the provenance
        started_at=now_iso(),
    )


def record_plan(
    result: ResultDraft, plan: LaunchPlan, argv: list[str], added_env: dict[str, str]
) -> None:
    """What the cell asked the server to run and how it started it (secrets masked)."""
    result.set_plan(
        plan.requested, plan.runs, list(plan.notes), redact_argv(argv), provenance(argv, added_env)
    )


def record_server(result: ResultDraft, server: RunningServer) -> None:
    """Where the server ran and how long it took to become healthy."""
    log = str(server.log_path) if server.log_path else None
    result.set_server(server.base_url, round(server.ready_s, 3), log, now_iso())


def mark(result: ResultDraft, name: str, clock_start: float) -> float:
    """Seconds since the cell started at which a step happened (``timing.marks_s``), returned."""
    at = round(time.monotonic() - clock_start, 3)
    result.mark(name, at)
    return at


def overhead(marks: dict[str, float]) -> dict[str, float | None]:
    """The pipeline's own time, the server's start-up and stop excluded.

    ``to_first_request_s``: process start (``process_start``, negative: before the cell's clock)
    to the first eval request, less the wait for the server.
    ``after_last_response_s``: last eval response to result.json, less the server's stop (a real
    SGLang drains and stops its schedulers for seconds after SIGTERM: ``server_stop_s``).
    """
    launch, ready, verified = marks.get("launch"), marks.get("ready"), marks.get("verified")
    evals_done, stopped, end = marks.get("evals_done"), marks.get("stopped"), marks.get("end")
    before = None
    if launch is not None and ready is not None:
        since = launch - marks.get("process_start", 0.0)  # interpreter, imports, Hydra included
        before = round(since + (verified if verified is not None else ready) - ready, 3)
    after = None if stopped is None or end is None else round(end - stopped, 3)
    # the speed phase runs after the evals, the parity phase after both
    last = marks.get("parity_done", marks.get("speed_done", evals_done))
    stop = None if stopped is None or last is None else round(stopped - last, 3)
    return {"to_first_request_s": before, "after_last_response_s": after, "server_stop_s": stop}
