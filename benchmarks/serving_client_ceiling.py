"""The serving phase's client ceiling: how many output tokens/s its client can take in at all.

The phase must measure the server, not its own client. Against the simulated server answering
as fast as it can (no latency table: no prefill or decode time) at the phase's highest default
concurrency (64), 1k-word prompts and 256 output tokens streamed 4 per chunk, the phase's own
sweep (``pipeline.measuring.speed.serving.run.run_sweep``) reports the output tokens/s client and
server reach together on this host, a lower bound on the client's ceiling, and this process's
CPU seconds per request (the client's own cost, whatever else runs). Then the same level against
the ``h200_8b_shape`` latency table, the figure the phase reports, for comparison. SGLang
streams a chunk per token by default (``--stream-interval 1``), 4 times the chunks per token
simulated here: the chunks/s column is what to hold against a live server's tokens/s.

Usage: ``python -m benchmarks.serving_client_ceiling [--requests 256] [--write]``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.simserver_fixture import MODEL, ROOT, SimServer
from evals.eval_conf import ClientConf
from pipeline.config.schema import ServingConf
from pipeline.measuring.speed.serving.plan import Level
from pipeline.measuring.speed.serving.run import ServingTarget, run_sweep

OUT = ROOT / "benchmarks" / "results" / "serving_client_ceiling.md"
CHUNK_TOKENS = 4  # the simulated server's tokens per streamed chunk


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def level_run(url: str, requests: int, concurrency: int) -> dict[str, Any]:
    """One level through the phase's own sweep; its point, wall and this process's CPU."""
    conf = ServingConf(enabled=True, concurrency=[concurrency], buckets=[1024],
                       output_tokens=256, requests=requests, warmup=2)  # fmt: skip
    target = ServingTarget(url, MODEL, ClientConf(progress=False), 1)
    cpu, start = _cpu(), time.perf_counter()
    points, _ = asyncio.run(run_sweep(target, conf, [Level(1024, concurrency, requests)]))
    wall, used = time.perf_counter() - start, _cpu() - cpu
    point = points[0]
    return {**point, "wall_s": wall, "cpu_ms_per_request": 1e3 * used / max(requests, 1)}


def measure(requests: int, concurrency: int) -> dict[str, dict[str, Any]]:
    """The level at full speed (the ceiling) and on the latency table (the phase's figure)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "key.jsonl").write_text("")
        for name, table in (("no latency table", None), ("h200_8b_shape", "h200_8b_shape")):
            sim = SimServer(folder, mean_tokens=256)
            if table:
                sim.conf["timing_model"] = table
            with sim as url:
                out[name] = level_run(url, requests, concurrency)
            got = out[name]
            print(f"{name}: {got['output_tokens_per_s']:.0f} output tokens/s, "
                  f"{got['cpu_ms_per_request']:.2f} client CPU ms/request", flush=True)  # fmt: skip
    return out


def render(runs: dict[str, dict[str, Any]], requests: int, concurrency: int) -> str:
    """The results page."""
    lines = [
        "# Serving phase: the client's ceiling",
        "",
        f"`python -m benchmarks.serving_client_ceiling --requests {requests}`, "
        f"{platform.node()}, {platform.processor() or platform.machine()}; concurrency "
        f"{concurrency}, 1024-word prompts, 256 output tokens, streamed.",
        "",
        "| server | output tokens/s | chunks/s | client CPU ms/request | CPU-bound tokens/s "
        "| TTFT p50 ms | ITL p50 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in runs.items():
        rate = r["output_tokens_per_s"]
        bound = 256 / (r["cpu_ms_per_request"] / 1e3)
        lines.append(
            f"| {name} | {rate:,.0f} | {rate / CHUNK_TOKENS:,.0f} | "
            f"{r['cpu_ms_per_request']:.2f} | {bound:,.0f} | {r['ttft_ms'].get('p50', 0):.1f} "
            f"| {r['itl_ms'].get('p50', 0):.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Measure and print (``--write``: also to benchmarks/results/)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--write", action="store_true")
    opts = parser.parse_args()
    text = render(measure(opts.requests, opts.concurrency), opts.requests, opts.concurrency)
    print(text)
    if opts.write:
        OUT.write_text(text)


if __name__ == "__main__":
    main()
