"""The simulated SGLang server as the benchmarks start it, and the GPQA-format workload they send.

Shared by ``client_throughput.py``, ``saturation.py`` and ``cell_overhead.py``.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[1]
MODEL = "tiny-sim"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_gpqa_workload(folder: Path, questions: int, repeats: int) -> None:
    """``gpqa.csv`` (our eval's input), ``prompts.jsonl`` (every rendered prompt, repeat-major,
    for the other clients) and ``key.jsonl`` (the simulated server's answer key)."""
    from evals.base import make_eval
    from evals.eval_conf import DatasetConf, EvalConf

    with (folder / "gpqa.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(
            [
                "Question",
                "Correct Answer",
                "Incorrect Answer 1",
                "Incorrect Answer 2",
                "Incorrect Answer 3",
            ]
        )
        for i in range(questions):
            q = f"Question {i}: which of these values equals {i} times three, give or take?"
            writer.writerow(
                [
                    q,
                    f"{3 * i} units",
                    f"{3 * i + 1} units",
                    f"{3 * i + 2} units",
                    f"{3 * i + 5} units",
                ]
            )
    conf = EvalConf(
        kind="gpqa",
        dataset=DatasetConf(source="file", path=str(folder / "gpqa.csv")),
        repeats=repeats,
    )
    ev = make_eval("bench", conf)
    with (folder / "prompts.jsonl").open("w", encoding="utf-8") as fh:
        for p in ev.prompts():
            row = {
                "id": f"{p.question_id}-{p.repeat}",
                "problem": p.messages[-1]["content"],
                "expected_answer": p.answer,
            }
            fh.write(json.dumps(row) + "\n")
    key = "".join(json.dumps(e) + "\n" for e in ev.answer_key())
    (folder / "key.jsonl").write_text(key, encoding="utf-8")


class SimServer:
    """``python -m pipeline.simserver`` on a free loopback port; the base URL while open."""

    def __init__(
        self,
        folder: Path,
        latency_s: float = 0.0,
        mean_tokens: int = 16,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.folder, self.extra = folder, extra_args
        self.conf = {
            "accuracy": 0.7,
            "accept_length": 2.6,
            "startup_delay_s": 0.0,
            "latency_s": latency_s,
            "mean_completion_tokens": mean_tokens,
            "answer_key": str(folder / "key.jsonl"),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def __enter__(self) -> str:
        path = self.folder / f"sim-{os.getpid()}-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(self.conf))
        port = free_port()
        argv = [
            sys.executable,
            "-m",
            "pipeline.simserver",
            "--model-path",
            MODEL,
            "--port",
            str(port),
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            "--enable-metrics",
            "--log-level",
            "warning",
            *self.extra,
            "--sim-config",
            str(path),
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{port}"
        self._wait_healthy(30.0)
        return self.url

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.05)
        raise TimeoutError(f"simulated server at {self.url} not healthy after {timeout} s")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=30)
            self.proc = None
