"""The share of key tiles skip-softmax skips per factor, as measured with HF (``--skip-fractions``).

SGLang does not count skipped tiles (0.5.23 passes the factor to FlashInfer's fmha_v2 prefill,
``trtllm_batch_context_with_kv_cache``, which returns the output alone; FlashInfer 0.7.2's CuTe-DSL
FMHA has ``skip_softmax_count`` / ``total_softmax_count`` slots, but its wrapper passes None), so
the report reads them from ``benchmarks/live_h200/skip_fraction.py``'s output: the kernel's skip
rule applied to a model's own post-RoPE queries and keys on the long-context eval's prompts. The
file's ``skip_fraction`` maps a KV dtype (``auto``: the model's 16-bit KV; ``fp8_e4m3``: its
256-key tile) to ``{factor: share}``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A 16-bit KV cache of any name uses the 128-key tile the file's "auto" was measured with.
SIXTEEN_BIT_KV = ("auto", "bf16", "bfloat16", "float16", "fp16")
HOW_TO_MEASURE = (
    "python3 -m benchmarks.live_h200.skip_fraction MODEL_FOLDER OUT.json --factors F1,F2 "
    "(the sweep's factors; HF transformers on the synth_retrieval prompts; GPU when there is "
    "one), then "
    "mtp-eval-report ... --skip-fractions OUT.json"
)


@dataclass(frozen=True)
class FrontierInputs:
    """What the frontier reads beside the cells: the measured shares and how to show them."""

    fractions: Mapping[str, Mapping[float, float]] = field(default_factory=dict)
    source: str = ""  # the file they came from ("" when none was given)
    per_eval: bool = False  # a verdict column per eval in report.md / report.html


def _bad(message: str) -> ValueError:
    return ValueError(f"{message}; write the file again with {HOW_TO_MEASURE}")


def _share(path: Path, kv: str, factor: Any, share: Any) -> tuple[float, float]:
    where = f"{path}: skip_fraction.{kv}.{factor}={share!r}"
    try:
        key, value = float(factor), float(share)
    except (TypeError, ValueError):
        raise _bad(f"{where}: expected a number (a share of tiles in [0, 1])") from None
    if not (math.isfinite(key) and key >= 0 and 0.0 <= value <= 1.0):
        raise _bad(f"{where}: a factor >= 0 and a share in [0, 1] expected")
    return key, value


def read_skip_fractions(path: Path) -> dict[str, dict[float, float]]:
    """``{KV dtype: {factor: share of key tiles skipped}}`` from a ``skip_fraction.py`` file.

    Raises:
        ValueError: the file is missing, not JSON, or its ``skip_fraction`` is not that shape
            (the message names the file and key, and how to write it again).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise _bad(f"--skip-fractions {path}: cannot read it as JSON ({err})") from err
    table = data.get("skip_fraction") if isinstance(data, dict) else None
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise _bad(f"{path}: no skip_fraction {{KV dtype: {{factor: share}}}} object")
    return {
        str(kv): dict(_share(path, kv, f, s) for f, s in shares.items())
        for kv, shares in table.items()
    }


def skipped_fraction(
    fractions: Mapping[str, Mapping[float, float]], kv_dtype: str, factor: float
) -> float | None:
    """The measured share at this KV dtype and factor (0 at exact softmax; None: not measured)."""
    if factor <= 0:
        return 0.0
    kv = "auto" if kv_dtype in SIXTEEN_BIT_KV else kv_dtype
    return fractions.get(kv, {}).get(float(factor))
