"""SM90 stand-in for SGLang 0.5.23's ``sglang/kernels/ops/gemm/cutedsl_dual_gemm.py``.

The real module is a Blackwell (tcgen05) CuTe DSL kernel for the fused gate/up GEMM + SwiGLU of
small decode batches. Its Llama MLP imports it on every CUDA GPU, and it imports NVIDIA's CuTe DSL
(``nvidia-cutlass-dsl``, several hundred MB that the 64-MiB device transfers cannot carry) at the
top. On SM90 the real ``can_use_dual_gemm`` returns False (it requires ``is_sm100_supported()``),
so ``DualGemm`` selects no mode and the kernel never runs. This file keeps exactly that
behaviour: the names SGLang imports, ``can_use_dual_gemm`` False, and the kernels refusing to run.
``setup_on_gpu.sh`` puts it over the real file in the unpacked bundle (the original is kept as
``cutedsl_dual_gemm.py.orig``) only when the CuTe DSL is absent.
"""

from __future__ import annotations

from enum import IntEnum

MAX_DUAL_GEMM_DECODE_TOKENS = 16


class DualGemmQuantMode(IntEnum):
    """The real module's modes (same names and values)."""

    STATIC_PER_TENSOR = 0
    STATIC_PER_TOKEN = 1
    DYNAMIC_PER_TENSOR = 2
    DYNAMIC_PER_TOKEN = 3
    UNQUANT = 4

    @property
    def is_quantized(self) -> bool:
        return self is not self.UNQUANT

    @property
    def is_dynamic(self) -> bool:
        return self in (self.DYNAMIC_PER_TENSOR, self.DYNAMIC_PER_TOKEN)

    @property
    def is_per_token(self) -> bool:
        return self in (self.STATIC_PER_TOKEN, self.DYNAMIC_PER_TOKEN)


def can_use_dual_gemm(
    num_tokens: int, hidden_size: int, intermediate_size: int, quant_mode: object
) -> bool:
    """False, as the real predicate is on every GPU below SM100."""
    return False


def _blackwell_only(*args: object, **kwargs: object) -> None:
    raise NotImplementedError(
        "cutedsl dual GEMM is Blackwell-only (SM90 stand-in of the H200 bundle)"
    )


dual_gemm_swiglu = dual_gemm_swiglu_fp8 = _blackwell_only
