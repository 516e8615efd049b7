"""The persistent JIT cache a cell's server compiles its kernels into (``server.jit_cache_dir``).

FlashInfer's JIT makes a cold SGLang start cost minutes per attention configuration; its
compiled modules, Triton's, TorchInductor's and SGLang's own (DeepGEMM, CuTe DSL, FlashInfer
autotune) land in per-user folders that a fresh machine or container starts without. The pipeline
points all of them at one folder, laid out as SGLang 0.5.23 lays out ``SGLANG_CACHE_DIR`` itself
(``third_party_cache_defaults`` in ``srt/environ.py``), so every cell, node and later run reuses
what one compiled. Setting the variables explicitly matters: SGLang's own redirect is a
``setdefault`` that does nothing once FlashInfer is imported, and 0.5.19 has none.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_schema import JitCacheJson

AUTO = "auto"  # server.jit_cache_dir: SGLANG_CACHE_DIR if set, else SGLang's ~/.cache/sglang
SGLANG_CACHE_ENV = "SGLANG_CACHE_DIR"
# (variable, folder under the cache root; "" = the root): FlashInfer appends .cache/flashinfer
# to its base itself; DeepGEMM's 0.5.19 default is ~/.cache/deep_gemm, so it is set too.
CACHE_VARIABLES = (
    (SGLANG_CACHE_ENV, ""),
    ("FLASHINFER_WORKSPACE_BASE", ""),
    ("TRITON_CACHE_DIR", "triton"),
    ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ("CUDA_CACHE_PATH", "nv"),
    ("TILELANG_CACHE_DIR", "tilelang"),
    ("SGLANG_DG_CACHE_DIR", "deep_gemm"),
)


def cache_root(setting: str | None, environ: Mapping[str, str]) -> Path | None:
    """The cache folder ``server.jit_cache_dir`` names (None: leave the server's defaults).

    Args:
        setting: the config value: None or "" (off), ``auto``, or a path (``~`` expanded; on
            SLURM a path every node sees, so that the nodes share what one compiled).
        environ: the environment the server would inherit (``auto`` honours its
            SGLANG_CACHE_DIR, and ``~`` is this user's home).
    """
    if not setting:
        return None
    if setting == AUTO:
        setting = environ.get(SGLANG_CACHE_ENV) or "~/.cache/sglang"
    return Path(os.path.expanduser(setting)).absolute()


def cache_env(root: Path) -> dict[str, str]:
    """The variables that point every JIT cache of the server at ``root``."""
    return {name: str(root / sub) if sub else str(root) for name, sub in CACHE_VARIABLES}


def count_files(root: Path) -> int:
    """Files under ``root`` (0 when it does not exist yet): how warm the cache is."""
    if not root.is_dir():
        return 0
    return sum(len(files) for _, _, files in os.walk(root))


@dataclass(frozen=True)
class CacheUse:
    """What a cell found in its JIT cache and left there (``jit_cache`` in result.json)."""

    dir: str
    files_before: int  # files when the server was about to start
    files_after: int | None = None  # after it stopped; None: it did not start (dry run)

    @property
    def warm(self) -> bool:
        """Whether every kernel the server needed was cached: files there, and none compiled.

        Files alone do not say it: in a folder another server is filling, or holding another
        variant's kernels, a server still compiles its own (the H200's shape cells found 2 and
        1,095 files there and compiled 1,082 and 905 more, 2026-12-01). A dry run, which starts
        nothing, is warm when the folder has files.
        """
        compiled = self.files_after is not None and self.files_after > self.files_before
        return self.files_before > 0 and not compiled

    def to_json(self) -> JitCacheJson:
        """The result.json block; ``new_files``: what this cell compiled (None: not started)."""
        after = self.files_after
        new = None if after is None else after - self.files_before
        return {
            "dir": self.dir,
            "warm": self.warm,
            "files_before": self.files_before,
            "files_after": after,
            "new_files": new,
        }


def record_before(result: ResultDraft, root: Path | None) -> CacheUse | None:
    """Record the cache folder and its files before the server starts (None: no cache set)."""
    if root is None:
        return None
    use = CacheUse(str(root), count_files(root))
    result.set_jit_cache(use.to_json())
    return use


@contextlib.contextmanager
def recorded(result: ResultDraft, root: Path | None) -> Iterator[None]:
    """Around the server's life: its cache's files before it starts and after it stops.

    The count after is recorded on every exit path: a start that failed may still have
    compiled kernels the next cell reuses.
    """
    before = record_before(result, root)
    try:
        yield
    finally:
        if before is not None and root is not None:
            after = dataclasses.replace(before, files_after=count_files(root))
            result.set_jit_cache(after.to_json())
