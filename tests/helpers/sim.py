"""One simulated SGLang server as a real subprocess, and small HTTP calls to it (stdlib only)."""

from __future__ import annotations

import contextlib
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SPEC_ARGS = [
    "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]  # fmt: skip
KEY = [
    *({"question": f"Question {i}: which option is number {i}?", "answer": f"number {i}",
       "kind": "mcq"} for i in range(6)),
    {"question": "How many legs do 3 spiders have?", "answer": "24", "kind": "numeric"},
]  # fmt: skip


def mcq_prompt(i: int) -> str:
    options = "\n".join(f"{c}) number {i + k}" for k, c in enumerate("DCBA"))
    return f"Answer the question.\n\nQuestion {i}: which option is number {i}?\n\n{options}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sim:
    """One simulated server process in its own process group, logging to a file."""

    def __init__(self, folder: Path, args: list[str], conf: dict[str, Any], env: dict[str, str]):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.port = folder, free_port()
        (folder / "key.jsonl").write_text("".join(json.dumps(r) + "\n" for r in KEY))
        settings = {"startup_delay_s": 0.2, "accuracy": 0.7, "accept_length": 2.6,
                    "mean_completion_tokens": 60, "answer_key": str(folder / "key.jsonl"),
                    "ledger": str(folder / "ledger.jsonl"), **conf}  # fmt: skip
        (folder / "sim.json").write_text(json.dumps(settings))
        self.log_path, self._args, self._env = folder / "server.log", args, env
        self.rebinds = 0
        self._start()

    def _start(self) -> None:
        argv = [sys.executable, "-m", "pipeline.simserver", "--model-path", "tiny-sim"]
        argv += ["--port", str(self.port), "--random-seed", "0", *self._args]
        argv += ["--sim-config", str(self.folder / "sim.json")]
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "PYTHONPATH": str(ROOT), **self._env},
            )  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"

    def _lost_its_port(self) -> bool:
        # free_port's port can be taken by a neighbour before the server binds it (parallel
        # workers on CI): another port then, a few times, never a failure of the test itself
        if self.proc.poll() is None or "address already in use" not in self.log():
            return False
        if self.rebinds >= 3:
            return False
        self.rebinds += 1
        self.port = free_port()
        self._start()
        return True

    def log(self) -> str:
        return self.log_path.read_text()

    def ledger(self) -> list[dict[str, Any]]:
        path = self.folder / "ledger.jsonl"
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    def wait_ready(self, timeout: float = 20.0) -> Sim:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._lost_its_port():
                continue
            assert self.proc.poll() is None, self.log()
            if status(self.url + "/health_generate") == 200:
                return self
            time.sleep(0.02)
        raise AssertionError(f"not healthy in {timeout} s:\n{self.log()}")

    def kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


def call(url: str, body: Any = None, headers: dict[str, str] | None = None,
         timeout: float = 10.0) -> tuple[int, bytes]:  # fmt: skip
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json",
                                                          **(headers or {})})  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def status(url: str) -> int | None:
    try:
        return call(url, timeout=2)[0]
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def get(url: str) -> Any:
    code, body = call(url)
    assert code == 200, body
    return json.loads(body)


def chat(url: str, prompt: str, **extra: Any) -> Any:
    code, body = call(url + "/v1/chat/completions",
                      {"model": "default", "messages": [{"role": "user", "content": prompt}],
                       **extra})  # fmt: skip
    assert code == 200, body
    return json.loads(body)


def sse(url: str, body: dict[str, Any]) -> list[Any]:
    code, raw = call(url, body)
    assert code == 200, raw
    events = [line[len(b"data: ") :] for line in raw.split(b"\n\n") if line]
    assert events[-1] == b"[DONE]"
    return [json.loads(e) for e in events[:-1]]
