"""Bodies of the informational endpoints: /server_info, /model_info, /v1/models (pure).

``/server_info`` is SGLang's ``server_args`` table (every key of the live 0.5.19 response, see
``sglang_defaults``) overwritten by the resolved flags, plus the scheduler fields and one
``internal_states`` entry per DP rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipeline.simserver.resolve import model_architecture
from pipeline.simserver.sglang_defaults import (
    CUDA_GRAPH_DECODE_BS,
    CUDA_GRAPH_PREFILL_BS,
    MEMORY_USAGE,
    MODEL_INFO_EMBEDDING,
    SERVER_ARGS_0_5_19,
    STARTUP_TIME,
)
from pipeline.simserver.surface import surface_for

DEFAULT_CONTEXT_LEN = 32768
TOKEN_CAPACITY = 10_897_984
# Top-level /server_info keys that internal_states entries do not repeat (seen live).
_NOT_IN_INTERNAL_STATE = ("custom_sigquit_handler",)


def cuda_graph_config(disabled: bool) -> dict[str, Any]:
    """``cuda_graph_config`` as resolved: full decode graphs and breakable prefill graphs."""

    def phase(backend: str, max_bs: int, bs: list[int]) -> dict[str, Any]:
        return {
            "backend": backend,
            "max_bs": max_bs,
            "bs": list(bs),
            "tc_compiler": "eager",
            "full_prefill_max_req": None,
            "full_prefill_prefix_chunk_tokens": None,
        }

    return {
        "decode": phase("disabled" if disabled else "full", 256, CUDA_GRAPH_DECODE_BS),
        "prefill": phase("disabled" if disabled else "breakable", 8192, CUDA_GRAPH_PREFILL_BS),
    }


def server_args(
    resolved: Mapping[str, Any], extra: Mapping[str, Any], version: str
) -> dict[str, Any]:
    """SGLang's resolved ``server_args`` dict for this launch.

    Args:
        resolved: ``resolve_server_args`` output.
        extra: values of other SGLang flags that name ``/server_info`` keys.
        version: the imitated SGLang version.
    """
    args = dict(SERVER_ARGS_0_5_19)
    args.update(extra)
    args.update(resolved)
    args["cuda_graph_config"] = cuda_graph_config(bool(args["disable_cuda_graph"]))
    for key in surface_for(version).removed_server_args:
        args.pop(key, None)
    return args


def context_len(args: Mapping[str, Any]) -> int:
    """The served context length (``--context-length`` or the model's)."""
    return int(args.get("context_length") or DEFAULT_CONTEXT_LEN)


def startup_time(elapsed_s: float) -> dict[str, Any]:
    """``startup_time`` of one start: the live body's durations, the end-to-end ones measured.

    Args:
        elapsed_s: seconds from the process start to now (the server about to serve).
    """
    return {**STARTUP_TIME, "scheduler_e2e": elapsed_s, "tokenizer_e2e": elapsed_s}


def internal_state(
    args: Mapping[str, Any],
    avg_accept_length: float | None,
    last_gen_throughput: float,
    env_vars: Mapping[str, str] | None,
    started: Mapping[str, Any] = STARTUP_TIME,
) -> dict[str, Any]:
    """One ``internal_states`` entry (one DP rank); ``started``: the start's ``startup_time``."""
    state = {k: v for k, v in args.items() if k not in _NOT_IN_INTERNAL_STATE}
    state["world_size"] = int(args["tp_size"]) // max(int(args["dp_size"]), 1) or 1
    state["last_gen_throughput"] = last_gen_throughput
    state["memory_usage"] = MEMORY_USAGE
    # Live 0.5.19: the per-rank copy has no tokenizer figure (that is the HTTP process's).
    state["startup_time"] = {k: v for k, v in started.items() if k != "tokenizer_e2e"}
    max_running = args["max_running_requests"] or 4096
    state["effective_max_running_requests_per_dp"] = max_running // max(int(args["dp_size"]), 1)
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
    started: Mapping[str, Any] = STARTUP_TIME,
) -> dict[str, Any]:
    """The ``/server_info`` body; ``started``: the start's ``startup_time``."""
    info = dict(args)
    info.update(status="ready", max_total_num_tokens=TOKEN_CAPACITY)
    info["max_req_input_len"] = context_len(args) - 6
    info["startup_time"] = dict(started)
    surface = surface_for(version)
    if surface.launch_command:
        info["launch_command"] = launch_command
    info["internal_states"] = internal_states
    info["version"] = version
    if surface.frontend is not None:
        info["frontend"] = surface.frontend
    info["kv_events"] = None
    return info


def exposed_env_vars(env: Mapping[str, str]) -> dict[str, str] | None:
    """``env_vars`` of internal_states: every SGLANG_* variable, with SGLANG_EXPOSE_OWN_ENV_VARS."""
    if env.get("SGLANG_EXPOSE_OWN_ENV_VARS", "").lower() not in ("1", "true"):
        return None
    own = {k: v for k, v in env.items() if k.startswith("SGLANG_")}
    return dict(sorted({**SGLANG_SETS_ITSELF, **own}.items()))


# Variables a live 0.5.19 server listed in env_vars without anyone setting them (it sets them).
SGLANG_SETS_ITSELF = {
    "SGLANG_DISABLE_OUTLINES_DISK_CACHE": "0",
    "SGLANG_ENABLE_DETERMINISTIC_INFERENCE": "0",
    "SGLANG_ENABLE_TORCH_COMPILE": "0",
    "SGLANG_OPT_FP8_WO_A_GEMM": "False",
    "SGLANG_USE_CUDA_IPC_TRANSPORT": "0",
}


def model_info(args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``/model_info`` body."""
    model_type, arch = model_architecture(str(args["model_path"]))
    return {
        "model_path": args["model_path"],
        "served_model_name": args["served_model_name"],
        "tokenizer_path": args["tokenizer_path"],
        "is_generation": True,
        "preferred_sampling_params": args.get("preferred_sampling_params"),
        "weight_version": "default",
        "load_format": args.get("load_format", "auto"),
        "reasoning_parser": args.get("reasoning_parser"),
        "tool_call_parser": args.get("tool_call_parser"),
        "has_image_understanding": False,
        "has_audio_understanding": False,
        "model_type": model_type,
        "architectures": [arch],
        "embedding": MODEL_INFO_EMBEDDING,
    }


def v1_models(args: Mapping[str, Any], created: int) -> dict[str, Any]:
    """The ``/v1/models`` body."""
    name = args["served_model_name"]
    card = {"id": name, "object": "model", "created": created, "owned_by": "sglang", "root": name}
    card.update(parent=None, max_model_len=context_len(args))
    return {"object": "list", "data": [card]}
