"""The generated long-context evals through ``mtp-eval`` on the simulated server, at small lengths.

The server's own ``prompt_tokens`` equal the lengths the eval counted; a length the server's
context cannot hold is refused before the first request (compose time when
``model.context_length`` says it, else once the server is up), naming the eval, the length and
the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evals.longctx_tasks import TASKS
from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import console_script, result_of

pytestmark = pytest.mark.integration
EVALS = [f"longctx_{task}" for task in TASKS]
FIRST = "evals.longctx_niah_single.longctx"  # every task reads its lengths and samples


def _mtp_eval(cell: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MTP_EVAL_CACHE": str(cell.parent / "cache")}  # questions kept here
    return subprocess.run(
        [console_script("mtp-eval"), "evals=[longctx]", f"hydra.run.dir={cell}", *args],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip


def _samples(cell: Path, name: str) -> list[dict[str, Any]]:
    lines = (cell / "samples" / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_every_task_runs_at_each_length_in_the_servers_own_tokens(tmp_path, fast_sim):
    cell = tmp_path / "cell"
    run = _mtp_eval(cell, *fast_sim, f"{FIRST}.lengths=[700,1400]", f"{FIRST}.samples=2")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = result_of(cell)
    assert result.status == "ok"
    for name in EVALS:
        summary = result.evals[name]
        assert summary.n_questions == 4 and summary.accuracy is not None
        rows = _samples(cell, name)
        assert sorted(r["meta"]["length"] for r in rows) == [700, 700, 1400, 1400]
        for row in rows:
            meta = row["meta"]
            assert row["prompt_tokens"] == meta["prompt_tokens"] <= meta["length"]
            assert meta["prompt_tokens"] >= meta["length"] - 12


def test_a_length_longer_than_the_servers_context_is_refused_before_the_first_request(
    tmp_path, fast_sim
):
    cell = tmp_path / "cell"
    run = _mtp_eval(cell, *fast_sim, f"{FIRST}.lengths=[700,40000]", f"{FIRST}.samples=1")
    assert run.returncode != 0
    result = result_of(cell)
    assert result.status == "failed" and result.error is not None
    message = result.error.message
    for name in EVALS:
        assert f"evals.{name}: prompts of up to 40,000 tokens" in message
        assert f"evals.{name}.longctx.lengths=[700]" in message
    assert "server's context length of 32,768" in message  # the simulated server's default
    assert "model.context_length=42048" in message
    ledger = (cell / SIM_LEDGER_FILE).read_text() if (cell / SIM_LEDGER_FILE).exists() else ""
    assert '"chat"' not in ledger, "a request was sent before the refusal"


def test_a_model_context_length_too_short_is_refused_at_compose(tmp_path, fast_sim):
    cell = tmp_path / "cell"
    run = _mtp_eval(cell, *fast_sim, f"{FIRST}.lengths=[700,1400]", "model.context_length=1500")
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    said = run.stdout + run.stderr
    assert "evals.longctx_vt: prompts of up to 1,400 tokens plus 2048 answer tokens" in said
    assert "model.context_length=3448" in said
    assert not (cell / "result.json").exists()
