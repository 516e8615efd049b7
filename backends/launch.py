"""The SGLang server argv and environment for one cell, and what the server must then report.

``plan_launch`` is pure: it returns the argument list (never a shell string), the variables to add
to the server's environment, the ``/server_info`` values to verify after start-up (predicted after
SGLang's own adjustments, so a mismatch means something unexpected happened) and the kernels that
really run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backends.backend_conf import ModelConf
from backends.compat import Finding, evaluate
from backends.options import LaunchOptions as LaunchOptions
from backends.resolved import CellSpec, ResolvedCell, resolve_cell
from backends.rule import ADJUST, NO_EFFECT
from backends.variants import AttentionFlags, runs_of

SKIP_SOFTMAX_PREFILL_ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
SKIP_SOFTMAX_DECODE_ENV = "SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR"
# Makes /server_info list the SGLANG_* variables the server saw (internal_states[i].env_vars).
EXPOSE_ENV = "SGLANG_EXPOSE_OWN_ENV_VARS"
ENV_KEY_PREFIX = "env:"
# SGLang 0.5.23's --load-format choices (LOAD_FORMAT_CHOICES; its argparse refuses others).
LOAD_FORMATS = (
    "auto", "pt", "safetensors", "instanttensor", "npcache", "dummy", "sharded_state",
    "presharded", "gguf", "expert_pack", "bitsandbytes", "mistral", "layered", "flash_rl",
    "remote", "remote_instance", "fastsafetensors", "private", "runai_streamer",
)  # fmt: skip
# _resolve_speculative_algorithm_alias: /server_info reports NEXTN as EAGLE.
ALGORITHM_ALIASES = {"NEXTN": "EAGLE"}
DISABLE_CUDA_GRAPH_FLAG = "--disable-cuda-graph"
CUDA_GRAPH_OFF_KEY = "disable_cuda_graph"  # its /server_info key


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to start and check one cell's server."""

    args: list[str]  # SGLang server args, no program prefix
    env: dict[str, str]  # variables added to the server's environment
    requested: dict[str, object]  # /server_info keys and values the server must report
    runs: dict[str, str]  # kernels that really run: {"prefill": "fmha_v2", "decode": "xqa", ...}
    notes: list[str]  # routing decisions worth recording on the cell
    port: int  # the server's --port (``options.port``): where the pipeline reaches it
    # Kernels the variant's name stands for on this GPU and version (its routing included, before
    # SGLang's own adjustments): a cell whose ``runs`` differ did not run what its label says.
    label_runs: dict[str, str] = field(default_factory=dict)


def _opt(flag: str, value: object) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _attention_args(flags: AttentionFlags) -> list[str]:
    return [
        *_opt("--attention-backend", flags.attention_backend),
        *_opt("--prefill-attention-backend", flags.prefill_attention_backend),
        *_opt("--decode-attention-backend", flags.decode_attention_backend),
    ]


def _speculative_args(model: ModelConf, cell: ResolvedCell) -> list[str]:
    spec = model.speculative
    if spec.algorithm is None:
        return []
    return [
        "--speculative-algorithm",
        spec.algorithm,
        *_opt("--speculative-draft-model-path", spec.draft_model_path),
        *_opt("--speculative-num-steps", spec.num_steps),
        *_opt("--speculative-eagle-topk", spec.eagle_topk),
        *_opt("--speculative-num-draft-tokens", spec.num_draft_tokens),
        *_opt("--speculative-attention-mode", cell.flags.speculative_attention_mode),
        *_opt("--speculative-draft-attention-backend", cell.flags.draft_attention_backend),
        *spec.extra_args,
    ]


def build_args(model: ModelConf, cell: ResolvedCell, options: LaunchOptions) -> list[str]:
    """SGLang's server arguments for a resolved cell (model and run extras come last and win)."""
    return [
        *("--model-path", model.path),
        *_opt("--tokenizer-path", model.tokenizer_path),
        *_opt("--load-format", model.load_format),
        *("--served-model-name", model.served_model_name or model.name),
        *("--tp-size", str(model.tp)),
        *("--host", options.host, "--port", str(options.port)),
        *_opt("--random-seed", options.random_seed),
        *(["--trust-remote-code"] if model.trust_remote_code else []),
        *_opt("--context-length", model.context_length),
        *_opt("--reasoning-parser", model.reasoning_parser),
        *_attention_args(cell.flags),
        *("--kv-cache-dtype", cell.kv_dtype),
        *_opt("--page-size", model.attention.page_size),
        *_speculative_args(model, cell),
        *_opt("--mem-fraction-static", options.mem_fraction_static),
        *_opt("--max-running-requests", options.max_running_requests),
        *(["--enable-metrics"] if options.enable_metrics else []),
        *_opt("--api-key", options.api_key),
        *_opt("--admin-api-key", options.admin_api_key),
        *model.extra_args,
        *options.extra_args,
    ]


