from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from backends.backend_conf import (
    AttentionGeometry,
    BackendConf,
    GpuConf,
    ModelConf,
    SkipSoftmaxConf,
    SpeculativeConf,
)
from backends.gpu import gpu_from_config
from backends.launch import LaunchOptions, plan_launch
from backends.resolved import CellSpec
from backends.server_info import ServerInfo
from backends.verify import (
    Mismatch,
    compare_models_list,
    compare_runs,
    compare_server_info,
    model_requested,
    observed_runs,
    observed_settings,
    speculation_off,
    values_match,
)

LIVE = Path(__file__).parents[1] / "data" / "live-sglang-0.5.19" / "server_info_after_requests.json"
parse = ServerInfo.parse
LIVE_0_5_23_INFO = LIVE.parents[1] / "live-sglang-0.5.23" / "server_info_after_requests.json"
PREFILL_ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
DECODE_ENV = "SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR"


@pytest.fixture
def live() -> dict:
    return json.loads(LIVE.read_text())


def live_plan(skip: SkipSoftmaxConf | None = None, graphs: bool = False) -> dict[str, object]:
    """The plan of the launch that produced the live file (gpu/README.md): no CUDA graphs."""
    spec = SpeculativeConf(
        algorithm="STANDALONE",
        num_steps=3,
        eagle_topk=1,
        num_draft_tokens=4,
        draft_model_path="MODEL",
    )
    model = ModelConf(
        name="tiny-llama",
        path="MODEL",
        speculative=spec,
        attention=AttentionGeometry(page_size=32),
        extra_args=[] if graphs else ["--disable-cuda-graph"],
    )
    backend = BackendConf(
        name="live",
        attention_backend=None,
        prefill_attention_backend="trtllm_mha",
        decode_attention_backend="flashinfer",
        draft_attention_backend="flashinfer",
        speculative_attention_mode="decode",
    )
    h200 = gpu_from_config(GpuConf(detect=False, compute_capability="9.0"))
    opts = LaunchOptions(max_running_requests=None)
    return plan_launch(
        CellSpec(model, backend, "auto", skip or SkipSoftmaxConf(), h200, "0.5.19", opts)
    ).requested


def test_observed_settings_of_live_server(live: dict) -> None:
    assert observed_settings(parse(live)) == {
        "attention_backend": "flashinfer",
        "prefill_attention_backend": "trtllm_mha",
        "decode_attention_backend": "flashinfer",
        "kv_cache_dtype": "auto",
        "page_size": 32,
        "speculative_algorithm": "STANDALONE",
        "speculative_num_steps": 3,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4,
        "speculative_attention_mode": "decode",
        "speculative_draft_attention_backend": "flashinfer",
        "model_path": "tiny-llama",
        "served_model_name": "tiny-llama",
        "speculative_draft_model_path": "tiny-llama",
        "device": "cuda",
        "dp_size": 1,
        "version": "0.5.19",
        "mem_fraction_static": 0.3,
        "max_total_num_tokens": 10897984,
    }


def test_live_server_confirms_its_own_launch_plan(live: dict) -> None:
    assert compare_server_info(live_plan(), parse(live)) == []


def test_observed_env_comes_from_internal_states(live: dict) -> None:
    live["internal_states"][0]["env_vars"][PREFILL_ENV] = "0.5"
    assert observed_settings(parse(live))[f"env:{PREFILL_ENV}"] == "0.5"
    assert compare_server_info(live_plan(SkipSoftmaxConf(prefill=0.5)), parse(live)) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d.update(decode_attention_backend="fa3"),
            [Mismatch("decode_attention_backend", "flashinfer", "fa3")],
        ),
        (
            lambda d: d.update(speculative_num_draft_tokens=8),
            [Mismatch("speculative_num_draft_tokens", 4, 8)],
        ),
        (
            lambda d: d.update(kv_cache_dtype="fp8_e4m3"),
            [Mismatch("kv_cache_dtype", "auto", "fp8_e4m3")],
        ),
        # A key this SGLang does not report could not be checked: not a wrong value.
        (
            lambda d: d.pop("speculative_attention_mode"),
            [Mismatch("speculative_attention_mode", "decode", None, verifiable=False)],
        ),
    ],
)
def test_mismatches(live: dict, edit: Callable[[dict], object], expected: list[Mismatch]) -> None:
    for state in [live, *live["internal_states"]]:
        edit(state)
    assert compare_server_info(live_plan(), parse(live)) == expected


def test_requested_env_missing_is_a_mismatch_when_env_vars_exposed(live: dict) -> None:
    requested = live_plan(SkipSoftmaxConf(prefill=0.5, decode=1.0))
    assert compare_server_info(requested, parse(live)) == [
        Mismatch(f"env:{PREFILL_ENV}", 0.5, None),
        Mismatch(f"env:{DECODE_ENV}", 1.0, None),
    ]


def test_requested_env_unverifiable_without_env_vars(live: dict) -> None:
    del live["internal_states"][0]["env_vars"]
    found = compare_server_info(live_plan(SkipSoftmaxConf(prefill=0.5)), parse(live))
    assert found == [Mismatch(f"env:{PREFILL_ENV}", 0.5, None, verifiable=False)]


def test_env_value_differs(live: dict) -> None:
    live["internal_states"][0]["env_vars"][PREFILL_ENV] = "0.25"
    found = compare_server_info({f"env:{PREFILL_ENV}": 0.5}, parse(live))
    assert found == [Mismatch(f"env:{PREFILL_ENV}", 0.5, "0.25")]


