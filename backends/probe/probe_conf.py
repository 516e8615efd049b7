"""Typed settings of the kernel parity probe (the ``probe`` node of ``conf/probe.yaml``).

Pure dataclasses: Hydra validates ``conf/probe.yaml`` and ``conf/probe/*.yaml`` against them, so a
wrong key or type fails at compose time, before anything touches the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KERNELS = ("fmha_v2", "fa3")
KV_DTYPES = ("bf16", "fp8_e4m3")


@dataclass
class InputProfile:
    """How the synthetic attention inputs look (see ``backends.probe.inputs``), in logit units.

    The logit of query ``i`` and key ``j`` is ``q_i . k_j / sqrt(head_dim)``.
    """

    logit_std: float = 1.0  # std of the random part of the logits (the query scale for unit q, k)
    sink_logit: float = 0.0  # extra logit every query gives key 0 (an attention sink); 0 = none
    local_logit: float = 0.0  # logit at distance 0 of a shared RoPE-rotated direction (locality)
    rope_base: float = (
        10000.0  # RoPE base of the locality term: larger = slower decay with distance
    )


@dataclass
class GridCase:
    """One block of the grid: every kv dtype x input profile x size x kernel x factor in it."""

    name: str = "case"
    kv_dtypes: list[str] = field(default_factory=list)  # [] = the composed kv_dtype group
    profiles: list[str] = field(default_factory=lambda: ["gaussian"])  # names in probe.profiles
    sizes: list[str] = field(default_factory=lambda: ["1x1024"])  # "BATCHxTOKENS" per sequence
    factors: list[float] = field(default_factory=lambda: [0.0])  # skip-softmax (fmha_v2 only)
    kernels: list[str] = field(default_factory=lambda: list(KERNELS))


@dataclass
class ToleranceConf:
    """When an output row counts as wrong: max |out - ref| > atol + rtol * max |ref| in that row."""

    bf16_atol: float = 1e-2  # FlashInfer's own bf16 prefill tests use 1e-2 / 1e-2
    bf16_rtol: float = 1e-2
    fp8_atol: float = 7e-2  # FlashInfer's fmha_v2 fp8 tests use atol 7e-2, rtol 4e-2
    fp8_rtol: float = 4e-2
    max_row_fraction: float = 1e-3  # a point passes while at most this fraction of rows is wrong


@dataclass
class TimingConf:
    """CUDA-event timing of one kernel configuration."""

    warmup: int = 2
    repeats: int = 10
    max_seconds: float = 3.0  # fewer repeats (at least 3) when one call is slow
    flush_l2_mib: int = 256  # written before each timed call so no input is warm in L2; 0 = off
    spin_us: float = 50.0  # GPU busy-wait before each call so host overhead is not timed


@dataclass
class ProbeConf:
    """The probe's grid, inputs, tolerances, timing and wall-clock budget."""

    grid: str = "quick"  # name of the preset in conf/probe/ (recorded in the results)
    cases: list[GridCase] = field(default_factory=list)
    profiles: dict[str, InputProfile] = field(default_factory=dict)
    tolerance: ToleranceConf = field(default_factory=ToleranceConf)
    timing: TimingConf = field(default_factory=TimingConf)
    budget_s: float = 0.0  # wall-clock budget from start; 0 = none. No point starts past it
    ref_max_rows: int = 8192  # query rows per point checked against fp32 (64-row blocks, spread)
    ref_chunk_mib: int = 1024  # fp32 logits held at once by the reference
    seed: int = 0
    out_dir: str | None = None  # None: Hydra's run folder
    jit_prewarm: bool = True  # compile every needed FlashInfer module ahead, in subprocesses
    # Build only the fmha_v2 kernels the probe calls (2, not 132 per dtype), in a FlashInfer cache
    # of the probe's own (backends/probe/prune.py); false compiles FlashInfer's full module.
    jit_prune: bool = True
    jit_parallel: int = 2  # modules compiled at once
    jit_max_jobs: int = 16  # ninja jobs per module compile (MAX_JOBS); FA3 has 10 sources
    plots: bool = True
