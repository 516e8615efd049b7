"""Effects matching and the --sim-config / answer-key checks of the simulated server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.simserver.effects import cell_targets, check_effect_keys, lookup, values_equal
from pipeline.simserver.simconfig import (
    Effect,
    SimConfigError,
    load_answer_key,
    load_sim_config,
)

RESOLVED = {
    "attention_backend": "fa3",
    "prefill_attention_backend": None,
    "decode_attention_backend": "triton",
    "kv_cache_dtype": "fp8_e4m3",
    "page_size": 64,
    "disable_radix_cache": True,
    "speculative_algorithm": "EAGLE",
    "speculative_num_steps": 3,
}
ENV = {"SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.5"}


@pytest.mark.parametrize(
    ("observed", "expected", "equal"),
    [
        ("0.5", 0.5, True),
        ("0.50", "0.5", True),
        (64, "64", True),
        ("fa3", "fa3", True),
        ("fa3", "FA3", False),
        (None, None, True),
        (None, "0", False),
        ("0", None, False),
        (True, "true", True),
        (True, 1, False),
        ("auto", 0, False),
    ],
)
def test_values_equal(observed: Any, expected: Any, equal: bool) -> None:
    assert values_equal(observed, expected) is equal


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("kv_cache_dtype", "fp8_e4m3"),
        ("prefill_attention_backend", "fa3"),  # falls back to --attention-backend, as SGLang does
        ("decode_attention_backend", "triton"),
        ("SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR", "0.5"),
        ("SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR", None),
    ],
)
def test_lookup(key: str, value: Any) -> None:
    assert lookup(key, RESOLVED, ENV) == value


def test_lookup_rejects_unknown_lower_case_keys() -> None:
    with pytest.raises(KeyError):
        lookup("kv_dtype", RESOLVED, ENV)


E = Effect
EFFECTS = [
    E({"kv_cache_dtype": "fp8_e4m3"}, accuracy_delta=-0.05, accept_length_delta=-0.1),
    E({"SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": 0.5}, accuracy_delta=-0.1),
    E({"SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR": 0.5}, accuracy_delta=-0.3),
    E({"prefill_attention_backend": "fa3", "page_size": 64}, accept_length_delta=-0.2),
    E({"prefill_attention_backend": "fa3", "page_size": 1}, accept_length_delta=-5.0),
]


@pytest.mark.parametrize(
    ("effects", "base", "expected"),
    [
        ([], (0.7, 2.6), (0.7, 2.6, ())),
        (EFFECTS, (0.7, 2.6), (0.55, 2.3, (0, 1, 3))),
        ([E({"kv_cache_dtype": "fp8_e4m3"}, accuracy_delta=-2.0)], (0.7, 2.6), (0.0, 2.6, (0,))),
        ([E({"page_size": 64}, accuracy_delta=0.5, accept_length_delta=9)], (0.7, 2.6),
         (1.0, 4.0, (0,))),
        ([E({"page_size": 64}, accept_length_delta=-9)], (0.7, 2.6), (0.7, 1.0, (0,))),
    ],
)  # fmt: skip
def test_cell_targets_add_up_and_clip(effects, base, expected) -> None:
    t = cell_targets(base[0], base[1], effects, RESOLVED, ENV)
    assert (t.accuracy, t.accept_length) == pytest.approx(expected[:2])
    assert t.matched == expected[2]


def test_cell_level_latency_adds_up_and_request_level_effects_add_none() -> None:
    effects = [
        E({"kv_cache_dtype": "fp8_e4m3"}, latency_s=0.2),
        E({"page_size": 64}, latency_s=0.05),
        E({"page_size": 1}, latency_s=9.0),  # matches nothing
        E({"page_size": 64}, latency_s=7.0, above_prompt_tokens=100),  # per request: ignored
    ]
    assert cell_targets(0.7, 2.6, effects, RESOLVED, ENV).latency_s == pytest.approx(0.25)
    assert cell_targets(0.7, 2.6, [], RESOLVED, ENV).latency_s == 0.0


def test_without_speculation_accept_length_is_one() -> None:
    resolved = {**RESOLVED, "speculative_algorithm": None}
    assert cell_targets(0.7, 2.6, [], resolved, ENV).accept_length == 1.0


def test_effect_key_typos_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"effects\[1\]\.match\.kv_dtype"):
        check_effect_keys([EFFECTS[0], E({"kv_dtype": "fp8_e4m3"})], RESOLVED)


def write(tmp_path: Path, obj: Any) -> Path:
    path = tmp_path / "sim.json"
    path.write_text(json.dumps(obj))
    return path


def test_full_sim_config_loads(tmp_path: Path) -> None:
    raw = {
        "sglang_version": "0.5.23", "accuracy": 0.6, "accept_length": 2.0, "seed": 3,
        "effects": [{"match": {"kv_cache_dtype": "fp8_e5m2"}, "accuracy_delta": -0.1}],
        "mean_completion_tokens": 50, "latency_s": 0.01, "startup_delay_s": 0.1,
        "faults": {"http_5xx_rate": 0.1, "crash_at_start": "AssertionError: boom",
                   "hang_after_requests": None},
        "answer_key": "key.jsonl", "ledger": "ledger.jsonl",
    }  # fmt: skip
    conf = load_sim_config(write(tmp_path, raw))
    assert conf.sglang_version == "0.5.23" and conf.seed == 3
    assert conf.effects == [Effect({"kv_cache_dtype": "fp8_e5m2"}, -0.1, 0.0)]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"acuracy": 0.5}, "unknown key acuracy; allowed: sglang_version, accuracy"),
        ({"sglang_version": "0.4.0"}, "sglang_version = '0.4.0'; use one of 0.5.19"),
        ({"accuracy": 1.5}, r"accuracy = 1.5 must be in \[0.0, 1.0\]"),
        ({"accuracy": "high"}, "accuracy = 'high' must be a number"),
        ({"mean_completion_tokens": 0}, "mean_completion_tokens = 0 must be >= 1"),
        ({"faults": {"crash_now": True}}, "unknown key faults.crash_now; allowed: reject_message"),
        ({"faults": {"http_5xx_rate": 2}}, r"faults.http_5xx_rate = 2.0 must be in \[0.0, 1.0\]"),
        ({"faults": {"crash_after_requests": "x"}}, "faults.crash_after_requests = 'x' must be an"),
        ({"effects": [{"match": {}}]}, r"effects\[0\].match is empty; expected"),
        ({"effects": [{"match": {"a": 1}, "acc_delta": 1}]}, r"unknown key effects\[0\].acc_delta"),
        ({"effects": [{"match": {"a": 1}, "accuracy_delta": "x"}]}, "accuracy_delta = 'x' must be"),
        ({"effects": [5]}, r"effects\[0\]: expected a mapping of Effect keys"),
        ([1], "expected a mapping of SimConfig keys"),
    ],
)
def test_bad_sim_config_names_the_key(tmp_path: Path, raw: dict, message: str) -> None:
    with pytest.raises(SimConfigError, match=message) as exc:
        load_sim_config(write(tmp_path, raw))
    assert str(tmp_path / "sim.json") in str(exc.value)


def test_missing_sim_config_file(tmp_path: Path) -> None:
    with pytest.raises(SimConfigError, match="cannot read"):
        load_sim_config(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question": "q", "answer": "a", "kind": "mcq"}', "not json"], "line 2: not JSON"),
        (['{"question": "", "answer": "a", "kind": "mcq"}'], "line 1: field 'question'"),
        (['{"question": "q", "answer": "a", "kind": "essay"}'], "line 1: field 'kind' is 'essay'"),
        (["[1, 2]"], "line 1: expected an object"),
    ],
)
def test_bad_answer_key_names_the_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "key.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SimConfigError, match=message):
        load_answer_key(path)


def test_answer_key_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "key.jsonl"
    path.write_text('\n{"question": "q?", "answer": " 4 ", "kind": "numeric"}\n\n')
    [entry] = load_answer_key(path)
    assert (entry.question, entry.answer, entry.kind) == ("q?", "4", "numeric")
