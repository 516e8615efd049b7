from __future__ import annotations

import pytest

from backends.backend_conf import (
    AttentionGeometry,
    BackendConf,
    GpuConf,
    KvDtypeConf,
    ModelConf,
    SkipSoftmaxConf,
    SpeculativeConf,
)
from backends.catalog import load_backends
from backends.gpu import GpuInfo, gpu_from_config
from backends.launch import LaunchOptions, plan_launch
from backends.resolved import CellSpec

BACKENDS = load_backends()
MTP = SpeculativeConf(algorithm="NEXTN", num_steps=3, eagle_topk=1, num_draft_tokens=4)
MODEL = ModelConf(
    name="m",
    path="/models/m",
    served_model_name="served",
    tp=2,
    speculative=MTP,
    attention=AttentionGeometry(page_size=32),
)
NO_SPEC = ModelConf(name="m", path="/models/m")
OFF = SkipSoftmaxConf()


def gpu(cap: str) -> GpuInfo:
    return gpu_from_config(GpuConf(detect=False, name="g", compute_capability=cap))


def flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_shipped_backend_variants() -> None:
    assert set(BACKENDS) == {
        *("fa3", "fmha_v2", "flashinfer", "triton", "trtllm_mha"),
        *("fa3_repeat", "fmha_v2_fi"),  # the A/A control and fmha_v2's FlashInfer verify route
    }
    assert all(conf.name == stem for stem, conf in BACKENDS.items())


@pytest.mark.parametrize(
    ("variant", "same_as"),
    [
        ("fa3_repeat", BACKENDS["fa3"]),
        ("fmha_v2_fi", BackendConf(name="fmha_v2", attention_backend="trtllm_mha",
                                   verify_backend="flashinfer")),
    ],
)  # fmt: skip
@pytest.mark.parametrize(("cap", "version"), [("9.0", "0.5.19"), ("9.0", "0.5.23")])
def test_variant_aliases_launch_the_same_flags(
    variant: str, same_as: BackendConf, cap: str, version: str
) -> None:
    """The alias variants pass exactly the flags of what they stand for (SM90, 0.5.19)."""

    def args(backend: BackendConf) -> list[str]:
        spec = CellSpec(MODEL, backend, KvDtypeConf(), OFF, gpu(cap), version, LaunchOptions())
        return plan_launch(spec).args

    if version == "0.5.23" and variant == "fmha_v2_fi":
        # From 0.5.23 fmha_v2 verifies on XQA itself; the alias keeps FlashInfer's verify.
        assert flag(args(BACKENDS[variant]), "--decode-attention-backend") == "flashinfer"
        return
    assert args(BACKENDS[variant]) == args(same_as)


def test_args_are_a_list_with_every_setting() -> None:
    opts = LaunchOptions(
        host="0.0.0.0",
        port=31000,
        random_seed=7,
        mem_fraction_static=0.8,
        max_running_requests=64,
        api_key="k",
        extra_args=("--log-level", "debug"),
    )
    model = ModelConf(
        name="m",
        path="/models/m",
        tp=4,
        trust_remote_code=True,
        context_length=8192,
        reasoning_parser="qwen3",
        extra_args=["--disable-radix-cache"],
        speculative=MTP,
        load_format="dummy",
        tokenizer_path="/tokenizers/t",
    )
    plan = plan_launch(
        CellSpec(model, BACKENDS["fa3"], KvDtypeConf("bf16"), OFF, gpu("9.0"), "0.5.23", opts)
    )
    a = plan.args
    assert all(isinstance(x, str) for x in a)
    assert plan.port == 31000  # the cell reaches the server here, never re-parsing the argv
    expected = {
        "--model-path": "/models/m",
        "--tokenizer-path": "/tokenizers/t",
        "--load-format": "dummy",
        "--served-model-name": "m",
        "--tp-size": "4",
        "--host": "0.0.0.0",
        "--port": "31000",
        "--random-seed": "7",
        "--context-length": "8192",
        "--reasoning-parser": "qwen3",
        "--attention-backend": "fa3",
        "--kv-cache-dtype": "bf16",
        "--speculative-algorithm": "NEXTN",
        "--speculative-num-steps": "3",
        "--speculative-eagle-topk": "1",
        "--speculative-num-draft-tokens": "4",
        "--mem-fraction-static": "0.8",
        "--max-running-requests": "64",
        "--api-key": "k",
    }
    assert {k: flag(a, k) for k in expected} == expected
    assert "--trust-remote-code" in a and "--enable-metrics" in a
    assert a[-3:] == ["--disable-radix-cache", "--log-level", "debug"]  # extras last: they win


