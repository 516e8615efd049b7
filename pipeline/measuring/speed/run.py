"""The speed phase of a cell: time prefill and decode on the cell's own server.

Why the server and not SGLang's offline ``sglang.benchmark.one_batch``: this is the server users
run, launched with the variant's real argv, its scheduler and CUDA graphs as configured, and
``/server_info`` verified like any cell's, so a speed figure and an accuracy verdict come from one
launch. The times are the server's own (``meta_info`` with ``--enable-metrics``:
``pipeline.measuring.speed.timing``), so HTTP and JSON stay outside them. ``one_batch``
(``benchmarks/live_h200/speed_prefill.sh``) stays the independent cross-check.

Per shape: warm-up runs (discarded), then the repeats; the KV cache is flushed first and every
random-id request has its own prefix, so nothing is served from the radix cache. An eval's
prompts (``speed.prompts=eval:NAME``: ``prompts``) share their chat template's opening, so
the cache is flushed before each of their runs too.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from pipeline.config.schema import SpeedConf
from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.speed.gpu_sampler import sampled_gpus
from pipeline.measuring.speed.log_warnings import release_costs, speed_log_warnings
from pipeline.measuring.speed.plan import (
    PREFILL,
    SpeedShape,
    fitting_shapes,
    generate_body,
    vocab_range,
    wanted_shapes,
)
from pipeline.measuring.speed.prompts import PromptPool, RunPrompts, shape_note
from pipeline.measuring.speed.timing import (
    SpeedTimingError,
    accept_length,
    answer_timings,
    decode_span_s,
    decoded_tokens,
    prefill_span_s,
    spread,
)
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import SpeedJson, SpeedPointJson
from pipeline.serving import server_api
from pipeline.serving.server import RunningServer

log = logging.getLogger(__name__)

METHOD = (
    "the cell's own server, native /generate with input_ids; prefill = the batch's "
    "prefill_finished_time - forward_entry_time, decode = its last request_finished_ts - first "
    "prefill_finished_time (meta_info, --enable-metrics)"
)


class SpeedClient:
    """Where a phase's ``/generate`` requests go: the server, its keys and the per-call timeout.

    ``phase`` names the phase in errors and is their kind (``speed``; parity re-uses the client).
    """

    def __init__(
        self,
        base_url: str,
        keys: tuple[str | None, str | None],
        timeout_s: float,
        phase: str = "speed",
    ) -> None:
        self.base_url, self.timeout_s, self.phase = base_url, timeout_s, phase
        self.api_key, self.admin_key = keys  # the admin key opens /flush_cache when set

    def flush(self) -> None:
        """Empty the server's radix cache between runs (it is idle then).

        Raises:
            MeasureError: the server refused, so the phase ends with the points so far kept.
        """
        try:
            # SGLang's admin key opens /flush_cache when set, else the API key does
            server_api.flush_cache(self.base_url, self.admin_key or self.api_key)
        except server_api.ServerApiError as err:
            raise MeasureError("speed", f"speed: before a run: {err}") from err

    def generate(self, body: dict[str, Any]) -> object:
        """POST ``/generate`` and return its JSON answer.

        Raises:
            MeasureError: the server answered an error, nothing answered, or not JSON.
        """
        req = urllib.request.Request(
            self.base_url + "/generate", data=json.dumps(body).encode(), method="POST"
        )
        req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as err:
            detail = err.read()[:300]
            raise MeasureError(
                self.phase, f"{self.phase}: POST /generate answered HTTP {err.code}: {detail!r}"
            ) from err
        except (OSError, ValueError) as err:
            raise MeasureError(self.phase, f"{self.phase}: POST /generate failed: {err}") from err


def context_length(base_url: str, api_key: str | None) -> int | None:
    """The server's ``max_model_len`` from ``/v1/models`` (None when it does not say)."""
    data = server_api.get_json(base_url, "/v1/models", api_key).get("data")
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    found = first.get("max_model_len")
    return found if type(found) is int else None


def model_vocab_size(model_path: str) -> int | None:
    """``vocab_size`` of ``model_path/config.json`` when the model is a local folder."""
    config = Path(model_path) / "config.json"
    try:
        found = json.loads(config.read_text()).get("vocab_size")
    except (OSError, ValueError, AttributeError):
        return None
    return found if type(found) is int else None


def _time_shape(
    client: SpeedClient, shape: SpeedShape, prompts_of: RunPrompts, serial: int
) -> tuple[float, list[Any]]:
    """One run of ``shape``: its span in ms and the requests' timings."""
    prompts = prompts_of.of_run(shape, serial, client.flush)
    timings = answer_timings(client.generate(generate_body(shape, prompts)))
    span = prefill_span_s(timings) if shape.phase == PREFILL else decode_span_s(timings)
    return span * 1000.0, timings


