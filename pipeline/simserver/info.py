"""Bodies of the informational endpoints: /server_info, /model_info, /v1/models (pure).

``/server_info`` is SGLang's ``server_args`` table (every key of the imitated release's live
response, see ``sglang_defaults``) overwritten by the resolved flags, plus the scheduler fields and
one ``internal_states`` entry per DP rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from pipeline.simserver.resolve import model_architecture
from pipeline.simserver.sglang_defaults import defaults_for
from pipeline.simserver.surface import surface_for

DEFAULT_CONTEXT_LEN = 32768
TOKEN_CAPACITY = 10_897_984
# The pool TOKEN_CAPACITY is at: --mem-fraction-static as the simulated server resolves it unset.
CAPACITY_MEM_FRACTION = 0.85
# Graph backends when graphs are on: full decode graphs, breakable prefill graphs (live 0.5.23).
_GRAPH_BACKENDS = {"decode": "full", "prefill": "breakable"}


def cuda_graph_config(disabled: bool, version: str = "0.5.19") -> dict[str, Any]:
    """``cuda_graph_config`` as resolved: the release's recorded layout, backends by the flag."""
    recorded = defaults_for(version).cuda_graph_config
    return {
        phase: {**layout, "backend": "disabled" if disabled else _GRAPH_BACKENDS[phase]}
        for phase, layout in recorded.items()
    }


def pool_tokens(args: Mapping[str, Any]) -> int:
    """The KV pool's size in tokens (``max_total_num_tokens``).

    ``--max-total-tokens`` when given, else TOKEN_CAPACITY scaled by ``--mem-fraction-static``:
    a real pool grows with the memory fraction.
    """
    cap = args.get("max_total_tokens")
    if type(cap) is int and cap > 0:
        return cap
    mem = args.get("mem_fraction_static")
    if not isinstance(mem, int | float) or isinstance(mem, bool) or mem <= 0:
        return TOKEN_CAPACITY
    return int(TOKEN_CAPACITY * mem / CAPACITY_MEM_FRACTION)


def server_args(
    resolved: Mapping[str, Any], extra: Mapping[str, Any], version: str
) -> dict[str, Any]:
    """SGLang's resolved ``server_args`` dict for this launch.

    Args:
        resolved: ``resolve_server_args`` output.
        extra: values of other SGLang flags that name ``/server_info`` keys.
        version: the imitated SGLang version.
    """
    args = dict(defaults_for(version).server_args)
    args.update(extra)
    args.update(resolved)
    args["cuda_graph_config"] = cuda_graph_config(bool(args["disable_cuda_graph"]), version)
    return args


def context_len(args: Mapping[str, Any]) -> int:
    """The served context length (``--context-length`` or the model's)."""
    return int(args.get("context_length") or DEFAULT_CONTEXT_LEN)


def startup_time(elapsed_s: float, version: str = "0.5.19") -> dict[str, Any]:
    """``startup_time`` of one start: the live body's durations, the end-to-end ones measured.

    Args:
        elapsed_s: seconds from the process start to now (the server about to serve).
        version: the imitated SGLang version (whose recorded durations fill the rest).
    """
    recorded = defaults_for(version).startup_time
    return {**recorded, "scheduler_e2e": elapsed_s, "tokenizer_e2e": elapsed_s}


