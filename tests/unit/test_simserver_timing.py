"""The simulated server's latency table (pure): which row a server gets, and what a pass costs."""

from __future__ import annotations

import pytest

from pipeline.simserver.info import TOKEN_CAPACITY, pool_tokens
from pipeline.simserver.timing import (
    PREFILL_SKIP_ENV,
    TABLES,
    batch_decode_s,
    batch_prefill_s,
    prefill_skip_factor,
    skipped_share,
    timing_model,
)

TABLE = TABLES["h200_8b_shape"]


@pytest.mark.parametrize(
    ("args", "prefill", "decode"),
    [
        ({"attention_backend": "fa3", "kv_cache_dtype": "auto"}, ("fa3", "*"), ("fa3", "*")),
        ({"attention_backend": "fa3", "kv_cache_dtype": "fp8_e4m3"},
         ("fa3", "fp8_e4m3"), ("fa3", "fp8_e4m3")),
        # fmha_v2 on SGLang 0.5.19: trtllm_mha prefill, fa3 decode (verify routed elsewhere).
        ({"attention_backend": "trtllm_mha", "prefill_attention_backend": "trtllm_mha",
          "decode_attention_backend": "fa3", "kv_cache_dtype": "auto"},
         ("trtllm_mha", "*"), ("fa3", "*")),
        ({"attention_backend": "triton", "kv_cache_dtype": "bf16"}, ("*", "*"), ("*", "*")),
        ({"attention_backend": None}, ("*", "*"), ("*", "*")),
    ],
)  # fmt: skip
def test_each_server_gets_its_prefill_and_decode_backends_rows(
    args: dict, prefill: tuple[str, str], decode: tuple[str, str]
) -> None:
    model = timing_model("h200_8b_shape", args, 0.0)
    assert model is not None
    assert model.prefill == TABLE[prefill[0]][prefill[1]]
    assert model.decode == TABLE[decode[0]][decode[1]]


def test_no_table_is_off_and_an_unknown_one_names_the_tables() -> None:
    assert timing_model(None, {}, 0.0) is None
    with pytest.raises(ValueError, match="h200_8b_shape"):
        timing_model("h100", {}, 0.0)


def test_a_batch_pays_the_fixed_cost_once_and_every_prompts_tokens() -> None:
    model = timing_model("h200_8b_shape", {"attention_backend": "fa3"}, 0.0)
    assert model is not None
    cost = model.prefill
    one = cost.fixed_s + cost.per_token_s * 1024 + cost.per_token2_s * 1024**2
    assert batch_prefill_s(model, [1024], "a") == pytest.approx(one)
    assert batch_prefill_s(model, [1024] * 8, "a") == pytest.approx(8 * one - 7 * cost.fixed_s)
    step = model.decode.step_s + 4 * model.decode.step_per_request_s
    assert batch_decode_s(model, [10, 30, 20, 5], "a") == pytest.approx(30 * step)


def test_the_jitter_is_within_its_share_and_the_same_for_the_same_prompt() -> None:
    model = timing_model("h200_8b_shape", {"attention_backend": "fa3"}, 0.05)
    exact = timing_model("h200_8b_shape", {"attention_backend": "fa3"}, 0.0)
    assert model is not None and exact is not None
    base = batch_prefill_s(exact, [4096], "p")
    times = [batch_prefill_s(model, [4096], f"p{i}") for i in range(200)]
    assert all(0.95 * base <= t <= 1.05 * base for t in times)
    assert len(set(times)) > 100  # repeats spread
    assert batch_prefill_s(model, [4096], "p7") == times[7]


def test_fmha_v2_is_slower_at_short_prompts_and_closer_at_long_ones() -> None:
    # SGLang 0.5.19: fmha_v2 copies the default pool (TOKEN_CAPACITY tokens) on every prefill.
    fa3 = timing_model("h200_8b_shape", {"attention_backend": "fa3"}, 0.0, 0.0, TOKEN_CAPACITY)
    v2 = timing_model("h200_8b_shape", {"attention_backend": "trtllm_mha"}, 0.0, 0.0,
                      TOKEN_CAPACITY)  # fmt: skip
    assert fa3 is not None and v2 is not None
    ratios = [batch_prefill_s(fa3, [n], "") / batch_prefill_s(v2, [n], "") for n in
              (1024, 16384, 131072)]  # fmt: skip
    assert ratios == sorted(ratios) and ratios[0] < 0.6


