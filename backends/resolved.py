"""One cell as SGLang will see it: the variant's routed flags plus the facts the rules look at.

``resolve_cell`` is the single place that reads the config objects; the compatibility rules and the
launch plan work on the resulting ``ResolvedCell`` only, so both check the flags really passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from backends.backend_conf import BackendConf, KvDtypeConf, ModelConf, SkipSoftmaxConf
from backends.gpu import GpuInfo
from backends.options import LaunchOptions
from backends.variants import AttentionFlags, route_flags
from backends.version_ranges import Version, parse_version

# Flags a model's or the run's extra_args may carry that change which rules apply.
DETERMINISTIC_FLAG = "--enable-deterministic-inference"
ADAPTIVE_FLAG = "--speculative-adaptive"
PREFILL_CP_FLAGS = ("--enable-prefill-context-parallel", "--enable-prefill-cp")
ATTN_CP_SIZE_FLAGS = ("--attn-cp-size", "--attention-context-parallel-size")
DISABLE_RADIX_FLAG = "--disable-radix-cache"
DISABLE_OVERLAP_FLAG = "--disable-overlap-schedule"
MAMBA_STRATEGY_FLAG = "--mamba-radix-cache-strategy"
LINEAR_ATTN_BACKEND_FLAG = "--linear-attn-backend"
RAGGED_VERIFY_ENV = "SGLANG_RAGGED_VERIFY_MODE"  # static (SGLang's default), cap-accept, compact


@dataclass(frozen=True)
class CellSpec:
    """One cell as configured: what ``resolve_cell``, ``preflight`` and ``plan_launch`` read."""

    model: ModelConf  # speculative recipe, geometry, extra args
    backend: BackendConf  # the variant; its routing for this GPU and version is applied
    kv_dtype: KvDtypeConf | str  # the node or its ``--kv-cache-dtype`` name
    skip_softmax: SkipSoftmaxConf  # factors (None: the variable is not set)
    gpu: GpuInfo  # the GPU the cell runs on (``family`` picks the rules)
    sglang_version: str  # e.g. "0.5.23"
    # Server-level launch options; the defaults pass no --max-running-requests, so the
    # reset-to-48 rule applies with speculation.
    options: LaunchOptions = field(default_factory=LaunchOptions)


@dataclass(frozen=True)
class ResolvedCell:
    """Everything the compatibility rules and the launch plan need about one cell."""

    variant: str
    flags: AttentionFlags
    family: str
    version: Version
    kv_dtype: str
    skip_prefill: float | None
    skip_decode: float | None
    is_mla: bool
    page_size: int | None
    algorithm: str | None  # as configured (NEXTN, EAGLE, ...); None: no speculation
    num_steps: int | None
    topk: int | None
    num_draft_tokens: int | None
    max_running_requests: int | None
    deterministic: bool
    adaptive: bool
    prefill_cp: bool  # --enable-prefill-context-parallel / --enable-prefill-cp (0.5.19 checks it)
    attn_cp_size: int
    heads_per_rank: tuple[int, int] = (8, 2)  # query heads, KV heads on one attention-TP rank
    head_dims: tuple[int, int] = (128, 128)  # QK, V
    kv_cache_quant_algo: str | None = None  # the checkpoint's (FP8: auto means fp8_e4m3)
    mamba_strategy: str | None = None  # mamba radix-cache strategy SGLang resolves; None: none
    overlap_schedule: bool = True  # off: --disable-overlap-schedule, or a no_buffer auto picked
    ragged_verify_mode: str = "static"  # SGLANG_RAGGED_VERIFY_MODE of server.env (else the default)
    notes: tuple[str, ...] = ()

    @property
    def speculative(self) -> bool:
        """Whether the cell runs speculative decoding."""
        return self.algorithm is not None


def flag_value(args: Sequence[str], names: Sequence[str]) -> str | None:
    """Value of the last ``--flag value`` or ``--flag=value`` in ``args`` (argparse: last wins)."""
    value = None
    for i, arg in enumerate(args):
        name, eq, inline = arg.partition("=")
        if name in names:
            value = inline if eq else (args[i + 1] if i + 1 < len(args) else None)
    return value


def has_flag(args: Sequence[str], names: Sequence[str]) -> bool:
    """Whether any of ``names`` appears among ``args`` as a switch or ``--flag=value``."""
    return any(arg.partition("=")[0] in names for arg in args)


def _int_flag(args: Sequence[str], names: Sequence[str], default: int | None) -> int | None:
    value = flag_value(args, names)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"extra_args: {names[0]} needs an integer, got {value!r}") from None


def kv_dtype_name(kv_dtype: KvDtypeConf | str) -> str:
    """The ``--kv-cache-dtype`` value of a config node or plain string."""
    return kv_dtype if isinstance(kv_dtype, str) else kv_dtype.name


def _heads_per_rank(model: ModelConf) -> tuple[int, int]:
    # TRTLLMHAAttnBackend: num_attention_heads // tp and config.get_num_kv_heads(tp) (at least 1).
    geometry, tp = model.attention, max(model.tp, 1)
    return geometry.num_heads // tp, max(1, geometry.num_kv_heads // tp)


def mamba_strategy(model: ModelConf, args: Sequence[str], page_size: int | None) -> str | None:
    """The mamba radix-cache strategy SGLang resolves (``_mamba_radix_cache_resolution``).

    None for models without mamba state or with ``--disable-radix-cache``. ``auto`` picks
    extra_buffer when the overlap schedule or paging wants it and the linear-attention backend is
    triton (the default; true of Qwen3-Next, which is in ``_MAMBA_EXTRA_BUFFER_ARCHS``).
    """
    if not model.hybrid_mamba or has_flag(args, (DISABLE_RADIX_FLAG,)):
        return None
    strategy = flag_value(args, (MAMBA_STRATEGY_FLAG,)) or "auto"
    if strategy != "auto":
        return strategy
    wants = not has_flag(args, (DISABLE_OVERLAP_FLAG,)) or (page_size or 1) > 1
    triton = (flag_value(args, (LINEAR_ATTN_BACKEND_FLAG,)) or "triton") == "triton"
    return "extra_buffer" if wants and triton else "no_buffer"


def _overlap_schedule(model: ModelConf, args: Sequence[str], page_size: int | None) -> bool:
    # A no_buffer strategy that ``auto`` picked turns the overlap schedule off; an explicit one
    # leaves it to the user (and validate_mamba_no_buffer refuses it on).
    if has_flag(args, (DISABLE_OVERLAP_FLAG,)):
        return False
    explicit = flag_value(args, (MAMBA_STRATEGY_FLAG,)) not in (None, "auto")
    return explicit or mamba_strategy(model, args, page_size) != "no_buffer"


def resolve_cell(cell: CellSpec) -> ResolvedCell:
    """Apply the variant's routing for the cell's GPU and version and collect the rule inputs."""
    model, opts = cell.model, cell.options
    args = [*model.extra_args, *opts.extra_args]
    version = parse_version(cell.sglang_version)
    spec = model.speculative
    family = cell.gpu.family
    flags, notes = route_flags(cell.backend, family, version, spec.algorithm is not None)
    page_size = _int_flag(args, ("--page-size",), model.attention.page_size)
    geometry = model.attention
    return ResolvedCell(
        variant=cell.backend.name,
        flags=flags,
        family=family,
        version=version,
        kv_dtype=kv_dtype_name(cell.kv_dtype),
        skip_prefill=cell.skip_softmax.prefill,
        skip_decode=cell.skip_softmax.decode,
        is_mla=model.is_mla,
        page_size=page_size,
        algorithm=spec.algorithm.upper() if spec.algorithm else None,
        num_steps=spec.num_steps,
        topk=spec.eagle_topk,
        num_draft_tokens=spec.num_draft_tokens,
        max_running_requests=_int_flag(
            args, ("--max-running-requests",), opts.max_running_requests
        ),
        deterministic=has_flag(args, (DETERMINISTIC_FLAG,)),
        adaptive=has_flag([*args, *spec.extra_args], (ADAPTIVE_FLAG,)),
        prefill_cp=has_flag(args, PREFILL_CP_FLAGS),
        attn_cp_size=_int_flag(args, ATTN_CP_SIZE_FLAGS, 1) or 1,
        heads_per_rank=_heads_per_rank(model),
        head_dims=(geometry.head_dim, geometry.v_head_dim or geometry.head_dim),
        kv_cache_quant_algo=model.kv_cache_quant_algo,
        mamba_strategy=mamba_strategy(model, args, page_size),
        overlap_schedule=_overlap_schedule(model, args, page_size),
        ragged_verify_mode=dict(opts.env).get(RAGGED_VERIFY_ENV, "static"),
        notes=tuple(notes),
    )
