"""Contract tests from a real SGLang 0.5.19 server's responses (tests/data/live-sglang-0.5.19).

1. Our parsers read every live response and get its numbers right.
2. The simulated server, in its 0.5.19 flavour and launched with the live server's own argv,
   answers every endpoint with the same nested key structure as the real one.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import pytest

from backends.server_info import ServerInfo
from backends.verify import observed_settings
from evals.responses import parse_chat_response
from pipeline.measuring.accept_stats import server_accept_length, summarize_accept
from pipeline.serving.server import HealthPolicy, free_port, managed_server
from tests.helpers.live_shapes import call, differences, live_dir, shape

LIVE = live_dir("0.5.19")
CHATS = ["chat_completion_return_meta_info_and_spec_details.json", "chat_completion_2.json"]


def live(name: str) -> Any:
    return json.loads((LIVE / name).read_text())


def test_every_live_file_is_covered_here():
    covered = {
        *CHATS,
        "generate.json",
        "server_info_after_requests.json",
        "server_info_before_requests.json",
        "flush_cache.json",
        "v1_models.json",
        "model_info.json",
        "health_generate_poll.json",
    }
    assert {p.name for p in LIVE.glob("*.json")} == covered


@pytest.mark.parametrize("name", CHATS)
def test_chat_parser_reads_live_spec_stats(name):
    body = live(name)
    meta = body["choices"][0]["meta_info"]
    parsed = parse_chat_response(body)
    assert parsed.finish_reason == "length"
    assert parsed.completion_tokens == meta["completion_tokens"]
    spec = parsed.spec
    assert spec is not None
    assert (spec.verify_ct, spec.num_correct_drafts, spec.num_proposed_drafts) == (
        meta["spec_verify_ct"],
        meta["spec_num_correct_drafts"],
        meta["spec_num_proposed_drafts"],
    )
    assert list(spec.histogram) == meta["spec_correct_drafts_histogram"]
    assert spec.accept_length == pytest.approx(meta["spec_accept_length"])


def test_accept_stats_from_live_chats_reproduce_server_identities():
    records = [
        {"spec": parse_chat_response(live(n)).spec.__dict__, "error_kind": None} for n in CHATS
    ]
    out = summarize_accept(records, speculative=True)
    # SGLang's identity: completion_tokens = 1 (prefill) + verify_ct + correct drafts
    assert out.completion_tokens == (out.verify_ct or 0) + (out.num_correct_drafts or 0) + len(
        CHATS
    )


def test_server_info_parsers_on_live_files():
    after, before = (
        ServerInfo.parse(live("server_info_after_requests.json")),
        ServerInfo.parse(live("server_info_before_requests.json")),
    )
    assert server_accept_length(after) == pytest.approx(1.74375)
    assert server_accept_length(before) is None  # absent until the first verify step
    observed = observed_settings(after)
    assert observed["prefill_attention_backend"] == "trtllm_mha"
    assert observed["decode_attention_backend"] == "flashinfer"
    assert observed["speculative_algorithm"] == "STANDALONE"


def test_health_poll_shape_matches_our_waiting_logic():
    polls = live("health_generate_poll.json")["polls"]
    statuses = [status for _, status in polls]
    first_503 = statuses.index(503)
    assert all(s is None for s in statuses[:first_503])  # connection refused first
    assert statuses[-1] == 200 and 200 not in statuses[:-1]


# --- the simulated server against the same files -------------------------------------------


# The live launch (benchmarks/live_h200/README.md), as the simulated server gets it.
LIVE_ARGV = shlex.split(
    "--model-path tiny-llama --mem-fraction-static 0.3 --disable-cuda-graph "
    "--grammar-backend none --random-seed 0 --page-size 32 --enable-metrics "
    "--prefill-attention-backend trtllm_mha --decode-attention-backend flashinfer "
    "--speculative-attention-mode decode --speculative-algorithm STANDALONE "
    "--speculative-draft-model-path tiny-llama --speculative-num-steps 3 "
    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
    "--speculative-draft-attention-backend flashinfer"
)


# ... and its environment (the variables the live run set by hand).
LIVE_ENV = {"SGLANG_EXPOSE_OWN_ENV_VARS": "1", "SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK": "1"}


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim")
    (folder / "key.jsonl").write_text("")
    (folder / "sim.json").write_text(
        json.dumps(
            {
                "sglang_version": "0.5.19",
                "startup_delay_s": 0.2,
                "answer_key": str(folder / "key.jsonl"),
                "ledger": str(folder / "ledger.jsonl"),
            }
        )
    )
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "pipeline.simserver",
        *LIVE_ARGV,
        "--port",
        str(port),
        "--sim-config",
        str(folder / "sim.json"),
    ]
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **LIVE_ENV}
    with managed_server(argv, env, url, folder / "server.log", HealthPolicy(30, 0.05, 0.5), 5):
        yield url


CHAT = {
    "model": "tiny-llama",
    "messages": [{"role": "user", "content": "Say something."}],
    "max_tokens": 64,
    "temperature": 0,
    "return_meta_info": True,
    "return_spec_tokens_details": True,
}


@pytest.mark.integration
@pytest.mark.parametrize(
    ("live_file", "path", "body"),
    [
        ("chat_completion_return_meta_info_and_spec_details.json", "/v1/chat/completions", CHAT),
        (
            "generate.json",
            "/generate",
            {"text": "Hello", "sampling_params": {"max_new_tokens": 48, "temperature": 0}},
        ),
        ("server_info_after_requests.json", "/server_info", None),
        ("v1_models.json", "/v1/models", None),
        ("model_info.json", "/model_info", None),
    ],
)
def test_simulated_server_answers_with_live_shapes(sim, live_file, path, body):
    if path == "/server_info":
        # Enough verify steps for one decode log interval, so avg_spec_accept_length exists, as
        # live (a reply that stops at EOS early may not fill one interval alone).
        for _ in range(8):
            call(sim, "/v1/chat/completions", CHAT)
            if "avg_spec_accept_length" in call(sim, path, body)[1]["internal_states"][0]:
                break
    status, answer = call(sim, path, body)
    assert status == 200
    assert differences(shape(live(live_file)), shape(answer)) == []


@pytest.mark.integration
def test_simulated_flush_cache_body_is_live(sim):
    status, body = call(sim, "/flush_cache")
    assert (status, body) == (live("flush_cache.json")["status"], live("flush_cache.json")["body"])
