"""Contract tests from a real SGLang 0.5.23 server's bodies (tests/data/live-sglang-0.5.23).

The simulated server in its 0.5.23 flavour, launched with the recorded server's own flags (its
``launch_command``) and environment, answers every recorded endpoint with the recorded nested key
structure (values may differ), streams chunks of the recorded kinds and shapes, and exposes the
Prometheus samples the pipeline reads with the recorded label names. What 0.5.23 changed from
0.5.19 is listed in that folder's README.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from backends.server_info import MetricNames
from pipeline.serving.server import HealthPolicy, free_port, managed_server
from tests.helpers.live_shapes import (
    call,
    differences,
    live_dir,
    recorded_launch,
    shape,
    stream_kinds,
)

LIVE = live_dir("0.5.23")
# The variables the live run set by hand (the rest of its env_vars SGLang sets itself).
LIVE_ENV = {"SGLANG_EXPOSE_OWN_ENV_VARS": "1", "SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK": "1"}
REQUESTS = {r["file"]: r for r in json.loads((LIVE / "requests.json").read_text())}

pytestmark = pytest.mark.integration


def live(name: str) -> Any:
    return json.loads((LIVE / name).read_text())


def test_every_recorded_body_is_covered_here():
    covered = {
        "flush_cache.json", "server_info_before_requests.json", "v1_models.json",
        "model_info.json", "chat_completion_return_meta_info_and_spec_details.json",
        "chat_completion_stream.txt", "generate.json", "server_info_after_requests.json",
        "metrics.txt",
    }  # fmt: skip
    assert set(REQUESTS) == covered
    # The abort recordings (aborts-README.md says how they were made): every abort-* body is read
    # by tests/unit/test_aborted_replies.py; the two refusals are what the README documents.
    aborts = {p.name for p in LIVE.glob("abort-*.json")}
    assert aborts == {"abort-chat.json", "abort-generate.json", "abort-too-long-chat.json"}
    refusals = {
        "too-long-generate.json": "longer than the model's context length",
        "stream-with-return-meta-info-refused.json": "not supported with streaming",
    }
    for name, said in refusals.items():
        assert name in (LIVE / "aborts-README.md").read_text(), name
        assert said in (LIVE / name).read_text(encoding="utf-8"), name
    recorded = covered | aborts | set(refusals) | {"aborts-README.md", "aborts-requests.json"}
    assert {p.name for p in LIVE.iterdir()} == recorded | {"requests.json", "README.md"}


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim23")
    (folder / "key.jsonl").write_text("")
    conf = {
        "sglang_version": "0.5.23",
        "startup_delay_s": 0.2,
        "answer_key": str(folder / "key.jsonl"),
        "ledger": str(folder / "ledger.jsonl"),
    }
    (folder / "sim.json").write_text(json.dumps(conf))
    port = free_port()
    argv = [sys.executable, "-m", "pipeline.simserver", *recorded_launch("0.5.23")]
    argv += ["--port", str(port), "--sim-config", str(folder / "sim.json")]
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **LIVE_ENV}
    with managed_server(argv, env, url, folder / "server.log", HealthPolicy(30, 0.05, 0.5), 5):
        yield url


def test_server_info_before_any_request_has_the_recorded_shape(sim):
    # First in this module's order: the recording is also taken before any request.
    status, answer = call(sim, "/server_info")
    assert status == 200
    assert differences(shape(live("server_info_before_requests.json")), shape(answer)) == []


@pytest.mark.parametrize(
    "name",
    [
        "v1_models.json",
        "model_info.json",
        "chat_completion_return_meta_info_and_spec_details.json",
        "generate.json",
    ],
)
def test_simulated_server_answers_with_the_recorded_shape(sim, name):
    request = REQUESTS[name]
    status, answer = call(sim, request["endpoint"], request["body"])
    assert status == request["status"] == 200
    recorded = live(name)
    for body in (recorded, answer):  # finish_reason is compared with the recorded one of its type
        _set_aside_finish(body)
    assert differences(shape(recorded), shape(answer)) == []


def _set_aside_finish(body: dict[str, Any]) -> None:
    """Check meta_info.finish_reason against the recording of its type, then null it."""
    meta = body.get("meta_info") or (body.get("choices") or [{}])[0].get("meta_info")
    if meta is not None:
        finish, meta["finish_reason"] = meta["finish_reason"], None
        assert differences(shape(RECORDED_FINISH[finish["type"]]), shape(finish)) == []


# meta_info.finish_reason of each type, as recorded: the chat stopped, /generate ran to length.
RECORDED_FINISH = {
    meta["finish_reason"]["type"]: meta["finish_reason"]
    for meta in (
        live("chat_completion_return_meta_info_and_spec_details.json")["choices"][0]["meta_info"],
        live("generate.json")["meta_info"],
    )
}


def test_server_info_after_requests_has_the_recorded_shape(sim):
    status, answer = call(sim, "/server_info")
    assert status == 200
    found = differences(shape(live("server_info_after_requests.json")), shape(answer))
    # The recording's three short requests ran fewer verify steps than one decode log interval
    # (40), so SGLang had not yet published avg_spec_accept_length; the only key allowed extra.
    assert set(found) <= {"$.internal_states[0].avg_spec_accept_length: not in live"}


def test_simulated_flush_cache_body_is_the_recorded_text(sim):
    status, body = call(sim, "/flush_cache", REQUESTS["flush_cache.json"]["body"])
    assert (status, body) == (200, (LIVE / "flush_cache.json").read_text())


def _stream_text(url: str, body: dict[str, Any]) -> str:
    import urllib.request

    req = urllib.request.Request(
        url + "/v1/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(req, timeout=30) as resp:
        return str(resp.read().decode())


def test_simulated_stream_has_the_recorded_chunk_kinds_and_shapes(sim):
    recorded = stream_kinds((LIVE / "chat_completion_stream.txt").read_text())
    simulated = stream_kinds(_stream_text(sim, REQUESTS["chat_completion_stream.txt"]["body"]))
    assert [len(recorded[k]) > 0 for k in recorded] == [len(simulated[k]) > 0 for k in recorded]
    assert simulated["done"] == ["[DONE]"] and len(simulated["finish"]) == 1
    for kind in ("role", "content", "finish", "usage"):
        for chunk in simulated[kind]:
            assert differences(shape(recorded[kind][0]), shape(chunk)) == [], kind


def _label_names(text: str, sample: str) -> set[frozenset[str]]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        frozenset(s.labels)
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == sample
    }


@pytest.mark.parametrize(
    "sample",
    [
        MetricNames().generation_tokens,
        MetricNames().verify_calls,
        MetricNames().requests,
        MetricNames().running,
    ],
)
def test_metrics_the_pipeline_reads_have_the_recorded_names_and_labels(sim, sample):
    recorded = _label_names((LIVE / "metrics.txt").read_text(), sample)
    status, text = call(sim, "/metrics")
    assert status == 200 and recorded
    assert _label_names(text, sample) == recorded