@pytest.mark.parametrize(
    ("backend", "pool", "extra_ms"),
    [
        ("trtllm_mha", 0, 0.0),                        # 0.5.23: the pages are read in place
        ("trtllm_mha", TOKEN_CAPACITY, 3.0),           # 0.5.19 at the default pool
        ("trtllm_mha", 2 * TOKEN_CAPACITY, 6.0),       # twice the pool, twice the copy
        ("fa3", 2 * TOKEN_CAPACITY, 0.0),              # fa3 copies nothing on any release
    ],
)  # fmt: skip
def test_the_whole_pool_copy_grows_with_the_pool(backend: str, pool: int, extra_ms: float) -> None:
    args = {"attention_backend": backend}
    plain = timing_model("h200_8b_shape", args, 0.0)
    copying = timing_model("h200_8b_shape", args, 0.0, 0.0, pool)
    assert plain is not None and copying is not None
    extra = batch_prefill_s(copying, [1024], "") - batch_prefill_s(plain, [1024], "")
    assert extra * 1000 == pytest.approx(extra_ms)


@pytest.mark.parametrize(
    ("args", "pool"),
    [
        ({}, TOKEN_CAPACITY),
        ({"mem_fraction_static": 0.85}, TOKEN_CAPACITY),
        ({"mem_fraction_static": 0.425}, TOKEN_CAPACITY // 2),
        ({"mem_fraction_static": 0.5, "max_total_tokens": 262144}, 262144),
        ({"max_total_tokens": None, "mem_fraction_static": None}, TOKEN_CAPACITY),
    ],
)  # fmt: skip
def test_the_pool_is_max_total_tokens_or_grows_with_the_memory_fraction(
    args: dict, pool: int
) -> None:
    assert pool_tokens(args) == pool


SKIPPING = {"attention_backend": "trtllm_mha", "kv_cache_dtype": "auto"}


@pytest.mark.parametrize(
    ("factor", "low", "high"),
    [(0.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (1e3, 0.04, 0.07), (1e4, 0.3, 0.4), (3e4, 0.6, 0.7),
     (1e5, 0.8, 0.9), (1e6, 0.97, 0.99)],
)  # fmt: skip
def test_the_skipped_share_grows_with_the_factor_as_measured_on_the_trained_model(
    factor: float, low: float, high: float
) -> None:
    curve = TABLES["h200_synth_llama"]["trtllm_mha"]["*"].skip
    assert curve is not None
    assert low <= skipped_share(curve, factor) <= high


def test_skipping_saves_only_attention_so_the_gain_grows_with_factor_and_length() -> None:
    def gain(factor: float, tokens: int) -> float:
        exact = timing_model("h200_synth_llama", SKIPPING, 0.0)
        skipped = timing_model("h200_synth_llama", SKIPPING, 0.0, factor)
        assert exact is not None and skipped is not None
        return batch_prefill_s(exact, [tokens], "a") / batch_prefill_s(skipped, [tokens], "a")

    by_factor = [gain(f, 16384) for f in (0.0, 1e3, 1e4, 3e4, 1e5, 1e6)]
    assert by_factor[0] == 1.0 and by_factor == sorted(by_factor) and by_factor[-1] < 2.0
    by_length = [gain(3e4, n) for n in (1024, 4096, 16384)]
    assert by_length == sorted(by_length) and by_length[0] < 1.05 < by_length[-1]


def test_fa3_and_the_other_tables_ignore_the_factor() -> None:
    for name, args in (("h200_synth_llama", {"attention_backend": "fa3"}),
                       ("h200_8b_shape", SKIPPING)):  # fmt: skip
        exact, skipped = timing_model(name, args, 0.0), timing_model(name, args, 0.0, 1e6)
        assert exact is not None and skipped is not None
        assert batch_prefill_s(exact, [16384], "a") == batch_prefill_s(skipped, [16384], "a")


@pytest.mark.parametrize(
    ("env", "factor"),
    [({}, 0.0), ({PREFILL_SKIP_ENV: ""}, 0.0), ({PREFILL_SKIP_ENV: "3e4"}, 3e4),
     ({"SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR": "9"}, 0.0)],
)  # fmt: skip
def test_the_prefill_factor_is_read_from_the_servers_environment(
    env: dict[str, str], factor: float
) -> None:
    assert prefill_skip_factor(env) == factor
