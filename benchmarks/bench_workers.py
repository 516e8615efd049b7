"""One client's run for ``client_throughput.py``, in its own process (so imports count).

``python -m benchmarks.bench_workers CLIENT URL FOLDER CONCURRENCY`` prints one JSON line:
``ok`` (answers received), ``request_s`` (first request to last graded answer) and
``cpu_request_s`` (the process's CPU, all threads, over that phase).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODEL = "tiny-sim"
MAX_TOKENS = 64


class Phase:
    """Wall and process CPU time of the request phase."""

    def __enter__(self) -> Phase:
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.t0
        self.cpu = time.process_time() - self.c0


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "prompts.jsonl").open(encoding="utf-8")]


def ours(url: str, folder: Path, concurrency: int) -> tuple[int, Phase]:
    """What a cell does for one eval: load, build prompts, run_eval (grade, write), summarize."""
    from evals.base import RequestTarget, make_eval
    from evals.eval_conf import ClientConf, DatasetConf, EvalConf, SamplingConf
    from evals.metrics import summarize
    from pipeline.measuring.evaluation import EvalRun, run_eval

    repeats = len(rows(folder)) // 200
    dataset = DatasetConf(source="file", path=str(folder / "gpqa.csv"))
    ev = make_eval("bench", EvalConf(kind="gpqa", dataset=dataset, repeats=repeats))
    out = folder / f"samples-{time.monotonic_ns()}.jsonl"
    client = ClientConf(concurrency=concurrency, progress=False)
    sampling = SamplingConf(max_tokens=MAX_TOKENS)
    with Phase() as phase:
        run = EvalRun(ev, RequestTarget(url, MODEL, client, sampling, {}), out)
        records, _ = run_eval(run, ev.prompts())
    summarize(records)
    out.unlink()
    return sum(r["error_kind"] is None for r in records), phase


def ours_client(url: str, folder: Path, concurrency: int) -> tuple[int, Phase]:
    """Our ChatClient alone: build each payload, send, parse; no grading, nothing on disk."""
    import asyncio

    from evals.client import ChatClient, RequestOutcome, build_chat_payload
    from evals.eval_conf import ClientConf, SamplingConf

    prompts = rows(folder)
    sampling, done = SamplingConf(max_tokens=MAX_TOKENS), []

    def payload(row: dict[str, Any]) -> dict[str, Any]:
        messages = [{"role": "user", "content": row["problem"]}]
        return build_chat_payload(messages, sampling, MODEL, {}, stream=False)

    def on_done(row: dict[str, Any], outcome: RequestOutcome) -> None:
        done.append(outcome.result is not None and bool(outcome.result.content))

    async def go() -> None:
        conf = ClientConf(concurrency=concurrency, progress=False)
        async with ChatClient(url, MODEL, conf) as client:
            await client.run(prompts, payload, on_done, "bench")

    with Phase() as phase:
        asyncio.run(go())
    return sum(done), phase


def bare(url: str, folder: Path, concurrency: int) -> tuple[int, Phase]:
    """Semaphore + gather over one aiohttp session; decode each body, nothing else."""
    import asyncio

    import aiohttp

    prompts = rows(folder)

    async def go() -> list[bool]:
        sem = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(row: dict[str, Any]) -> bool:
                payload = {
                    "model": MODEL,
                    "stream": False,
                    "temperature": 0.0,
                    "max_tokens": MAX_TOKENS,
                    "return_meta_info": True,
                    "return_spec_tokens_details": True,
                    "messages": [{"role": "user", "content": row["problem"]}],
                }
                async with sem, session.post(url + "/v1/chat/completions", json=payload) as r:
                    body = json.loads(await r.read())
                    return r.status == 200 and bool(body["choices"][0]["message"]["content"])

            return await asyncio.gather(*(one(row) for row in prompts))

    with Phase() as phase:
        ok = asyncio.run(go())
    return sum(ok), phase


LM_TASK = """task: bench_gpqa
dataset_path: json
dataset_kwargs:
  data_files:
    test: {path}
