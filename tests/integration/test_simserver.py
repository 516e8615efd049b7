"""The simulated SGLang server as a real subprocess: lifecycle, shapes, accounting, faults."""

from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.helpers.live_keys import (
    CHAT_KEYS,
    CHOICE_KEYS,
    FLUSH_BODY,
    GENERATE_KEYS,
    INTERNAL_STATE_EXTRA_KEYS,
    LIVE,
    META_KEYS_0_5_19,
    META_KEYS_0_5_23,
    MODEL_CARD_KEYS,
    MODEL_INFO_KEYS,
    SPEC_ALIASES,
    SPEC_DETAILS_KEYS,
)
from tests.helpers.sim import SPEC_ARGS, Sim, call, chat, get, mcq_prompt, sse, status

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Sim]]:
    """All servers of this file, started at once so their start-ups overlap."""
    tmp = tmp_path_factory.mktemp("simserver")
    env = {"SGLANG_EXPOSE_OWN_ENV_VARS": "1",
           "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": "0.5",
           "SGLANG_HEALTH_CHECK_TIMEOUT": "0.3"}  # fmt: skip
    effect = {"match": {"SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR": 0.5},
              "accuracy_delta": -0.1, "accept_length_delta": -0.2}  # fmt: skip
    specs: dict[str, tuple[list[str], dict[str, Any]]] = {
        "main": ([*SPEC_ARGS, "--enable-metrics"], {"effects": [effect]}),
        "v23": ([*SPEC_ARGS, "--enable-metrics"], {"sglang_version": "0.5.23"}),
        "plain": ([], {}),
        "slow": (SPEC_ARGS, {"latency_s": 0.6}),
        "auth": (["--api-key", "sekrit"], {}),
        "admin": (["--api-key", "sekrit", "--admin-api-key", "boss"], {}),
        "start_delay": ([], {"startup_delay_s": 1.0}),
        "never_healthy": ([], {"faults": {"never_healthy": True}}),
        "crash_at_start": ([], {"faults": {"crash_at_start": "AssertionError: FA3 needs SM90"}}),
        "crash_after": (SPEC_ARGS, {"faults": {"crash_after_requests": 2}}),
        "hang_after": ([], {"faults": {"hang_after_requests": 1}}),
        "http_5xx": ([], {"faults": {"http_5xx_rate": 1.0}}),
        "malformed": ([], {"faults": {"malformed_json_rate": 1.0}}),
        "reset": ([], {"faults": {"connection_reset_rate": 1.0}}),
        "truncation": (SPEC_ARGS, {"faults": {"truncation_rate": 1.0}}),
        "missing_spec": (SPEC_ARGS, {"faults": {"missing_spec_keys": True}}),
        "sigterm": (SPEC_ARGS, {}),
    }
    sims = {name: Sim(tmp / name, a, c, env) for name, (a, c) in specs.items()}
    yield sims
    for sim in sims.values():
        sim.kill_group()


def test_health_is_503_until_ready_then_200(servers: dict[str, Sim]) -> None:
    sim = servers["start_delay"]
    seen: list[int | None] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (not seen or seen[-1] != 200):
        seen.append(status(sim.url + "/health"))
        time.sleep(0.05)
    codes = [c for c in seen if c is not None]
    assert codes[0] == 503 and codes[-1] == 200 and codes.count(503) >= 5, seen
    log = sim.log()
    assert log.index(f"Uvicorn running on http://127.0.0.1:{sim.port}") < log.index(
        "The server is fired up and ready to roll!"
    )


def test_scheduler_child_is_named_and_in_the_group(servers: dict[str, Sim]) -> None:
    sim = servers["plain"].wait_ready()
    children = psutil.Process(sim.proc.pid).children()
    assert [c.cmdline()[0] for c in children] == ["sglang::scheduler_TP0"]
    assert os.getpgid(children[0].pid) == sim.proc.pid