def build_env(cell: ResolvedCell) -> dict[str, str]:
    """Skip-softmax factors (only those set) and the switch that exposes them in /server_info."""
    env = {EXPOSE_ENV: "1"}
    for name, factor in ((SKIP_SOFTMAX_PREFILL_ENV, cell.skip_prefill),
                         (SKIP_SOFTMAX_DECODE_ENV, cell.skip_decode)):  # fmt: skip
        if factor is not None:
            env[name] = str(float(factor))
    return env


def _requested_attention(flags: AttentionFlags) -> dict[str, object]:
    keys = {
        "attention_backend": flags.attention_backend,
        "prefill_attention_backend": flags.prefill_attention_backend,
        "decode_attention_backend": flags.decode_attention_backend,
    }
    requested: dict[str, object] = {k: v for k, v in keys.items() if v is not None}
    # SGLang: "If prefill == decode is given, attention_backend is set to that value".
    split = (flags.prefill_attention_backend, flags.decode_attention_backend)
    if split[0] is not None and split[0] == split[1]:
        requested["attention_backend"] = split[0]
    return requested


def requested_settings(cell: ResolvedCell, passed_page_size: bool) -> dict[str, object]:
    """The ``/server_info`` values a correctly started server reports for this (adjusted) cell."""
    requested = _requested_attention(cell.flags)
    requested["kv_cache_dtype"] = cell.kv_dtype
    if passed_page_size and cell.page_size is not None:
        requested["page_size"] = cell.page_size
    algorithm = cell.algorithm
    requested["speculative_algorithm"] = ALGORITHM_ALIASES.get(algorithm or "", algorithm)
    if cell.speculative:
        spec_keys = {
            "speculative_num_steps": cell.num_steps,
            "speculative_eagle_topk": cell.topk,
            "speculative_num_draft_tokens": cell.num_draft_tokens,
            "speculative_attention_mode": cell.flags.speculative_attention_mode,
            "speculative_draft_attention_backend": cell.flags.draft_attention_backend,
        }
        requested.update({k: v for k, v in spec_keys.items() if v is not None})
    for name, factor in ((SKIP_SOFTMAX_PREFILL_ENV, cell.skip_prefill),
                         (SKIP_SOFTMAX_DECODE_ENV, cell.skip_decode)):  # fmt: skip
        if factor is not None:
            requested[ENV_KEY_PREFIX + name] = float(factor)
    return requested


def _notes(cell: ResolvedCell, findings: list[Finding]) -> list[str]:
    notes = list(cell.notes)
    for f in findings:
        if f.outcome in (ADJUST, NO_EFFECT):
            notes.append(f"{f.outcome} ({f.rule}): {f.detail}")
    return notes


def plan_launch(cell: CellSpec) -> LaunchPlan:
    """Plan the SGLang server of one cell.

    Args:
        cell: The cell as configured; ``cell.options`` are the server-level settings (host,
            port, seed, extra args).

    Returns:
        The launch plan. It is built even for cells the pre-flight rejects; call
        ``backends.compat.preflight`` to decide whether to start it.
    """
    routed = resolve_cell(cell)
    adjusted, findings = evaluate(routed)
    passed_page_size = routed.page_size is not None
    args = build_args(cell.model, routed, cell.options)
    requested = requested_settings(adjusted, passed_page_size)
    # CUDA graphs run unless the argv turns them off; /server_info reports the resolved flag
    # (live 0.5.19 and 0.5.23), so a server that runs eager where graphs were asked is caught.
    requested[CUDA_GRAPH_OFF_KEY] = DISABLE_CUDA_GRAPH_FLAG in args
    return LaunchPlan(
        args=args,
        env=build_env(routed),
        requested=requested,
        runs=runs_of(adjusted.flags, adjusted.family, adjusted.speculative),
        notes=_notes(adjusted, findings),
        port=cell.options.port,
        label_runs=runs_of(routed.flags, routed.family, routed.speculative),
    )
