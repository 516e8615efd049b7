"""The simulated server's JIT: one "compiled kernel" file per attention configuration and cache.

A real SGLang compiles FlashInfer, Triton and TorchInductor kernels into the folders its
environment names, once per configuration, and reuses them on the next start. The simulated
server writes one small file per (cache, configuration) into the same folders, and only where it
is missing: a cell's cache counts then show the environment reached the server process and that
a second cell of the same configuration found the first one's kernels (nothing is compiled).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger("pipeline.simserver")

# Where each variable's kernels go (FlashInfer appends .cache/flashinfer to its base itself).
CACHE_FOLDERS = {
    "FLASHINFER_WORKSPACE_BASE": (".cache", "flashinfer"),
    "TRITON_CACHE_DIR": (),
    "TORCHINDUCTOR_CACHE_DIR": (),
}
_CONFIG_KEYS = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend",
    "speculative_draft_attention_backend", "kv_cache_dtype", "page_size",
)  # fmt: skip


def kernel_name(args: Mapping[str, Any]) -> str:
    """The file name of this configuration's simulated kernels."""
    config = json.dumps({k: args.get(k) for k in _CONFIG_KEYS}, sort_keys=True)
    return f"sim-kernel-{hashlib.blake2b(config.encode(), digest_size=6).hexdigest()}.bin"


def compile_kernels(args: Mapping[str, Any], env: Mapping[str, str]) -> tuple[int, int]:
    """Write the configuration's kernel into every cache ``env`` names; (compiled, reused)."""
    compiled = reused = 0
    for variable, parts in CACHE_FOLDERS.items():
        if not env.get(variable):
            continue
        path = Path(env[variable], *parts, kernel_name(args))
        if path.exists():
            reused += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"simulated kernel\n")
        compiled += 1
    if compiled or reused:
        log.info("Simulated JIT: %d kernels compiled, %d reused from the cache", compiled, reused)
    return compiled, reused