def test_load_format_and_tokenizer_are_passed_only_when_set() -> None:
    """A shipped model with its checkpoint keeps the argv it always had (SGLang's auto)."""
    plan = plan_launch(
        CellSpec(ModelConf(), BACKENDS["fa3"], "auto", OFF, gpu("9.0"), "0.5.23", LaunchOptions())
    )
    assert "--load-format" not in plan.args and "--tokenizer-path" not in plan.args


def test_no_speculative_flags_without_speculation() -> None:
    plan = plan_launch(
        CellSpec(
            NO_SPEC,
            BACKENDS["fa3"],
            "auto",
            OFF,
            gpu("9.0"),
            "0.5.23",
            LaunchOptions(random_seed=None),
        )
    )
    assert not [x for x in plan.args if x.startswith("--speculative")]
    assert "--random-seed" not in plan.args and "--page-size" not in plan.args
    assert plan.requested == {
        "attention_backend": "fa3",
        "kv_cache_dtype": "auto",
        "speculative_algorithm": None,
        "disable_cuda_graph": False,
    }
    assert plan.runs == {"prefill": "fa3", "decode": "fa3"}


@pytest.mark.parametrize(
    ("cap", "version", "attn_flags", "runs", "routed"),
    [
        (
            "9.0",
            "0.5.19",
            {
                "--prefill-attention-backend": "trtllm_mha",
                "--decode-attention-backend": "fa3",
                "--speculative-attention-mode": "decode",
                "--speculative-draft-attention-backend": "fa3",
            },
            {"prefill": "fmha_v2", "decode": "fa3", "verify": "fa3", "draft": "fa3"},
            True,
        ),
        (
            "12.0",
            "0.5.20",
            {
                "--prefill-attention-backend": "trtllm_mha",
                "--decode-attention-backend": "flashinfer",
                "--speculative-attention-mode": "decode",
                "--speculative-draft-attention-backend": "flashinfer",
            },
            {"prefill": "fmha_v2", **dict.fromkeys(("decode", "verify", "draft"), "flashinfer")},
            True,
        ),
        (
            "9.0",
            "0.5.23",
            {"--attention-backend": "trtllm_mha"},
            {"prefill": "fmha_v2", "decode": "xqa", "verify": "xqa", "draft": "xqa"},
            False,
        ),
        (
            "10.0",
            "0.5.19",
            {"--attention-backend": "trtllm_mha"},
            dict.fromkeys(("prefill", "decode", "verify", "draft"), "trtllm-gen"),
            False,
        ),
    ],
)
def test_fmha_v2_plan(
    cap: str, version: str, attn_flags: dict[str, str], runs: dict[str, str], routed: bool
) -> None:
    plan = plan_launch(
        CellSpec(MODEL, BACKENDS["fmha_v2"], "auto", OFF, gpu(cap), version, LaunchOptions())
    )
    names = (
        "--attention-backend",
        "--prefill-attention-backend",
        "--decode-attention-backend",
        "--speculative-attention-mode",
        "--speculative-draft-attention-backend",
    )
    assert {n: flag(plan.args, n) for n in names if n in plan.args} == attn_flags
    assert plan.runs == runs
    assert any("verify and draft-extend run on" in n for n in plan.notes) is routed


