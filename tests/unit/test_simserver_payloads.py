"""Response shapes of the simulated server against the key sets of real SGLang 0.5.19 and 0.5.23.

The key sets (``tests/helpers/live_keys.py``) are copied from ``tests/data/live-sglang-<release>/``
(responses of real servers on an H200); ``test_key_sets_match_the_live_files`` and
``test_0_5_23_key_sets_match_the_recorded_files`` re-read those files, so the copies cannot drift.
"""

from __future__ import annotations

import json
import random

import pytest

from pipeline.simserver import payloads
from pipeline.simserver.faults import Faults, rate_fault, stop_fault
from pipeline.simserver.meta_info import meta_info
from pipeline.simserver.model import Completion
from pipeline.simserver.served import EOS_TOKEN_ID, Flavour, Served
from pipeline.simserver.spec import draw_spec, thresholds
from tests.helpers.live_keys import (
    CHAT_KEYS,
    CHOICE_KEYS,
    FLUSH_BODY,
    GENERATE_KEYS,
    INTERNAL_STATE_EXTRA_KEYS,
    INTERNAL_STATE_EXTRA_KEYS_0_5_23,
    LIVE,
    LIVE_0_5_23,
    MESSAGE_KEYS,
    MESSAGE_KEYS_0_5_23,
    META_KEYS_0_5_19,
    META_KEYS_0_5_23,
    MODEL_CARD_KEYS,
    MODEL_INFO_KEYS,
    MODEL_INFO_KEYS_0_5_23,
    SPEC_DETAILS_KEYS,
    STREAM_CHUNK_KEYS_0_5_23,
    USAGE_KEYS,
    USAGE_KEYS_0_5_23,
)
from tests.helpers.live_shapes import stream_kinds


def _live(name: str) -> dict:
    return json.loads((LIVE / name).read_text())


def test_key_sets_match_the_live_files() -> None:
    for name in (
        "chat_completion_2.json",
        "chat_completion_return_meta_info_and_spec_details.json",
    ):
        chat = _live(name)
        choice = chat["choices"][0]
        assert set(chat) == CHAT_KEYS and set(choice) == CHOICE_KEYS
        assert set(choice["message"]) == MESSAGE_KEYS and set(chat["usage"]) == USAGE_KEYS
        assert set(choice["meta_info"]) == META_KEYS_0_5_19
        assert set(chat["sglext"]["spec_tokens_details"]) == SPEC_DETAILS_KEYS
    gen = _live("generate.json")
    assert set(gen) == GENERATE_KEYS and set(gen["meta_info"]) == META_KEYS_0_5_19
    assert set(_live("v1_models.json")["data"][0]) == MODEL_CARD_KEYS
    assert set(_live("model_info.json")) == MODEL_INFO_KEYS
    info = _live("server_info_after_requests.json")
    assert set(info["internal_states"][0]) - set(info) == INTERNAL_STATE_EXTRA_KEYS - {
        "startup_time"
    }
    assert _live("flush_cache.json")["body"] == FLUSH_BODY


def test_0_5_23_key_sets_match_the_recorded_files() -> None:
    def rec(name: str) -> dict:
        return json.loads((LIVE_0_5_23 / name).read_text())

    chat = rec("chat_completion_return_meta_info_and_spec_details.json")
    choice = chat["choices"][0]
    assert set(chat) == CHAT_KEYS and set(choice) == CHOICE_KEYS
    assert set(choice["message"]) == MESSAGE_KEYS_0_5_23 and set(chat["usage"]) == USAGE_KEYS_0_5_23
    assert set(choice["meta_info"]) == META_KEYS_0_5_23
    assert set(chat["sglext"]["spec_tokens_details"]) == SPEC_DETAILS_KEYS
    gen = rec("generate.json")
    assert set(gen) == GENERATE_KEYS and set(gen["meta_info"]) == META_KEYS_0_5_23
    assert set(rec("v1_models.json")["data"][0]) == MODEL_CARD_KEYS
    assert set(rec("model_info.json")) == MODEL_INFO_KEYS_0_5_23
    info = rec("server_info_after_requests.json")
    assert set(info["internal_states"][0]) - set(info) == INTERNAL_STATE_EXTRA_KEYS_0_5_23 - {
        "startup_time"
    }
    assert (LIVE_0_5_23 / "flush_cache.json").read_text() == FLUSH_BODY  # recorded as sent
    kinds = stream_kinds((LIVE_0_5_23 / "chat_completion_stream.txt").read_text())
    for chunk in kinds["role"] + kinds["content"] + kinds["finish"]:
        assert set(chunk) == STREAM_CHUNK_KEYS_0_5_23
    assert set(kinds["usage"][0]) == STREAM_CHUNK_KEYS_0_5_23 | {"usage"}
    assert set(kinds["usage"][0]["usage"]) == USAGE_KEYS_0_5_23
    assert kinds["done"] == ["[DONE]"] and not kinds["sglext"]  # the stream asked no spec details


def served(tokens: int = 41, spec: bool = True, finish: str = "stop") -> Served:
    words = tuple(["w"] + [" w"] * (tokens - 1))
    completion = Completion(words, finish, "q", "mcq", True, "A")
    draw = draw_spec(random.Random(0), tokens, thresholds(0.6, 3)) if spec else None
    return Served("rid", completion, 12, draw, 1000.0, 1000.1, 1000.3, 1000.5)


V19 = Flavour("0.5.19", 4, timing_fields=True)
V23 = Flavour("0.5.23", 4, timing_fields=True)


