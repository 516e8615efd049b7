"""Compile FlashInfer's JIT modules ahead, in child processes, while the probe measures.

FlashInfer 0.6.18 compiles each kernel module with nvcc on its first call: about 2 minutes for
fmha_v2 and 75 s for FA3 on an H200 host (measured live), and FP8 needs modules of its
own. Compiling them one after another inside the probe would take most of a 10-minute GPU call,
so ``JitWarmer`` starts a child per (kernel, KV dtype), ``jit_parallel`` at a time in the order the
grid first needs them, each making one tiny call (``python -m backends.probe.jit``). The children
fill FlashInfer's on-disk cache (``FLASHINFER_WORKSPACE_BASE``, under a file lock), so the probe's
own first call only loads the module. ``wait`` blocks until one module is ready or the budget ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from backends.probe.plan import Geometry

REPO_ROOT = Path(__file__).resolve().parents[2]
FAST_FAILURE_S = 20.0  # a child that failed this fast most likely never reached nvcc


class JitSummary(TypedDict):
    """One FlashInfer module's compile in the probe's JSON (``jit``)."""

    kernel: str
    kv_dtype: str
    state: str
    seconds: float
    log_tail: str  # the failure's log tail, empty otherwise


@dataclass
class JitJob:
    """One module to compile, and how it went."""

    kernel: str
    kv_dtype: str
    state: str = "queued"  # queued | running | ok | failed | killed
    started: float = 0.0  # time.monotonic() at launch
    seconds: float = 0.0  # run time of the child, once it ended
    log: str = ""

    def end(self, state: str) -> None:
        """Record how the child ended."""
        self.state, self.seconds = state, time.monotonic() - self.started

    def tail(self, chars: int = 1500) -> str:
        """The end of the child's output."""
        try:
            return Path(self.log).read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class JitWarmer:
    """Runs the compile children in a background thread, ``parallel`` at a time."""

    def __init__(
        self, jobs: list[tuple[str, str]], geometry: Geometry, parallel: int, max_jobs: int
    ):
        self.jobs = [JitJob(k, d) for k, d in jobs]
        self._geometry, self._parallel, self._max_jobs = geometry, max(1, parallel), max_jobs
        self._dir = Path(tempfile.mkdtemp(prefix="probe-jit-"))
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._done = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, name="jit-warmer", daemon=True)

    def start(self) -> None:
        """Start compiling in the background."""
        self._thread.start()

    def job(self, kernel: str, kv_dtype: str) -> JitJob | None:
        """The job of this module, if it was queued."""
        return next((j for j in self.jobs if (j.kernel, j.kv_dtype) == (kernel, kv_dtype)), None)

    def wait(self, kernel: str, kv_dtype: str, timeout_s: float) -> JitJob | None:
        """Block until the module's child ended or ``timeout_s`` passed; return its job."""
        job = self.job(kernel, kv_dtype)
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._done:
            while job is not None and job.state in ("queued", "running"):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._done.wait(min(left, 5.0))
        return job

    def stop(self) -> None:
        """Kill the children still compiling (at the end of the budget)."""
        with self._done:
            self._stopped = True
            for index, proc in self._procs.items():
                if proc.poll() is None:
                    proc.kill()
                    self.jobs[index].end("killed")
            self._done.notify_all()

    def summary(self) -> list[JitSummary]:
        """Each module's state and compile seconds, with the log tail of failures."""
        return [
            {
                "kernel": j.kernel,
                "kv_dtype": j.kv_dtype,
                "state": j.state,
                "seconds": round(j.seconds, 1),
                "log_tail": j.tail() if j.state == "failed" else "",
            }
            for j in self.jobs
        ]

    def logs(self) -> str:
        """All children's output, one section per module."""
        return "".join(
            f"==== {j.kernel} {j.kv_dtype}: {j.state}, {j.seconds:.0f} s\n{j.tail(20000)}\n"
            for j in self.jobs
        )

    def _loop(self) -> None:
        pending = list(range(len(self.jobs)))
        while (pending or self._procs) and not self._stopped:
            with self._done:
                while pending and len(self._procs) < self._parallel and not self._stopped:
                    self._launch(pending.pop(0))
            time.sleep(0.5)
            self._reap()

    def _launch(self, index: int) -> None:
        job, g = self.jobs[index], self._geometry
        job.log = str(self._dir / f"{job.kernel}_{job.kv_dtype}.log")
        env = dict(os.environ, MAX_JOBS=str(self._max_jobs), PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        argv = [
            sys.executable,
            "-m",
            "backends.probe.jit",
            job.kernel,
            job.kv_dtype,
            str(g.num_heads),
            str(g.num_kv_heads),
            str(g.head_dim),
            str(g.page_size),
        ]
        if shutil.which("nice"):
            argv = ["nice", "-n", "10", *argv]  # the measuring process keeps priority on the CPU
        with open(job.log, "w") as log:
            self._procs[index] = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env
            )
        job.state, job.started = "running", time.monotonic()

    def _reap(self) -> None:
        with self._done:
            for index, proc in list(self._procs.items()):
                if proc.poll() is None:
                    continue
                if self.jobs[index].state == "running":
                    self.jobs[index].end("ok" if proc.returncode == 0 else "failed")
                del self._procs[index]
                self._done.notify_all()


def _compile_one(argv: list[str]) -> int:
    """Child: one tiny call of the kernel so FlashInfer builds and caches its module."""
    import torch

    from backends.probe.inputs import make_inputs
    from backends.probe.kernels import kernel_inputs, make_runner
    from backends.probe.probe_conf import InputProfile

    kernel, kv_dtype = argv[0], argv[1]
    heads, kv_heads, dim, page = (int(x) for x in argv[2:6])
    start = time.monotonic()
    inputs = make_inputs(InputProfile(), 1, 256, (heads, kv_heads, dim), device="cuda")
    batch, _ = kernel_inputs(inputs, kv_dtype, page)
    run = make_runner(kernel, batch, kv_heads)
    out = run(0.0)
    if kernel == "fmha_v2":
        out = run(1.0)  # the skip-softmax kernels live in the same module
    torch.cuda.synchronize()
    print(
        f"{kernel} {kv_dtype}: compiled and ran in {time.monotonic() - start:.1f} s, "
        f"finite={bool(torch.isfinite(out.float()).all())}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(_compile_one(sys.argv[1:]))
