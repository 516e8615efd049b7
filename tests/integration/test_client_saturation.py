"""The client at the concurrency /server_info gives keeps the simulated server's batch full.

The simulated server reports ``sglang:num_running_reqs`` (every request in flight) and, with
speculative decoding, SGLang's running limit of 48 in ``/server_info``.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.server_info import ServerInfo
from evals.client import ChatClient, RequestOutcome, build_chat_payload
from evals.eval_conf import ClientConf, SamplingConf
from pipeline.measuring.concurrency import client_concurrency
from pipeline.serving.server import HealthPolicy, free_port, managed_server

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


SIM_ARGS = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
            "--enable-metrics"]  # fmt: skip


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    conf = tmp_path / "sim.json"
    conf.write_text(
        # 0.2 s a request: on a loaded 2-core machine the client's and the server's own time per
        # request (~1 ms each) stays small beside it (at 0.05 s, 48 in flight turned over 960
        # times a second and the batch-full share fell to 43-49% in about one run in four)
        json.dumps({"latency_s": 0.2, "mean_completion_tokens": 8, "startup_delay_s": 0.0})
    )
    port = free_port()
    argv = [sys.executable, "-m", "pipeline.simserver", "--model-path", "m", "--port", str(port),
            *SIM_ARGS, "--sim-config", str(conf)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    url = f"http://127.0.0.1:{port}"
    # The project's own lifecycle: health wait with liveness, group teardown.
    with managed_server(argv, env, url, tmp_path / "server.log", HealthPolicy(30, 0.05, 0.5), 10):
        yield url


def running(conn: http.client.HTTPConnection) -> int:
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    line = next(x for x in text.splitlines() if x.startswith("sglang:num_running_reqs{"))
    return int(float(line.rsplit(" ", 1)[1]))


def run_and_sample(url: str, concurrency: int, n: int) -> list[int]:
    samples: list[int] = []
    stop = threading.Event()

    def poll() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1]), timeout=5)
        while not stop.is_set():
            samples.append(running(conn))
            time.sleep(0.005)

    payload = build_chat_payload(
        [{"role": "user", "content": "q"}], SamplingConf(), "m", {}, stream=False
    )
    done: list[RequestOutcome] = []

    async def go() -> None:
        conf = ClientConf(concurrency=concurrency, progress=False)
        async with ChatClient(url, "m", conf) as client:
            await client.run(range(n), lambda i: payload, lambda i, o: done.append(o), "t")

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        asyncio.run(go())
    finally:
        stop.set()
        poller.join()
    assert len(done) == n and all(o.error_kind is None for o in done)
    return samples


def test_running_count_stays_at_the_server_limit(server: str) -> None:
    with urllib.request.urlopen(server + "/server_info", timeout=5) as r:
        limit = client_concurrency(ServerInfo.parse(json.loads(r.read())), configured=64)
    assert limit == 48
    samples = run_and_sample(server, limit, 20 * limit)
    middle = samples[len(samples) // 5 : -len(samples) // 5]
    assert max(samples) == limit  # never more than the server runs: nothing would queue
    near = sum(s >= limit - 2 for s in middle) / len(middle)
    assert near >= 0.5, f"batch not kept full: {near:.0%} of samples within 2 of {limit}"


def test_fixed_default_concurrency_overfills_the_batch(server: str) -> None:
    samples = run_and_sample(server, 64, 640)
    assert max(samples) > 48  # what real SGLang would hold in its queue