def test_chat_and_generate_keys_are_sglang_0_5_19s(servers: dict[str, Sim]) -> None:
    url = servers["main"].wait_ready().url
    body = chat(url, mcq_prompt(1), return_meta_info=True, return_spec_tokens_details=True)
    choice = body["choices"][0]
    assert set(body) == CHAT_KEYS and set(choice) == CHOICE_KEYS
    assert set(choice["meta_info"]) == META_KEYS_0_5_19
    assert set(body["sglext"]["spec_tokens_details"]) == SPEC_DETAILS_KEYS
    code, raw = call(url + "/generate", {"text": mcq_prompt(2), "sampling_params": {}})
    gen = json.loads(raw)
    assert code == 200 and set(gen) == GENERATE_KEYS and set(gen["meta_info"]) == META_KEYS_0_5_19
    assert gen["meta_info"]["completion_tokens"] <= 128  # SGLang's default max_new_tokens
    two = chat(url, mcq_prompt(3), n=2, return_spec_tokens_details=True)
    assert [d["spec_verify_ct"] > 0 for d in two["sglext"]["spec_tokens_details"]] == [True] * 2


def test_info_endpoints_keys_and_resolution(servers: dict[str, Sim]) -> None:
    url = servers["main"].wait_ready().url
    assert set(get(url + "/v1/models")["data"][0]) == MODEL_CARD_KEYS
    assert get(url + "/v1/models")["data"][0]["id"] == "tiny-sim"
    assert set(get(url + "/model_info")) == MODEL_INFO_KEYS == set(get(url + "/get_model_info"))
    # avg_spec_accept_length appears once a decode log interval (40 verify steps) has folded, as
    # in SGLang: how many this server saw depends on which tests ran on it before (xdist's order).
    info: dict[str, Any] = {}
    for i in range(40):
        chat(url, mcq_prompt(i % 6))
        info = get(url + "/server_info")
        if "avg_spec_accept_length" in info["internal_states"][0]:
            break
    assert set(info["internal_states"][0]) - set(info) | {"startup_time"} == (
        INTERNAL_STATE_EXTRA_KEYS
    )
    if LIVE.is_dir():
        live = json.loads((LIVE / "server_info_after_requests.json").read_text())
        assert set(info) == set(live)
        assert set(info["internal_states"][0]) == set(live["internal_states"][0])
    assert info["speculative_algorithm"] == "EAGLE" and info["max_running_requests"] == 48
    assert info["attention_backend"] == "fa3" and info["version"] == "0.5.19"
    env_vars = info["internal_states"][0]["env_vars"]
    assert env_vars["SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"] == "0.5"
    assert "Max running requests is reset to 48" in servers["main"].log()


def test_the_accept_length_appears_only_once_a_log_interval_has_passed(
    servers: dict[str, Sim],
) -> None:
    # Live 0.5.19 (server_info_before_requests.json): no avg_spec_accept_length before requests;
    # SGLang folds its totals in at the end of each 40-step decode log interval, so a first
    # short request leaves the key absent too (never a figure of unfinished verify steps).
    sim = servers["main"].wait_ready()
    assert call(sim.url + "/flush_cache", {})[0] == 200
    short = chat(sim.url, mcq_prompt(0), max_tokens=4, return_meta_info=True)
    assert 0 < short["choices"][0]["meta_info"]["spec_verify_ct"] < 40
    assert "avg_spec_accept_length" not in get(sim.url + "/server_info")["internal_states"][0]
    steps = short["choices"][0]["meta_info"]["spec_verify_ct"]
    while steps < 40:
        reply = chat(sim.url, mcq_prompt(steps), return_meta_info=True)
        steps += reply["choices"][0]["meta_info"]["spec_verify_ct"]
    assert get(sim.url + "/server_info")["internal_states"][0]["avg_spec_accept_length"] > 1


def test_server_totals_and_metrics_match_the_ledger(servers: dict[str, Sim]) -> None:
    sim = servers["main"].wait_ready()
    code, raw = call(sim.url + "/flush_cache", {})
    assert (code, raw.decode()) == (200, FLUSH_BODY)
    assert "avg_spec_accept_length" not in get(sim.url + "/server_info")["internal_states"][0]
    before, metrics_before = len(sim.ledger()), counters(sim.url)
    for i in range(6):
        chat(sim.url, mcq_prompt(i), return_meta_info=True)
    rows = sim.ledger()[before:]
    assert len(rows) == 6  # the effect on the skip-softmax variable applies:
    assert [r["accuracy"] for r in rows] == pytest.approx([0.6] * 6)
    assert [r["accept_length"] for r in rows] == pytest.approx([2.4] * 6)
    verify = sum(r["verify_ct"] for r in rows)
    # As SGLang, the server folds its totals in once per decode log interval (40 verify steps):
    # the requests after the last full interval are not in its figure yet.
    folded, open_steps = [0, 0], [0, 0]
    for r in rows:
        open_steps = [open_steps[0] + r["verify_ct"],
                      open_steps[1] + r["verify_ct"] + r["num_correct_drafts"]]  # fmt: skip
        if open_steps[0] >= 40:
            folded, open_steps = [folded[0] + open_steps[0], folded[1] + open_steps[1]], [0, 0]
    assert 0 < folded[0] <= verify
    state = get(sim.url + "/server_info")["internal_states"][0]
    assert state["avg_spec_accept_length"] == pytest.approx(folded[1] / folded[0])
    after = counters(sim.url)

    # A counter no request has moved yet is not exported (a fresh server: this test alone), so
    # it starts from 0, as the pipeline's deltas read it.
    def moved(name: str) -> float:
        return after[name] - metrics_before.get(name, 0.0)

    assert moved("spec_verify_calls_total") == verify
    assert moved("generation_tokens_total") == sum(r["completion_tokens"] for r in rows)
    assert moved("num_requests_total") == 6


