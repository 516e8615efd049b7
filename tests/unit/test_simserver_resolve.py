"""The simulated server's argv parsing and SGLang-style resolution (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from pipeline.simserver.args import parse_argv, template_flags
from pipeline.simserver.info import server_args
from pipeline.simserver.resolve import (
    MSG_FA3_FP8_E5M2,
    MSG_MAX_RUNNING,
    MSG_TOPK1_DRAFT_TOKENS,
    resolve_server_args,
)
from pipeline.simserver.sglang_defaults import SERVER_ARGS_0_5_19

BASE = ["--model-path", "tiny-sim", "--sim-config", "x.json", "--random-seed", "0"]
SPEC = ["--speculative-algorithm", "EAGLE"]


def resolve(extra: list[str], env: dict[str, str] | None = None, version: str = "0.5.19"):
    ns, unknown = parse_argv([*BASE, *extra], version)
    warnings: list[str] = []
    return resolve_server_args(ns, env or {}, warnings), warnings, unknown


CASES: list[tuple[str, list[str], dict[str, str], dict[str, Any], list[str]]] = [
    ("defaults: Hopper fa3, page 1, no spec", [], {},
     {"attention_backend": "fa3", "prefill_attention_backend": None, "page_size": 1,
      "speculative_algorithm": None, "max_running_requests": None, "port": 30000,
      "host": "127.0.0.1", "served_model_name": "tiny-sim", "kv_cache_dtype": "auto"}, []),
    ("NEXTN is EAGLE with auto (3,1,4) and 48 running requests",
     ["--speculative-algorithm", "nextn"], {},
     {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
      "speculative_num_draft_tokens": 4, "max_running_requests": 48}, [MSG_MAX_RUNNING]),
    ("explicit max running requests: no reset", [*SPEC, "--max-running-requests", "8"], {},
     {"max_running_requests": 8}, []),
    ("topk 1 forces steps + 1 draft tokens",
     [*SPEC, "--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
      "--speculative-num-draft-tokens", "8"], {},
     {"speculative_num_steps": 2, "speculative_num_draft_tokens": 3},
     [MSG_TOPK1_DRAFT_TOKENS, MSG_MAX_RUNNING]),
    ("tree speculation defaults to flashinfer",
     [*SPEC, "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
      "--speculative-num-draft-tokens", "8"], {},
     {"attention_backend": "flashinfer", "speculative_num_draft_tokens": 8}, [MSG_MAX_RUNNING]),
    ("prefill == decode sets attention_backend",
     ["--prefill-attention-backend", "triton", "--decode-attention-backend", "triton"], {},
     {"attention_backend": "triton", "prefill_attention_backend": "triton"}, []),
    ("fa3 with fp8_e5m2 falls back to triton", ["--attention-backend", "fa3",
     "--kv-cache-dtype", "fp8_e5m2"], {}, {"attention_backend": "triton"}, [MSG_FA3_FP8_E5M2]),
    ("fa3 decode with fp8_e5m2 falls back too",
     ["--prefill-attention-backend", "trtllm_mha", "--decode-attention-backend", "fa3",
      "--kv-cache-dtype", "fp8_e5m2", "--page-size", "64"], {},
     {"decode_attention_backend": "triton", "prefill_attention_backend": "trtllm_mha",
      "attention_backend": "triton"}, [MSG_FA3_FP8_E5M2]),
    ("fp8_e4m3 keeps fa3", ["--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e4m3"], {},
     {"attention_backend": "fa3", "kv_cache_dtype": "fp8_e4m3"}, []),
    ("trtllm_mha page size 32 is kept", ["--attention-backend", "trtllm_mha", "--page-size", "32"],
     {}, {"page_size": 32}, []),
    ("trtllm_mha without a page size gets 64",
     ["--attention-backend", "trtllm_mha"], {}, {"page_size": 64},
     ["TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, changing page_size from "
      "None to 64."]),
    ("SM100 defaults to trtllm_mha", [], {"MTP_EVAL_SIM_GPU_SM": "100"},
     {"attention_backend": "trtllm_mha", "page_size": 64}, None),
    ("SM120 defaults to flashinfer", [], {"MTP_EVAL_SIM_GPU_SM": "120"},
     {"attention_backend": "flashinfer"}, []),
    ("abbreviations and aliases as argparse allows",
     ["--tp", "4", "--mem-frac", "0.7", "--model", "other"], {},
     {"tp_size": 4, "mem_fraction_static": 0.7, "model_path": "other"}, []),
    ("deterministic inference uses pytorch sampling and keeps fa3's radix cache",
     ["--enable-deterministic-inference"], {},
     {"attention_backend": "fa3", "sampling_backend": "pytorch", "disable_radix_cache": False}, []),
    ("deterministic flashinfer disables the radix cache",
     ["--enable-deterministic-inference", "--attention-backend", "flashinfer"], {},
     {"disable_radix_cache": True}, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "extra", "env", "expected", "warns"), CASES, ids=[c[0] for c in CASES]
)
def test_resolution_table(name, extra, env, expected, warns) -> None:
    resolved, warnings, _ = resolve(extra, env)
    assert {k: resolved[k] for k in expected} == expected
    if warns is not None:
        assert warnings == warns


def test_llama_auto_parameters() -> None:
    ns, _ = parse_argv(["--model-path", "meta/Llama-3.1-8B", *SPEC, "--sim-config", "x"], "0.5.19")
    resolved = resolve_server_args(ns, {})
    steps = [resolved[f"speculative_{k}"] for k in ("num_steps", "eagle_topk", "num_draft_tokens")]
    assert steps == [5, 4, 8] and resolved["attention_backend"] == "flashinfer"


def test_deepseek_mtp_uses_the_target_as_draft() -> None:
    ns, _ = parse_argv(["--model", "deepseek-ai/DeepSeek-V3", *SPEC, "--sim-config", "x"], "0.5.19")
    resolved = resolve_server_args(ns, {})
    assert resolved["speculative_draft_model_path"] == "deepseek-ai/DeepSeek-V3"
    assert resolved["speculative_draft_model_revision"] == "main"


@pytest.mark.parametrize(
    ("extra", "env", "error", "match"),
    [
        ([*SPEC, "--speculative-eagle-topk", "1"], {}, AssertionError, None),
        ([*SPEC, "--speculative-num-draft-tokens", "4"], {}, AssertionError, None),
        ([*SPEC, "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
          "--speculative-num-draft-tokens", "6", "--attention-backend", "trtllm_mha"], {},
         ValueError, "trtllm_mha backend only supports topk = 1"),
        (["--enable-deterministic-inference", "--attention-backend", "trtllm_mha"], {}, ValueError,
         "supported for deterministic inference, but you explicitly specified 'trtllm_mha'"),
        (["--speculative-algorithm", "MAGIC"], {}, ValueError, "Unknown speculative algorithm"),
        ([], {"MTP_EVAL_SIM_GPU_SM": "hopper"}, ValueError, "MTP_EVAL_SIM_GPU_SM='hopper'"),
        ([], {"SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR": "x"}, ValueError,
         '"x" is not a valid float value'),
    ],
)  # fmt: skip
def test_rejections(
    extra: list[str], env: dict[str, str], error: type[Exception], match: str | None
) -> None:
    with pytest.raises(error, match=match):
        resolve(extra, env)


@pytest.mark.parametrize(
    ("version", "dtype", "ok"),
    [("0.5.19", "fp4_e2m1", True), ("0.5.23", "fp4_e2m1", False), ("0.5.23", "mxfp8", True),
     ("0.5.19", "fp8", False)],
)  # fmt: skip
def test_kv_cache_dtype_choices_follow_the_version(version: str, dtype: str, ok: bool) -> None:
    if ok:
        assert resolve(["--kv-cache-dtype", dtype], version=version)[0]["kv_cache_dtype"] == dtype
    else:
        with pytest.raises(SystemExit) as exc:
            resolve(["--kv-cache-dtype", dtype], version=version)
        assert exc.value.code == 2


def test_unknown_flags_are_kept_for_the_caller() -> None:
    _, _, unknown = resolve(["--cuda-graph-max-bs", "16", "--disable-overlap-schedule"])
    assert unknown == ["--cuda-graph-max-bs", "16"]


@pytest.mark.parametrize(
    ("words", "values", "ignored"),
    [
        (["--mamba-ssm-dtype", "float32"], {"mamba_ssm_dtype": "float32"}, []),
        (["--enable-mixed-chunk"], {"enable_mixed_chunk": True}, []),
        (["--torch-compile-max-bs=16"], {"torch_compile_max_bs": 16}, []),
        (["--schedule-conservativeness", "0.5"], {"schedule_conservativeness": 0.5}, []),
        (["--no-such-flag", "3"], {}, ["--no-such-flag", "3"]),
    ],
)
def test_template_flags(words: list[str], values: dict[str, Any], ignored: list[str]) -> None:
    assert template_flags(words, SERVER_ARGS_0_5_19) == (values, ignored)


@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_every_resolved_key_is_a_server_info_key(version: str) -> None:
    resolved, _, _ = resolve([*SPEC, "--enable-metrics"], version=version)
    args = server_args(resolved, {}, version)
    assert set(resolved) <= set(SERVER_ARGS_0_5_19)
    assert args["speculative_algorithm"] == "EAGLE" and args["enable_metrics"] is True
    assert ("speculative_skip_dp_mlp_sync" in args) == (version == "0.5.19")


def test_unset_random_seed_is_drawn() -> None:
    ns, _ = parse_argv(["--model-path", "m", "--sim-config", "x"], "0.5.19")
    seed = resolve_server_args(ns, {})["random_seed"]
    assert isinstance(seed, int) and 0 <= seed <= 1 << 30