@pytest.mark.parametrize(("flavour", "keys"), [(V19, META_KEYS_0_5_19), (V23, META_KEYS_0_5_23)])
def test_meta_info_keys(flavour: Flavour, keys: set[str]) -> None:
    assert set(meta_info(served(), flavour, 1000.6)) == keys


def test_meta_info_values_follow_sglang() -> None:
    s = served(41)
    m = meta_info(s, V19, 1000.6)
    d = s.spec
    assert d is not None
    assert m["spec_verify_ct"] == d.verify_ct and m["completion_tokens"] == 41
    assert m["spec_accept_length"] == 41 / d.verify_ct
    assert m["spec_accept_rate"] == d.num_correct_drafts / (3 * d.verify_ct)
    assert m["spec_num_proposed_drafts"] == m["spec_proposed_drafts"] == 3 * d.verify_ct
    assert m["spec_correct_drafts_histogram"] == m["spec_accept_histogram"] == list(d.histogram)
    assert m["finish_reason"] == {"type": "stop", "matched": EOS_TOKEN_ID}
    cut = meta_info(served(10, finish="length"), V19, 0.0)["finish_reason"]
    assert cut == {"type": "length", "length": 10}


@pytest.mark.parametrize(
    ("s", "flavour"),
    [(served(spec=False), Flavour("0.5.19", 0, True)), (served(tokens=1), V19),
     (served(), Flavour("0.5.19", 4, True, spec_keys=False))],
)  # fmt: skip
def test_no_spec_keys_without_verify_steps(s: Served, flavour: Flavour) -> None:
    assert not any(k.startswith("spec_") for k in meta_info(s, flavour, 0.0))
    assert payloads.sglext([s], flavour) is None


def test_timing_fields_in_order_with_the_served_prefill() -> None:
    m = meta_info(served(), V19, 1000.6)
    order = ["request_received_ts", "api_server_dispatch_finish_ts", "forward_entry_time",
             "prefill_finished_time", "request_finished_ts",
             "response_sent_to_client_ts"]  # fmt: skip
    assert [m[k] for k in order] == [1000.0, 1000.05, 1000.1, 1000.3, 1000.5, 1000.6]
    assert m["queue_time"] == pytest.approx(0.05) and m["e2e_latency"] == pytest.approx(0.5)


def test_timing_fields_only_with_metrics() -> None:
    m = meta_info(served(), Flavour("0.5.19", 4, timing_fields=False), 0.0)
    assert "request_received_ts" not in m and "queue_time" not in m and "e2e_latency" in m


@pytest.mark.parametrize(
    ("flavour", "message_keys", "usage_keys"),
    [(V19, MESSAGE_KEYS, USAGE_KEYS), (V23, MESSAGE_KEYS_0_5_23, USAGE_KEYS_0_5_23)],
)
def test_chat_response_shape(flavour: Flavour, message_keys: set, usage_keys: set) -> None:
    body = payloads.chat_response([served()], flavour, "default", True, True, 1000.6)
    assert set(body) == CHAT_KEYS and set(body["choices"][0]) == CHOICE_KEYS
    assert set(body["choices"][0]["message"]) == message_keys
    assert set(body["usage"]) == usage_keys
    assert set(body["sglext"]["spec_tokens_details"]) == SPEC_DETAILS_KEYS
    assert body["usage"]["total_tokens"] == 12 + 41 and body["model"] == "default"
    plain = payloads.chat_response([served()], flavour, "m", False, False, 0.0)
    assert "sglext" not in plain and "meta_info" not in plain["choices"][0]


def test_0_5_23_first_token_latency_is_the_served_prefill_end() -> None:
    m = meta_info(served(), V23, 1000.6)
    assert m["first_token_latency"] == pytest.approx(0.3)  # prefill finished - received
    assert (m["storage_prefetch_wait"], m["storage_staging_wait"]) == (0.0, 0.0)


def test_spec_details_is_a_list_for_several_choices() -> None:
    details = payloads.sglext([served(), served(30)], V19)
    assert details is not None and isinstance(details["spec_tokens_details"], list)
    assert [d["spec_verify_ct"] for d in details["spec_tokens_details"]] == [
        s.spec.verify_ct for s in (served(), served(30)) if s.spec
    ]


def test_generate_response_shape() -> None:
    body = payloads.generate_response(served(), V19, 0.0)
    assert set(body) == GENERATE_KEYS and len(body["output_ids"]) == 41


def test_rate_faults_are_deterministic_per_attempt() -> None:
    faults = Faults.from_dict({"http_5xx_rate": 0.3, "truncation_rate": 0.3})
    draws = [[rate_fault(faults, 0, f"p{i}", a) for i in range(400)] for a in (0, 0, 1)]
    assert draws[0] == draws[1] != draws[2]
    hit = sum(f == "http_5xx" for f in draws[0]) / 400
    assert hit == pytest.approx(0.3, abs=0.07)
    assert rate_fault(Faults(), 0, "p", 0) is None


@pytest.mark.parametrize(
    ("raw", "completed", "expected"),
    [({"crash_after_requests": 2}, 1, None),
     ({"crash_after_requests": 2}, 2, "crash_after_requests"),
     ({"hang_after_requests": 0}, 0, "hang_after_requests"), ({}, 99, None)],
)  # fmt: skip
def test_stop_faults(raw: dict, completed: int, expected: str | None) -> None:
    assert stop_fault(Faults.from_dict(raw), completed) == expected
