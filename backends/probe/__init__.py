"""Kernel parity probe: FlashInfer's fmha_v2 and FA3 prefill against an fp32 reference (GPU).

Nothing here is imported by the rest of ``backends`` or ``pipeline`` at import time, and no
module of this package imports FlashInfer or initialises CUDA when it is imported: ``config`` and
``plan`` are pure Python, the torch maths (``inputs``, ``reference``, ``metrics``) runs on CPU
torch as well, and ``kernels`` imports FlashInfer inside its functions. The entry point is
``mtp-eval-probe`` (``pipeline/cli/probe.py``).
"""
