"""The JIT cache folder a launched server compiles into: the setting, the variables, the counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.results.result_draft import ResultDraft
from pipeline.serving.jit_cache import (
    CacheUse,
    cache_env,
    cache_root,
    count_files,
    record_before,
    recorded,
)
from pipeline.simserver.jit_cache import compile_kernels, kernel_name

HOME = str(Path.home())


@pytest.mark.parametrize(
    ("setting", "environ", "root"),
    [
        (None, {}, None),
        ("", {}, None),  # off: the server's own defaults
        ("auto", {}, f"{HOME}/.cache/sglang"),  # SGLang 0.5.23's SGLANG_CACHE_DIR default
        ("auto", {"SGLANG_CACHE_DIR": "/shared/sgl"}, "/shared/sgl"),  # the user's, kept
        ("/scratch/jit", {"SGLANG_CACHE_DIR": "/shared/sgl"}, "/scratch/jit"),  # named wins
        ("~/jit", {}, f"{HOME}/jit"),
    ],
)  # fmt: skip
def test_cache_root(setting, environ, root):
    found = cache_root(setting, environ)
    assert (None if found is None else str(found)) == root


def test_cache_env_lays_out_the_folder_as_sglang_does():
    assert cache_env(Path("/c")) == {
        "SGLANG_CACHE_DIR": "/c",
        "FLASHINFER_WORKSPACE_BASE": "/c",  # FlashInfer adds .cache/flashinfer itself
        "TRITON_CACHE_DIR": "/c/triton",
        "TORCHINDUCTOR_CACHE_DIR": "/c/inductor",
        "CUDA_CACHE_PATH": "/c/nv",
        "TILELANG_CACHE_DIR": "/c/tilelang",
        "SGLANG_DG_CACHE_DIR": "/c/deep_gemm",
    }


def test_count_files_walks_the_folder(tmp_path):
    assert count_files(tmp_path / "missing") == 0
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("x", "a/y", "a/b/z"):
        (tmp_path / name).write_text("k")
    assert count_files(tmp_path) == 3


@pytest.mark.parametrize(
    ("use", "block"),
    [
        (CacheUse("/c", 0, 5), {"dir": "/c", "warm": False, "files_before": 0, "files_after": 5,
                               "new_files": 5}),
        (CacheUse("/c", 5, 5), {"dir": "/c", "warm": True, "files_before": 5, "files_after": 5,
                               "new_files": 0}),
        (CacheUse("/c", 5, 9), {"dir": "/c", "warm": False, "files_before": 5, "files_after": 9,
                               "new_files": 4}),  # another variant's kernels: it compiled its own
        (CacheUse("/c", 5), {"dir": "/c", "warm": True, "files_before": 5, "files_after": None,
                            "new_files": None}),  # a dry run starts nothing
    ],
)  # fmt: skip
def test_cache_use_block(use, block):
    assert use.to_json() == block


def draft() -> ResultDraft:
    return ResultDraft.start({}, "h", {}, simulated=True, slurm=None, started_at="t")


def test_the_count_after_is_recorded_when_the_server_fails(tmp_path):
    result = draft()
    with pytest.raises(RuntimeError), recorded(result, tmp_path):
        (tmp_path / "kernel.so").write_text("compiled before the crash")
        raise RuntimeError("the server died")
    assert result.to_json()["server"]["jit_cache"]["new_files"] == 1


def test_no_cache_records_nothing():
    result = draft()
    assert record_before(result, None) is None
    with recorded(result, None):
        pass
    assert "jit_cache" not in result.to_json()["server"]


def test_simulated_jit_compiles_once_per_configuration(tmp_path):
    env = {"FLASHINFER_WORKSPACE_BASE": str(tmp_path), "TRITON_CACHE_DIR": str(tmp_path / "t")}
    fa3 = {"attention_backend": "fa3", "kv_cache_dtype": "auto"}
    assert compile_kernels(fa3, env) == (2, 0)
    assert (tmp_path / ".cache" / "flashinfer" / kernel_name(fa3)).is_file()
    assert compile_kernels(fa3, env) == (0, 2)  # warm: nothing new
    assert compile_kernels({**fa3, "kv_cache_dtype": "fp8_e4m3"}, env) == (2, 0)
    assert compile_kernels(fa3, {}) == (0, 0)  # no cache variables: nothing written