def counters(url: str) -> dict[str, float]:
    code, raw = call(url + "/metrics")
    assert code == 200
    out: dict[str, float] = {}
    for line in raw.decode().splitlines():
        if line.startswith("sglang:") and "_total{" in line:
            name = line.split("{")[0].removeprefix("sglang:")
            out[name] = out.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
    assert 'model_name="tiny-sim"' in raw.decode() and "sglang:spec_accept_length{" in raw.decode()
    return out


def test_answers_match_the_key_and_the_ledger(servers: dict[str, Sim]) -> None:
    sim = servers["main"].wait_ready()
    before = len(sim.ledger())
    texts = [chat(sim.url, mcq_prompt(i))["choices"][0]["message"]["content"] for i in range(6)]
    for text, row in zip(texts, sim.ledger()[before:], strict=True):
        letter = text.splitlines()[-1].removeprefix("Answer: ")
        assert row["answer"] == letter and row["kind"] == "mcq"
        assert row["correct"] == (letter == "D")  # "number i" is always option D
    numeric = chat(sim.url, "Solve.\nHow many legs do 3 spiders have?")["choices"][0]
    assert numeric["message"]["content"].splitlines()[-1].startswith("The final answer is ")


def test_stream_equals_the_non_streamed_answer(servers: dict[str, Sim]) -> None:
    url = servers["main"].wait_ready().url + "/v1/chat/completions"
    base = {"model": "m", "messages": [{"role": "user", "content": mcq_prompt(4)}]}
    whole = json.loads(call(url, base)[1])["choices"][0]["message"]["content"]
    chunks = sse(url, {**base, "stream": True, "return_spec_tokens_details": True,
                       "stream_options": {"include_usage": True}})  # fmt: skip
    content = "".join(c["choices"][0]["delta"]["content"] for c in chunks if c["choices"])
    assert content == whole
    assert [c["choices"] for c in chunks[-2:]] == [[], []]
    assert set(chunks[-2]["sglext"]["spec_tokens_details"]) == SPEC_DETAILS_KEYS
    assert chunks[-1]["usage"]["completion_tokens"] == len(whole.split())
    code, raw = call(url, {**base, "stream": True, "return_meta_info": True})
    assert code == 400 and "return_meta_info is not supported with streaming" in raw.decode()


def test_0_5_23_flavour_drops_the_aliases(servers: dict[str, Sim]) -> None:
    url = servers["v23"].wait_ready().url
    meta = chat(url, mcq_prompt(1), return_meta_info=True)["choices"][0]["meta_info"]
    assert set(meta) == META_KEYS_0_5_23 and not SPEC_ALIASES & set(meta)
    gen = json.loads(call(url + "/generate", {"text": "hello"})[1])
    assert not SPEC_ALIASES & set(gen["meta_info"])
    info = get(url + "/server_info")
    assert info["version"] == "0.5.23" and info["frontend"] == "python"
    # Live 0.5.23's launch_command is the flags alone (tests/data/live-sglang-0.5.23).
    assert info["launch_command"].startswith("--") and "--model-path" in info["launch_command"]


def test_without_metrics_flag_there_is_no_metrics_route(servers: dict[str, Sim]) -> None:
    url = servers["plain"].wait_ready().url
    assert status(url + "/metrics") == 404
    meta = chat(url, mcq_prompt(0), return_meta_info=True)["choices"][0]["meta_info"]
    assert not any(k.startswith("spec_") for k in meta) and "request_received_ts" not in meta