def test_env_requested_unset(live: dict) -> None:
    assert compare_server_info({f"env:{DECODE_ENV}": None}, parse(live)) == []
    leaked = copy.deepcopy(live)
    leaked["internal_states"][0]["env_vars"][DECODE_ENV] = "3"
    assert compare_server_info({f"env:{DECODE_ENV}": None}, parse(leaked)) == [
        Mismatch(f"env:{DECODE_ENV}", None, "3")
    ]


def test_key_only_in_internal_states_is_found(live: dict) -> None:
    del live["kv_cache_dtype"]
    assert compare_server_info({"kv_cache_dtype": "auto"}, parse(live)) == []


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("0.5", 0.5, True),
        (0.5, "0.50", True),
        (1, "1.0", True),
        (3, 3, True),
        ("1e-3", 0.001, True),
        ("0.5", 0.25, False),
        (None, None, True),
        (None, "None", False),
        ("EAGLE", "EAGLE", True),
        ("EAGLE", "EAGLE3", False),
        (True, 1, False),
        ("fa3", None, False),
    ],
)
def test_values_match(a: object, b: object, same: bool) -> None:
    assert values_match(a, b) is same


def test_live_server_confirms_its_model_and_kernels(live: dict) -> None:
    model = ModelConf(name="x", path="MODEL", served_model_name="tiny-llama")
    wrong = compare_server_info(model_requested(model, launched=True), parse(live))
    assert [(m.key, m.requested, m.observed) for m in wrong] == [
        ("model_path", "MODEL", "tiny-llama")  # the live server served tiny-llama
    ]
    assert (
        compare_server_info(model_requested(ModelConf(path="tiny-llama"), False), parse(live)) == []
    )
    runs = observed_runs(parse(live), "SM90", speculative=True)
    assert runs == {"prefill": "fmha_v2", "decode": "flashinfer", "verify": "flashinfer",
                    "draft": "flashinfer"}  # fmt: skip


@pytest.mark.parametrize(
    ("model", "launched", "expected"),
    [
        (ModelConf(name="n", path="p"), True, {"model_path": "p", "served_model_name": "n"}),
        (ModelConf(name="n", path="p"), False, {"model_path": "p"}),
        (ModelConf(name="n", path="p", served_model_name="s"), False,
         {"model_path": "p", "served_model_name": "s"}),
        (ModelConf(name="n", path="p", speculative=SpeculativeConf("EAGLE3", draft_model_path="d")),
         False, {"model_path": "p", "speculative_draft_model_path": "d"}),
        (ModelConf(name="n", path="p", load_format="dummy"), False,
         {"model_path": "p", "load_format": "dummy"}),
    ],
)  # fmt: skip
def test_model_requested(model: ModelConf, launched: bool, expected: dict) -> None:
    assert model_requested(model, launched) == expected


@pytest.mark.parametrize(
    ("models", "expected"),
    [
        ({"data": [{"id": "m"}]}, None),
        ({"data": [{"id": "other"}]}, Mismatch("/v1/models", "m", ["other"])),
        (None, Mismatch("/v1/models", "m", None, verifiable=False)),
    ],
)
def test_compare_models_list(models: dict | None, expected: Mismatch | None) -> None:
    assert compare_models_list("m", models) == expected


@pytest.mark.parametrize(
    ("info", "off"),
    [
        ({"speculative_algorithm": None}, True),
        ({"speculative_algorithm": "NONE"}, True),
        ({"speculative_algorithm": "EAGLE"}, False),
        ({"internal_states": [{"speculative_algorithm": None}]}, True),
        ({}, None),
    ],
)
def test_speculation_off(info: dict, off: bool | None) -> None:
    assert speculation_off(parse(info)) is off


def test_kernels_other_than_the_label_are_mismatches() -> None:
    label = {"prefill": "fa3", "decode": "fa3", "verify": "default"}
    assert compare_runs(label, {"prefill": "fa3", "decode": "triton", "verify": "x"}) == [
        Mismatch("runs.decode", "fa3", "triton")
    ]


def test_cuda_graphs_are_verified_as_the_argv_asks(live: dict) -> None:
    # The 0.5.19 recording ran with --disable-cuda-graph: a plan with graphs on is not what runs.
    assert "disable_cuda_graph" in live_plan() and live_plan()["disable_cuda_graph"] is True
    found = compare_server_info(live_plan(graphs=True), parse(live))
    assert found == [Mismatch("disable_cuda_graph", False, True)]
    # The real 0.5.23 server ran with graphs on (tests/data/live-sglang-0.5.23).
    recorded = json.loads(LIVE_0_5_23_INFO.read_text())
    assert parse(recorded).setting("disable_cuda_graph") == (True, False)
    assert recorded["cuda_graph_config"]["decode"]["backend"] == "full"


def test_random_weights_are_checked_against_the_live_load_format(live: dict) -> None:
    """The live 0.5.19 server loaded its checkpoint: a cell asking for dummy weights fails."""
    asked = model_requested(ModelConf(name="n", path="p", load_format="dummy"), launched=False)
    found = compare_server_info({"load_format": asked["load_format"]}, parse(live))
    assert found == [Mismatch("load_format", "dummy", "auto")]
    assert compare_server_info({"load_format": "auto"}, parse(live)) == []