def test_requested_resolves_nextn_and_split_backends() -> None:
    plan = plan_launch(
        CellSpec(MODEL, BACKENDS["fmha_v2"], "fp8_e4m3", OFF, gpu("9.0"), "0.5.19", LaunchOptions())
    )
    assert plan.requested == {
        "prefill_attention_backend": "trtllm_mha",
        "decode_attention_backend": "fa3",
        "kv_cache_dtype": "fp8_e4m3",
        "page_size": 32,
        "speculative_algorithm": "EAGLE",  # NEXTN is an alias
        "speculative_num_steps": 3,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4,
        "speculative_attention_mode": "decode",
        "speculative_draft_attention_backend": "fa3",
        "disable_cuda_graph": False,
    }


def test_equal_split_backends_also_request_attention_backend() -> None:
    conf = BackendConf(
        name="x",
        attention_backend=None,
        prefill_attention_backend="flashinfer",
        decode_attention_backend="flashinfer",
    )
    plan = plan_launch(CellSpec(NO_SPEC, conf, "auto", OFF, gpu("9.0"), "0.5.23", LaunchOptions()))
    assert plan.requested["attention_backend"] == "flashinfer"


@pytest.mark.parametrize(
    ("skip", "env"),
    [
        (SkipSoftmaxConf(), {}),
        (
            SkipSoftmaxConf(prefill=0.5),
            {"SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.5"},
        ),
        (SkipSoftmaxConf(decode=2), {"SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR": "2.0"}),
        (
            SkipSoftmaxConf(prefill=0.0, decode=1e-3),
            {
                "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.0",
                "SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR": "0.001",
            },
        ),
    ],
)
def test_skip_softmax_env_and_requested(skip: SkipSoftmaxConf, env: dict[str, str]) -> None:
    plan = plan_launch(
        CellSpec(MODEL, BACKENDS["fmha_v2"], "auto", skip, gpu("10.0"), "0.5.23", LaunchOptions())
    )
    assert plan.env == {"SGLANG_EXPOSE_OWN_ENV_VARS": "1", **env}
    requested_env = {k: v for k, v in plan.requested.items() if k.startswith("env:")}
    assert requested_env == {"env:" + k: float(v) for k, v in env.items()}


def test_fa3_with_fp8_e5m2_runs_triton_and_says_so() -> None:
    plan = plan_launch(
        CellSpec(MODEL, BACKENDS["fa3"], "fp8_e5m2", OFF, gpu("9.0"), "0.5.23", LaunchOptions())
    )
    assert flag(plan.args, "--attention-backend") == "fa3"  # asked for fa3 ...
    assert plan.requested["attention_backend"] == "triton"  # ... SGLang reports triton
    assert set(plan.runs.values()) == {"triton"}
    assert any("fa3_fp8_e5m2_to_triton" in n for n in plan.notes)


def test_trtllm_page_size_adjust_is_predicted() -> None:
    model = ModelConf(name="m", path="p", attention=AttentionGeometry(page_size=1))
    plan = plan_launch(
        CellSpec(model, BACKENDS["trtllm_mha"], "auto", OFF, gpu("10.0"), "0.5.23", LaunchOptions())
    )
    assert flag(plan.args, "--page-size") == "1"
    assert plan.requested["page_size"] == 64


def test_topk1_draft_tokens_adjust_is_predicted() -> None:
    spec = SpeculativeConf(algorithm="EAGLE", num_steps=3, eagle_topk=1, num_draft_tokens=8)
    plan = plan_launch(
        CellSpec(
            ModelConf(speculative=spec),
            BACKENDS["flashinfer"],
            "auto",
            OFF,
            gpu("9.0"),
            "0.5.23",
            LaunchOptions(),
        )
    )
    assert flag(plan.args, "--speculative-num-draft-tokens") == "8"
    assert plan.requested["speculative_num_draft_tokens"] == 4