def test_api_key_guards_everything_but_health(servers: dict[str, Sim]) -> None:
    url = servers["auth"].wait_ready().url
    assert status(url + "/health") == 200
    code, raw = call(url + "/v1/models")
    assert (code, json.loads(raw)) == (401, {"error": "Unauthorized"})
    assert call(url + "/v1/models", headers={"Authorization": "Bearer sekrit"})[0] == 200
    assert call(url + "/v1/chat/completions", {"messages": []})[0] == 401


def test_admin_key_alone_opens_flush_cache(servers: dict[str, Sim]) -> None:
    # SGLang's admin-optional endpoints: with --admin-api-key only that key opens them.
    url = servers["admin"].wait_ready().url
    api, admin = ({"Authorization": f"Bearer {k}"} for k in ("sekrit", "boss"))
    assert call(url + "/flush_cache", {}, headers=api)[0] == 401
    assert call(url + "/flush_cache", {}, headers=admin)[0] == 200
    assert call(url + "/v1/models", headers=admin)[0] == 401  # the rest takes the API key
    assert call(url + "/v1/models", headers=api)[0] == 200
    assert status(url + "/health") == 200


def test_flush_fails_while_busy_and_latency_applies(servers: dict[str, Sim]) -> None:
    url = servers["slow"].wait_ready().url
    started = time.monotonic()
    worker = threading.Thread(target=chat, args=(url, mcq_prompt(0)))
    worker.start()
    time.sleep(0.2)
    code, raw = call(url + "/flush_cache", {})
    assert (code, raw.decode()) == (400, "Flush cache failed.\n")
    worker.join()
    assert time.monotonic() - started >= 0.6
    assert call(url + "/flush_cache")[0] == 200


def test_reject_message_exits_before_binding(tmp_path: Path) -> None:
    sim = Sim(tmp_path, [], {"faults": {"reject_message": "trtllm_mha backend only supports "
                                        "topk = 1 for speculative decoding."}}, {})  # fmt: skip
    assert sim.proc.wait(timeout=20) == 1
    log = sim.log()
    assert log.rstrip().endswith(
        "ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding."
    )
    assert "Traceback (most recent call last)" in log and "Uvicorn running" not in log


def test_bad_argv_exits_like_argparse(tmp_path: Path) -> None:
    sim = Sim(tmp_path, ["--kv-cache-dtype", "fp9"], {}, {})
    assert sim.proc.wait(timeout=20) == 2 and "invalid choice: 'fp9'" in sim.log()


def test_crash_at_start(servers: dict[str, Sim]) -> None:
    sim = servers["crash_at_start"]
    assert sim.proc.wait(timeout=20) != 0
    log = sim.log()
    assert log.index("Uvicorn running") < log.index("Scheduler hit an exception: Traceback")
    assert "AssertionError: FA3 needs SM90" in log
    assert "Received sigquit from a child process. It usually means the child failed." in log
    assert "fired up" not in log


def test_never_healthy(servers: dict[str, Sim]) -> None:
    sim = servers["never_healthy"]
    # Wait for the listener (16 servers start at once), then watch it for well past the 0.2 s
    # start-up delay after which a healthy server would answer 200.
    first = wait_for_answer(sim.url + "/health_generate")
    codes = [first]
    watch_until = time.monotonic() + 1.0
    while time.monotonic() < watch_until:
        codes.append(status(sim.url + "/health_generate"))
        time.sleep(0.05)
    assert set(codes) == {503} and sim.proc.poll() is None, codes
    assert "fired up" not in sim.log()


