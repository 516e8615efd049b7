"""What the probe runs, decided without a GPU: per-GPU attention geometry and the grid's points.

Pure functions over the typed config. Every bad value raises ``ProbeConfigError`` naming the key
and the fix, so ``mtp-eval-probe`` can refuse a config before it imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backends.backend_conf import BackendConf, KvDtypeConf, ModelConf, SkipSoftmaxConf
from backends.probe.probe_conf import KERNELS, KV_DTYPES, GridCase, ProbeConf

# SGLang changes any other page size to 64 for trtllm_mha (``_mla_backend_page_constraints``:
# "TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128").
FMHA_V2_PAGE_SIZES = (16, 32, 64, 128)
DEFAULT_PAGE_SIZE = 64
HEAD_DIMS = (64, 128, 256)  # sizes both fmha_v2 (SM90 warp-specialised) and FA3 instantiate
Q_TILE = 64  # fmha_v2 SM90: query rows per warp group, the unit of the skip-softmax vote
_VARIANT_KERNEL = {"fmha_v2": "fmha_v2", "trtllm_mha": "fmha_v2", "fa3": "fa3"}
_SIZE = re.compile(r"^\s*(\d+)\s*x\s*(\d+)\s*$")


class ProbeConfigError(ValueError):
    """A probe setting that cannot run; the message names the key and the fix."""


@dataclass(frozen=True)
class Geometry:
    """Attention shape on one GPU after tensor parallelism."""

    num_heads: int
    num_kv_heads: int
    head_dim: int
    page_size: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Point:
    """One input set: every kernel and factor of it shares the inputs and the fp32 reference."""

    case: str
    kv_dtype: str
    profile: str
    batch: int
    seqlen: int
    kernels: tuple[str, ...]
    factors: tuple[float, ...]

    @property
    def tokens(self) -> int:
        """Query tokens over the whole batch."""
        return self.batch * self.seqlen


def per_gpu_geometry(model: ModelConf) -> Geometry:
    """The query/KV heads one GPU holds at ``model.tp``, the head dim and the page size.

    KV heads are replicated when the tensor-parallel size exceeds them, as SGLang does.

    Raises:
        ProbeConfigError: For MLA models, heads that do not split over ``tp``, or head dims
            neither kernel instantiates.
    """
    att, name = model.attention, model.name
    if model.is_mla:
        raise ProbeConfigError(
            f"model {name!r} uses MLA: fmha_v2 and FA3 prefill in the probe cover MHA/GQA only; "
            "pick a GQA model (e.g. model=llama3_1_8b_eagle3)"
        )
    if model.tp < 1 or att.num_heads % model.tp:
        raise ProbeConfigError(
            f"model.attention.num_heads={att.num_heads} does not split over model.tp={model.tp}"
        )
    if att.num_kv_heads >= model.tp and att.num_kv_heads % model.tp:
        raise ProbeConfigError(
            f"model.attention.num_kv_heads={att.num_kv_heads} does not split over "
            f"model.tp={model.tp}"
        )
    if att.head_dim not in HEAD_DIMS:
        raise ProbeConfigError(
            f"model.attention.head_dim={att.head_dim}: the probe runs head dims {HEAD_DIMS}"
        )
    heads = att.num_heads // model.tp
    kv_heads = max(1, att.num_kv_heads // model.tp)
    if heads % kv_heads:
        raise ProbeConfigError(f"{heads} query heads per GPU are not a multiple of {kv_heads}")
    page, notes = _page_size(att.page_size)
    return Geometry(heads, kv_heads, att.head_dim, page, notes)


def _page_size(page: int | None) -> tuple[int, tuple[str, ...]]:
    if page is None:
        return DEFAULT_PAGE_SIZE, (
            f"page_size unset: {DEFAULT_PAGE_SIZE} (SGLang's for trtllm_mha)",
        )
    if page not in FMHA_V2_PAGE_SIZES:
        note = f"page_size {page} -> {DEFAULT_PAGE_SIZE}, as SGLang changes it for trtllm_mha"
        return DEFAULT_PAGE_SIZE, (note,)
    return page, ()


def fmha_v2_kv_tile(head_dim: int, kv_dtype: str) -> int:
    """Keys per tile of FlashInfer 0.6.18's SM90 fmha_v2 kernel (``fmha_library.py``'s STEP_KV).

    Skip-softmax decides per (64 query rows, one key tile), so the estimate needs the same tiles.
    """
    if head_dim <= 64:
        return 256
    if head_dim <= 128:
        return 256 if kv_dtype == "fp8_e4m3" else 128
    return 128 if kv_dtype == "fp8_e4m3" else 64


def variant_kernel(backend: BackendConf) -> str:
    """The probe kernel that the backend variant runs for prefill (fmha_v2 or fa3).

    Raises:
        ProbeConfigError: For variants whose prefill kernel the probe does not run.
    """
    name = backend.prefill_attention_backend or backend.attention_backend or backend.name
    kernel = _VARIANT_KERNEL.get(backend.name) or _VARIANT_KERNEL.get(name)
    if kernel is None:
        raise ProbeConfigError(
            f"backend={backend.name}: the probe runs FlashInfer's fmha_v2 and fa3 prefill only; "
            "use backend=fmha_v2 or backend=fa3"
        )
    return kernel


def probe_kv_dtype(kv_dtype: KvDtypeConf) -> str:
    """The KV dtype the composed ``kv_dtype`` group means for the probe (``auto`` is bf16)."""
    name = {"auto": "bf16", "bfloat16": "bf16"}.get(kv_dtype.name, kv_dtype.name)
    if name not in KV_DTYPES:
        raise ProbeConfigError(f"kv_dtype={kv_dtype.name}: the probe runs {KV_DTYPES}")
    return name


def parse_size(text: str) -> tuple[int, int]:
    """Parse ``"4x1024"`` into (batch 4, 1024 tokens per sequence)."""
    match = _SIZE.match(text)
    if match is None or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise ProbeConfigError(f"probe size {text!r} is not BATCHxTOKENS, e.g. '4x1024'")
    return int(match.group(1)), int(match.group(2))


def expand_grid(probe: ProbeConf, kv_dtype: str, skip: SkipSoftmaxConf) -> list[Point]:
    """Every point of the grid, in the order of ``probe.cases`` (put what matters most first).

    ``skip_softmax.prefill``, when set, joins every case's factors that already probe skipping.
    """
    if not probe.cases:
        raise ProbeConfigError("probe.cases is empty: pick a grid, e.g. probe=quick")
    points: list[Point] = []
    for case in probe.cases:
        _check_case(case, probe)
        factors = _factors(case, skip)
        for dtype in case.kv_dtypes or [kv_dtype]:
            for profile in case.profiles:
                for size in case.sizes:
                    batch, seqlen = parse_size(size)
                    kernels = tuple(case.kernels)
                    points.append(Point(case.name, dtype, profile, batch, seqlen, kernels, factors))
    return points


def _factors(case: GridCase, skip: SkipSoftmaxConf) -> tuple[float, ...]:
    factors = sorted({float(f) for f in case.factors} | {0.0})
    if skip.prefill and len(factors) > 1:
        factors = sorted(set(factors) | {float(skip.prefill)})
    return tuple(factors)


def _check_case(case: GridCase, probe: ProbeConf) -> None:
    where = f"probe.cases[{case.name}]"
    for kernel in case.kernels:
        if kernel not in KERNELS:
            raise ProbeConfigError(f"{where}.kernels: {kernel!r} is not one of {KERNELS}")
    for dtype in case.kv_dtypes:
        if dtype not in KV_DTYPES:
            raise ProbeConfigError(f"{where}.kv_dtypes: {dtype!r} is not one of {KV_DTYPES}")
    for profile in case.profiles:
        if profile not in probe.profiles:
            known = sorted(probe.profiles)
            raise ProbeConfigError(
                f"{where}.profiles: {profile!r} is not in probe.profiles {known}"
            )
    if any(f < 0 for f in case.factors):
        raise ProbeConfigError(f"{where}.factors: skip-softmax factors must be >= 0")
    for name in case.profiles:
        prof = probe.profiles[name]
        if min(prof.logit_std, prof.sink_logit, prof.local_logit) < 0 or prof.rope_base <= 1:
            raise ProbeConfigError(
                f"probe.profiles.{name}: logit_std, sink_logit and local_logit must be >= 0 "
                "and rope_base > 1"
            )
