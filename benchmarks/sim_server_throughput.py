"""Throughput of the simulated SGLang server: non-streaming chat requests per second.

Starts ``python -m pipeline.simserver`` as a subprocess (speculation on, a 200-question answer
key), sends 2,000 chat requests at concurrency 64 with a bare aiohttp client, three rounds, and
prints the median requests/s, plus the server's CPU time per request (which does not depend on
what else the machine is doing).

Usage: ``python -m benchmarks.sim_server_throughput [--requests N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_inputs(folder: Path, questions: int) -> tuple[Path, list[str]]:
    prompts, rows = [], []
    for i in range(questions):
        q = f"Question {i}: which option names the value {i}?"
        rows.append({"question": q, "answer": f"value {i}", "kind": "mcq"})
        options = "\n".join(f"{c}) value {i + k}" for k, c in enumerate("ABCD"))
        prompts.append(f"{q}\n{options}\nAnswer with the letter.")
    (folder / "key.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    conf = {
        "accuracy": 0.7,
        "accept_length": 2.6,
        "startup_delay_s": 0.2,
        "answer_key": str(folder / "key.jsonl"),
        "ledger": str(folder / "ledger.jsonl"),
    }
    path = folder / "sim.json"
    path.write_text(json.dumps(conf))
    return path, prompts


async def wait_healthy(session: aiohttp.ClientSession, url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            async with session.get(url + "/health_generate") as r:
                if r.status == 200:
                    return
        except aiohttp.ClientConnectionError:
            pass
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{url} not healthy after {timeout} s")


async def one_round(
    session: aiohttp.ClientSession, url: str, prompts: list[str], n: int, concurrency: int
) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        payload = {
            "model": "tiny-sim",
            "messages": [{"role": "user", "content": prompts[i % len(prompts)]}],
            "max_tokens": 2048,
        }
        async with sem, session.post(url + "/v1/chat/completions", json=payload) as r:
            body = await r.json()
            assert r.status == 200 and body["choices"][0]["message"]["content"], body

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return n / (time.perf_counter() - start)


async def measure(
    url: str, prompts: list[str], n: int, concurrency: int, rounds: int
) -> list[float]:
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await wait_healthy(session, url)
        return [await one_round(session, url, prompts, n, concurrency) for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        conf, prompts = write_inputs(Path(tmp), 200)
        port = free_port()
        argv = [sys.executable, "-m", "pipeline.simserver", "--model-path", "tiny-sim"]
        argv += ["--port", str(port), "--speculative-algorithm", "EAGLE"]
        argv += ["--speculative-num-steps", "3", "--speculative-eagle-topk", "1"]
        argv += ["--speculative-num-draft-tokens", "4", "--enable-metrics"]
        argv += ["--sim-config", str(conf)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        server = subprocess.Popen(
            argv, cwd=ROOT, env=env, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            url = f"http://127.0.0.1:{port}"
            rates = asyncio.run(measure(url, prompts, opts.requests, opts.concurrency, opts.rounds))
            cpu = psutil.Process(server.pid).cpu_times()
            cpu_ms = (cpu.user + cpu.system) * 1e3 / (opts.requests * opts.rounds)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    print("rounds (req/s):", ", ".join(f"{r:.0f}" for r in rates))
    print(f"median: {statistics.median(rates):.0f} req/s")
    print(f"server CPU: {cpu_ms:.3f} ms/request (start-up included)")


if __name__ == "__main__":
    main()