def measure_point(
    client: SpeedClient, conf: SpeedConf, shape: SpeedShape, prompts: RunPrompts, serial: int
) -> tuple[SpeedPointJson, int]:
    """``shape`` after its warm-up, ``conf.repeats`` times; the point and the next serial."""
    for _ in range(conf.warmup):
        _time_shape(client, shape, prompts, serial)
        serial += shape.batch
    times, rates, every = [], [], []
    for _ in range(conf.repeats):
        ms, timings = _time_shape(client, shape, prompts, serial)
        serial += shape.batch
        times.append(ms)
        every += timings
        if shape.phase != PREFILL:
            rates.append(decoded_tokens(timings) / max(ms / 1000.0, 1e-9))
    middle = spread(times)
    point: SpeedPointJson = {
        "phase": shape.phase, "batch": shape.batch, "prompt_tokens": shape.prompt_tokens,
        "new_tokens": shape.new_tokens, "times_ms": times, "median_ms": middle.median,
        "min_ms": middle.low, "max_ms": middle.high,
    }  # fmt: skip
    if shape.phase != PREFILL:
        point["tokens_per_s"] = rates
        point["accept_length"] = accept_length(every)
    return point, serial


def _run_prompts(conf: SpeedConf, pool: PromptPool | None, model_path: str) -> RunPrompts:
    if pool is not None:
        return RunPrompts(None, pool, conf.seed)
    try:
        ids = vocab_range(conf, model_vocab_size(model_path))
    except ValueError as err:
        raise MeasureError("speed", f"speed: {err}") from err
    return RunPrompts(ids, None, conf.seed)


def _sendable(
    shapes: list[SpeedShape], pool: PromptPool | None
) -> tuple[list[SpeedShape], list[str]]:
    """The shapes the pool has prompts for (every one for random ids), and a note per other."""
    notes = {s: shape_note(pool, s) for s in shapes} if pool is not None else {}
    return [s for s in shapes if notes.get(s) is None], [n for n in notes.values() if n]


def measure_speed(
    conf: SpeedConf, client: SpeedClient, model_path: str, pool: PromptPool | None = None
) -> SpeedJson:
    """Every shape that fits the server, timed alone on it; the ``speed`` block of result.json.

    A shape that fails ends the phase: the block then holds the points measured before it and
    ``error`` (the caller records it and fails the cell, so nothing measured is lost).
    """
    context = context_length(client.base_url, client.api_key)
    fitting, notes = fitting_shapes(wanted_shapes(conf), context)
    shapes, unsendable = _sendable(fitting, pool)
    prompts = _run_prompts(conf, pool, model_path)
    client.flush()
    points: list[SpeedPointJson] = []
    speed: SpeedJson = {
        "method": METHOD, "warmup": conf.warmup, "repeats": conf.repeats, "spread": "min_max",
        "context_len": context, **prompts.describe(),
        "notes": notes + unsendable, "points": points,
    }  # fmt: skip
    with sampled_gpus(conf.gpu_sample_ms) as gpu_samples:
        speed["gpu_samples"] = gpu_samples  # filled in when sampling stops
        serial = 0
        for shape in shapes:
            log.info("speed: %s (%d warm-up, %d repeats)", shape.label, conf.warmup, conf.repeats)
            try:
                point, serial = measure_point(client, conf, shape, prompts, serial)
            except (MeasureError, SpeedTimingError) as err:
                speed["error"] = f"speed: {shape.label}: {err}"
                break
            points.append(point)
    return speed


def speed_phase(
    conf: SpeedConf, server: RunningServer, plan_keys: tuple[str | None, str | None],
    model: tuple[str, PromptPool | None], result: ResultDraft,
) -> None:  # fmt: skip
    """Run the speed phase on ``server`` (after the evals: alone on it) into ``result``.

    Args:
        conf: ``speed`` of the config.
        server: the cell's running, verified server.
        plan_keys: the API key and SGLang's admin key (``/flush_cache``).
        model: ``model.path`` (a local model's ``config.json`` gives the random ids' vocabulary)
            and the eval prompts ``speed.prompts`` asks for (None: random ids).
        result: the cell's result; gets its ``speed`` block.
    """
    client = SpeedClient(server.base_url, plan_keys, conf.request_timeout_s)
    speed = measure_speed(conf, client, *model)
    log = server.log_path  # None for server=external: its log is not ours to read
    if log is not None and log.is_file():
        speed["log_warnings"] = speed_log_warnings(log.read_text(errors="replace"))
    so_far = result.as_result()  # the kernels verified, the release found
    version = so_far.cell.sglang_version
    speed["release_notes"] = release_costs(so_far.runs.get("prefill"), version)
    result.set_speed(speed)
    if "error" in speed:  # the points before it stay in result.json
        raise MeasureError("speed", speed["error"])