test_split: test
output_type: generate_until
doc_to_text: "{{{{problem}}}}"
doc_to_target: "{{{{expected_answer}}}}"
generation_kwargs:
  until: []
  max_gen_toks: {max_tokens}
  do_sample: false
  temperature: 0.0
filter_list:
  - name: letter
    filter:
      - function: regex
        regex_pattern: "Answer: ([ABCD])"
      - function: take_first
metric_list:
  - metric: exact_match
"""


def lm_eval(url: str, folder: Path, concurrency: int) -> tuple[int, Phase]:
    """lm-eval's Python API, local-chat-completions, a task over the local JSONL."""
    import lm_eval as lm
    from lm_eval.models.api_models import TemplateAPI
    from lm_eval.tasks import TaskManager

    task_dir = folder / "lm_task"
    task_dir.mkdir(exist_ok=True)
    text = LM_TASK.format(path=folder / "prompts.jsonl", max_tokens=MAX_TOKENS)
    (task_dir / "bench_gpqa.yaml").write_text(text, encoding="utf-8")
    phase, answered = Phase(), []
    original = TemplateAPI.get_batched_requests

    async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        with phase:
            out = await original(self, *args, **kwargs)
        answered.extend(o for batch in out for o in batch if o)
        return out

    TemplateAPI.get_batched_requests = timed  # type: ignore[method-assign]
    model_args = {
        "model": MODEL,
        "base_url": url + "/v1/chat/completions",
        "num_concurrent": concurrency,
        "max_retries": 3,
        "tokenized_requests": False,
    }
    lm.simple_evaluate(
        model="local-chat-completions",
        model_args=model_args,
        tasks=["bench_gpqa"],
        apply_chat_template=True,
        task_manager=TaskManager(include_path=str(task_dir), include_defaults=False),
    )
    return len(answered), phase


def sgl_eval(url: str, folder: Path, concurrency: int) -> tuple[int, Phase]:
    """sgl-eval's own entry point (its CLI main, in-process): gpqa over our prompts."""
    import sgl_eval.runner as runner
    from sgl_eval import cli

    phase = Phase()
    original = runner._run_sample_score_phase
    scored: list[float] = []

    def timed(**kwargs: Any) -> None:
        with phase:
            original(**kwargs)
        scored.extend(s for v in kwargs["scores_by_ex"].values() for s in v if s is not None)

    runner._run_sample_score_phase = timed
    n = len(rows(folder))
    argv = [
        "run",
        "gpqa",
        "--base-url",
        url + "/v1",
        "--model",
        MODEL,
        "--num-threads",
        str(concurrency),
        "--num-examples",
        str(n),
        "--n-repeats",
        "1",
        "--max-tokens",
        str(MAX_TOKENS),
        "--temperature",
        "0",
        "--from-dataset",
        str(folder / "prompts.jsonl"),
        "--out-dir",
        str(folder / "sgl_out"),
    ]
    code = _main(cli.main, argv)
    if code not in (0, None):
        raise SystemExit(f"sgl-eval exited {code}")
    return len(scored), phase


def _main(entry: Callable[..., Any], argv: list[str]) -> Any:
    try:
        return entry(argv)
    except SystemExit as exc:
        return exc.code


WORKERS: dict[str, Callable[[str, Path, int], tuple[int, Phase]]] = {
    "ours-client": ours_client,
    "ours": ours,
    "bare": bare,
    "lm-eval": lm_eval,
    "sgl-eval": sgl_eval,
}


if __name__ == "__main__":
    client, url, folder, concurrency = sys.argv[1:5]
    ok, phase = WORKERS[client](url, Path(folder), int(concurrency))
    print(json.dumps({"ok": ok, "request_s": phase.wall, "cpu_request_s": phase.cpu}))