def internal_state(
    args: Mapping[str, Any],
    avg_accept_length: float | None,
    last_gen_throughput: float,
    env_vars: Mapping[str, str] | None,
    started: Mapping[str, Any] | None = None,
    version: str = "0.5.19",
) -> dict[str, Any]:
    """One ``internal_states`` entry (one DP rank); ``started``: the start's ``startup_time``."""
    recorded = defaults_for(version)
    started = recorded.startup_time if started is None else started
    state = {k: v for k, v in args.items() if k not in recorded.top_level_only}
    state["world_size"] = int(args["tp_size"]) // max(int(args["dp_size"]), 1) or 1
    state["last_gen_throughput"] = last_gen_throughput
    state["memory_usage"] = recorded.memory_usage
    # Live: the per-rank copy has no tokenizer figure (that is the HTTP process's).
    state["startup_time"] = {k: v for k, v in started.items() if k != "tokenizer_e2e"}
    max_running = args["max_running_requests"] or 4096
    state["effective_max_running_requests_per_dp"] = max_running // max(int(args["dp_size"]), 1)
    state.update(recorded.state_only)  # 0.5.23: decode_cuda_graph_bs, decode_cuda_graph_memory_gb
    if avg_accept_length is not None:
        state["avg_spec_accept_length"] = avg_accept_length
    if env_vars is not None:
        state["env_vars"] = dict(env_vars)
    return state


def server_info(
    args: Mapping[str, Any],
    internal_states: list[dict[str, Any]],
    version: str,
    launch_command: str,
    started: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``/server_info`` body; ``started``: the start's ``startup_time``."""
    info = dict(args)
    info.update(status="ready", max_total_num_tokens=pool_tokens(args))
    info["max_req_input_len"] = context_len(args) - 6
    info["startup_time"] = dict(defaults_for(version).startup_time if started is None else started)
    surface = surface_for(version)
    if surface.launch_command:
        info["launch_command"] = launch_command
    info["internal_states"] = internal_states
    info["version"] = version
    if surface.frontend is not None:
        info["frontend"] = surface.frontend
    info["kv_events"] = None
    return info


def exposed_env_vars(env: Mapping[str, str], version: str = "0.5.19") -> dict[str, str] | None:
    """``env_vars`` of internal_states: every SGLANG_* variable, with SGLANG_EXPOSE_OWN_ENV_VARS.

    The live server also lists variables it sets itself (the release's recorded ones).
    """
    if env.get("SGLANG_EXPOSE_OWN_ENV_VARS", "").lower() not in ("1", "true"):
        return None
    own = {k: v for k, v in env.items() if k.startswith("SGLANG_")}
    return dict(sorted({**defaults_for(version).env_vars_set_by_sglang, **own}.items()))


def model_info(args: Mapping[str, Any], version: str = "0.5.19") -> dict[str, Any]:
    """The ``/model_info`` body."""
    model_type, arch = model_architecture(str(args["model_path"]))
    body = {
        "model_path": args["model_path"],
        "served_model_name": args["served_model_name"],
        "tokenizer_path": args["tokenizer_path"],
        "is_generation": True,
        "preferred_sampling_params": args.get("preferred_sampling_params"),
        "weight_version": "default",
        "load_format": args.get("load_format", "auto"),
        "reasoning_parser": args.get("reasoning_parser"),
        "tool_call_parser": args.get("tool_call_parser"),
    }
    if surface_for(version).model_info_disaggregation_mode:
        # A string in live 0.5.23, "null" when disaggregation is off (as in server_args).
        body["disaggregation_mode"] = args.get("disaggregation_mode", "null")
    body.update(has_image_understanding=False, has_audio_understanding=False)
    body.update(model_type=model_type, architectures=[arch])
    body["embedding"] = defaults_for(version).model_info_embedding
    return body


class ModelCard(TypedDict):
    """The served model's entry in ``/v1/models``."""

    id: str
    object: Literal["model"]
    created: int
    owned_by: str
    root: str
    parent: None
    max_model_len: int


class ModelList(TypedDict):
    """The ``/v1/models`` body."""

    object: Literal["list"]
    data: list[ModelCard]


def v1_models(args: Mapping[str, Any], created: int) -> ModelList:
    """The ``/v1/models`` body."""
    name: str = args["served_model_name"]  # resolve: the flag or the model path
    card: ModelCard = {
        "id": name,
        "object": "model",
        "created": created,
        "owned_by": "sglang",
        "root": name,
        "parent": None,
        "max_model_len": context_len(args),
    }
    return {"object": "list", "data": [card]}
