"""Saturation: does the server's running batch stay full through an eval?

Part A, the simulated SGLang server (constant 250 ms per request, speculation on, so
``/server_info`` reports SGLang's default running limit of 48): our client at the concurrency
``pipeline.measuring.concurrency.client_concurrency`` derives from ``/server_info``, and at
fixed 32 and 64,
while a thread samples ``sglang:num_running_reqs`` from ``/metrics`` every 5 ms.

Part B, the tail: a model of SGLang's scheduler on loopback (at most 48 running, the rest
queued, each request running for its completion length x a fixed step), questions whose lengths
are heavy-tailed (a few long reasoning answers) and vary from repeat to repeat. Repeat 0 runs
first; repeats 1-3 then run in file order, or longest first by repeat 0's lengths
(``pipeline.measuring.concurrency.longest_first``). The scheduler logs every change of its
running count.

Usage: ``python -m benchmarks.saturation [--write]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import http.client
import itertools
import random
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from aiohttp import web

from backends.server_info import LATEST, ServerInfo
from benchmarks.client_throughput import publish
from benchmarks.simserver_fixture import ROOT, SimServer, write_gpqa_workload
from evals.base import EvalPrompt, make_eval
from evals.client import ChatClient, RequestOutcome, build_chat_payload
from evals.eval_conf import ClientConf, DatasetConf, EvalConf, SamplingConf
from evals.metrics import sample_record
from pipeline.measuring.concurrency import client_concurrency, longest_first

OUT = ROOT / "benchmarks" / "results" / "saturation.md"
Series = list[tuple[float, int]]  # (seconds, running requests) at each change or sample


def utilisation(series: Series, limit: int) -> dict[str, float]:
    """Time-weighted figures of a running-count series over its span."""
    span = series[-1][0] - series[0][0]
    at = over = area = 0.0
    last_full = series[0][0]
    for (t0, n), (t1, _) in itertools.pairwise(series):
        area += n * (t1 - t0)
        at += (t1 - t0) if n >= limit else 0.0
        over += (t1 - t0) if n > limit else 0.0
        last_full = t1 if n >= limit else last_full
    return {
        "span_s": span,
        "mean_running": area / span,
        "at_limit": at / span,
        "over_limit": over / span,
        "tail_s": series[-1][0] - last_full,
    }


def run_client(url: str, prompts: list[EvalPrompt], concurrency: int) -> list[dict[str, Any]]:
    """Send the prompts with our client; return their sample records."""
    sampling, records = SamplingConf(max_tokens=64), []

    def on_done(p: EvalPrompt, outcome: RequestOutcome) -> None:
        records.append(sample_record(p, outcome, None, False))

    async def go() -> None:
        conf = ClientConf(concurrency=concurrency, progress=False)
        async with ChatClient(url, "tiny-sim", conf) as client:
            await client.run(
                prompts,
                lambda p: build_chat_payload(p.messages, sampling, "tiny-sim", {}, False),
                on_done,
                "bench",
            )

    asyncio.run(go())
    return records


def poll_running(url: str, stop: threading.Event, out: Series) -> None:
    """Sample ``sglang:num_running_reqs`` every 5 ms until ``stop``."""
    where = urlparse(url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=5)
    while not stop.is_set():
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        line = next(x for x in text.splitlines() if x.startswith(LATEST.metrics.running + "{"))
        out.append((time.perf_counter(), int(float(line.rsplit(" ", 1)[1]))))
        time.sleep(0.005)


def part_a(folder: Path) -> list[str]:
    write_gpqa_workload(folder, questions=200, repeats=10)
    ev = make_eval(
        "bench",
        EvalConf(
            kind="gpqa",
            repeats=10,
            dataset=DatasetConf(source="file", path=str(folder / "gpqa.csv")),
        ),
    )
    prompts = ev.prompts()
    lines = [
        "| client concurrency | eval s | mean running | time at the limit | time over the "
        "limit (queued in SGLang) | tail below the limit |",
        "|---|---|---|---|---|---|",
    ]
    with SimServer(folder, latency_s=0.25) as url:
        info = ServerInfo.parse(_get_json(url + "/server_info"))
        limit = client_concurrency(info, 64)
        for label, conc in (
            (f"{limit} from /server_info", limit),
            ("32 fixed", 32),
            ("64 fixed (the old default; the simulation runs all 64, SGLang would run 48)", 64),
        ):
            series: Series = []
            stop = threading.Event()
            poller = threading.Thread(target=poll_running, args=(url, stop, series))
            poller.start()
            started = time.perf_counter()
            run_client(url, prompts, conc)
            ended = time.perf_counter()
            stop.set()
            poller.join()
            inside = [(t, n) for t, n in series if started <= t <= ended]
            u = utilisation([(started, 0), *inside, (ended, 0)], limit)
            lines.append(
                f"| {label} | {ended - started:.2f} | {u['mean_running']:.1f} of {limit} "
                f"| {u['at_limit']:.1%} | {u['over_limit']:.1%} | {u['tail_s']:.2f} s |"
            )
    return lines


def _get_json(url: str) -> dict[str, Any]:
    import json
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        body: dict[str, Any] = json.loads(r.read())
    return body


@dataclasses.dataclass
class Scheduler:
    """SGLang's scheduler reduced to what decides the batch: a running limit and a FIFO queue."""

    limit: int
    step_s: float  # seconds per generated token of one request
    mean_tokens: dict[int, float]  # per question number
    series: Series = dataclasses.field(default_factory=list)
    running: int = 0

    def tokens(self, content: str) -> int:
        # Varies from repeat to repeat (the prompt's option order differs): +-30% around the mean.
        q = int(content.split("Question ", 1)[1].split(":", 1)[0])
        return max(1, round(self.mean_tokens[q] * random.Random(content).lognormvariate(0, 0.3)))

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        tokens = self.tokens(body["messages"][-1]["content"])
        async with self._slots:
            self.running += 1
            self.series.append((time.perf_counter(), self.running))
            try:
                await asyncio.sleep(tokens * self.step_s)
            finally:
                self.running -= 1
                self.series.append((time.perf_counter(), self.running))
        choice = {"index": 0, "finish_reason": "stop", "message": {"content": "Answer: A"}}
        usage = {"prompt_tokens": 100, "completion_tokens": tokens}
        return web.json_response({"choices": [choice], "usage": usage})

    def serve(self, ready: threading.Event, box: list[Any]) -> None:
        """Run on loopback in this thread until ``box[1]`` (the loop's stop event) is set."""

        async def main() -> None:
            self._slots = asyncio.Semaphore(self.limit)
            app = web.Application()
            app.router.add_post("/v1/chat/completions", self.handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            stop = asyncio.Event()
            box[:] = [site._server.sockets[0].getsockname()[1], stop, asyncio.get_running_loop()]  # type: ignore[union-attr]
            ready.set()
            await stop.wait()
            await runner.cleanup()

        asyncio.run(main())


def question_lengths(n: int, seed: int = 7) -> dict[int, float]:
    """Median 800 tokens, spread x/÷1.6; one question in 20 a long reasoning answer (x5)."""
    rng = random.Random(seed)
    return {q: rng.lognormvariate(6.68, 0.5) * (5 if rng.random() < 0.05 else 1) for q in range(n)}


def part_b(folder: Path, limit: int = 48, repeats: int = 4) -> list[str]:
    write_gpqa_workload(folder, questions=200, repeats=repeats)
    conf = EvalConf(
        kind="gpqa",
        repeats=repeats,
        dataset=DatasetConf(source="file", path=str(folder / "gpqa.csv")),
    )
    prompts = make_eval("bench", conf).prompts()
    sched = Scheduler(limit, step_s=0.00025, mean_tokens=question_lengths(200))
    ready, box = threading.Event(), []
    thread = threading.Thread(target=sched.serve, args=(ready, box), daemon=True)
    thread.start()
    ready.wait(10)
    url = f"http://127.0.0.1:{box[0]}"
    first = [p for p in prompts if p.repeat == 0]
    earlier = run_client(url, first, limit)  # repeat 0: lengths become known
    rest = [p for p in prompts if p.repeat > 0]
    work = sum(sched.tokens(p.messages[-1]["content"]) for p in rest) * sched.step_s
    longest = max(sched.tokens(p.messages[-1]["content"]) for p in rest) * sched.step_s
    lines = [
        f"Repeats 1-{repeats - 1}: {len(rest)} requests, {work:.1f} s of request time in "
        f"all, longest request {longest:.2f} s; lower bound on the eval's time "
        f"max(work / {limit}, longest) = {max(work / limit, longest):.2f} s.",
        "",
        "| order | eval s | mean running | time at the limit | tail below the limit |",
        "|---|---|---|---|---|",
    ]
    for label, order in (
        ("file order (repeat-major)", rest),
        ("longest first, by repeat 0's lengths", longest_first(rest, earlier)),
    ):
        sched.series.clear()
        started = time.perf_counter()
        run_client(url, order, limit)
        ended = time.perf_counter()
        u = utilisation([(started, 0), *sched.series, (ended, 0)], limit)
        lines.append(
            f"| {label} | {ended - started:.2f} | {u['mean_running']:.1f} of {limit} | "
            f"{u['at_limit']:.1%} | {u['tail_s']:.2f} s |"
        )
    box[2].call_soon_threadsafe(box[1].set)
    thread.join(10)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"also write {OUT}")
    opts = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="saturation-") as tmp:
        a = part_a(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="saturation-") as tmp:
        b = part_b(Path(tmp))
    text = [
        "# Saturation: the server's running batch through an eval",
        "",
        "## A. Simulated SGLang server, 2,000 requests, 250 ms each",
        "",
        "`sglang:num_running_reqs` sampled every 5 ms from `/metrics`; the limit is "
        "`/server_info` `internal_states[0].effective_max_running_requests_per_dp` x DP ranks "
        "(48: SGLang's default under speculative decoding). The simulated server runs every "
        "request it gets, so 'over the limit' is what real SGLang would hold in its queue.",
        "",
        *a,
        "",
        "Between a response and the client's next request a slot stands empty for the round "
        "trip (a few ms on these two shared cores): with 250 ms requests that is the gap below "
        "the limit; with real generation (seconds per request) it is smaller still. A fixed 64 "
        "keeps the batch full only by holding 16 requests in SGLang's queue, where SGLang's "
        "scheduler, not the client, picks what runs next (a longest-first order is lost) and "
        "each queued request's latency includes the wait.",
        "",
        "## B. The tail: running limit 48, heavy-tailed request lengths",
        "",
        *b,
        "",
    ]
    publish(text, OUT, opts.write, started)


if __name__ == "__main__":
    main()