def wait_for_answer(url: str, timeout: float = 20.0) -> int:
    """The first HTTP status ``url`` answers with (None while nothing listens)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = status(url)
        if code is not None:
            return code
        time.sleep(0.02)
    raise AssertionError(f"{url} did not answer in {timeout} s")


def test_crash_after_requests_takes_the_process_down(servers: dict[str, Sim]) -> None:
    sim = servers["crash_after"].wait_ready()
    child = psutil.Process(sim.proc.pid).children()[0]
    for i in range(2):
        chat(sim.url, mcq_prompt(i))
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        chat(sim.url, mcq_prompt(2))
    assert sim.proc.wait(timeout=10) == 1
    assert "Scheduler hit an exception" in sim.log()
    assert [r["fault"] for r in sim.ledger()] == [None, None, "crash_after_requests"]
    assert child.is_running()  # left for the process-group teardown, as with SGLang


def test_hang_after_requests(servers: dict[str, Sim]) -> None:
    sim = servers["hang_after"].wait_ready()
    chat(sim.url, mcq_prompt(0))
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        call(sim.url + "/v1/chat/completions",
             {"messages": [{"role": "user", "content": "hi"}]}, timeout=0.5)  # fmt: skip
    assert status(sim.url + "/health_generate") == 503  # after SGLANG_HEALTH_CHECK_TIMEOUT


@pytest.mark.parametrize("name", ["http_5xx", "malformed", "reset"])
def test_rate_faults(servers: dict[str, Sim], name: str) -> None:
    sim = servers[name].wait_ready()
    body = {"messages": [{"role": "user", "content": mcq_prompt(0)}]}
    if name == "reset":
        with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
            call(sim.url + "/v1/chat/completions", body)
    else:
        code, raw = call(sim.url + "/v1/chat/completions", body)
        assert code == (500 if name == "http_5xx" else 200)
        if name == "malformed":
            with pytest.raises(json.JSONDecodeError):
                json.loads(raw)
    fault = {"http_5xx": "http_5xx", "malformed": "malformed_json", "reset": "connection_reset"}
    assert sim.ledger()[-1]["fault"] == fault[name]


def test_truncation_and_missing_spec_keys(servers: dict[str, Sim]) -> None:
    full = chat(servers["main"].wait_ready().url, mcq_prompt(5))["usage"]["completion_tokens"]
    cut = chat(servers["truncation"].wait_ready().url, mcq_prompt(5), return_meta_info=True)
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"]["completion_tokens"] == full // 2
    bare = chat(servers["missing_spec"].wait_ready().url, mcq_prompt(5), return_meta_info=True,
                return_spec_tokens_details=True)  # fmt: skip
    assert "sglext" not in bare
    assert not any(k.startswith("spec_") for k in bare["choices"][0]["meta_info"])


def test_sigterm_drains_and_exits_zero(servers: dict[str, Sim]) -> None:
    sim = servers["sigterm"].wait_ready()
    child = psutil.Process(sim.proc.pid).children()[0]
    chat(sim.url, mcq_prompt(0))
    sim.proc.send_signal(signal.SIGTERM)
    assert sim.proc.wait(timeout=10) == 0
    assert (
        "SIGTERM received." in sim.log() and "Draining requests and shutting down..." in sim.log()
    )
    child.wait(timeout=5)


def test_generate_stream_and_batch(servers: dict[str, Sim]) -> None:
    url = servers["main"].wait_ready().url + "/generate"
    body = {"text": mcq_prompt(2), "sampling_params": {"max_new_tokens": 40}}
    whole = json.loads(call(url, body)[1])
    chunks = sse(url, {**body, "stream": True})
    assert [c["text"] for c in chunks][-1] == whole["text"]
    assert all(whole["text"].startswith(c["text"]) for c in chunks)
    assert (
        "spec_verify_ct" in chunks[-1]["meta_info"]
        and "spec_verify_ct" not in chunks[0]["meta_info"]
    )
    batch = json.loads(call(url, {"text": ["one", "two words"]})[1])
    assert isinstance(batch, list) and [set(b) for b in batch] == [GENERATE_KEYS] * 2


def test_stream_faults_break_the_stream(servers: dict[str, Sim]) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
    code, raw = call(servers["malformed"].wait_ready().url + "/v1/chat/completions", body)
    events = [e.removeprefix(b"data: ") for e in raw.split(b"\n\n") if e]
    assert code == 200 and json.loads(events[0])["object"] == "chat.completion.chunk"
    with pytest.raises(json.JSONDecodeError):
        json.loads(events[1])
    assert b"[DONE]" not in raw
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        call(servers["reset"].wait_ready().url + "/v1/chat/completions", body)


def test_a_server_whose_port_a_neighbour_took_starts_again_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from tests.helpers import sim as sim_helper

    # The port free_port hands out is taken before the server binds it (a parallel worker did
    # that on CI): the helper must move to another port, not fail the test that started it.
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ports = iter([taken.getsockname()[1]])
    real = sim_helper.free_port
    monkeypatch.setattr(sim_helper, "free_port", lambda: next(ports, None) or real())
    try:
        server = Sim(tmp_path, [], {}, {}).wait_ready()
        try:
            assert server.rebinds == 1 and server.port != taken.getsockname()[1]
            assert status(server.url + "/health_generate") == 200
        finally:
            server.kill_group()
    finally:
        taken.close()
