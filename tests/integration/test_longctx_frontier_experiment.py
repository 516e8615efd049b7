"""experiment=longctx_frontier on model=synth_longctx: its plan (a dry run of the sweep) and one
tiny cell on the simulated SGLang 0.5.23, which counts prompts in the model's byte tokens."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script, result_of

pytestmark = pytest.mark.integration
SIM = ["server=simulated", "server.sglang_version=0.5.23",
       "server.simulated.sglang_version=0.5.23", "gpu=h200"]  # fmt: skip
FIRST = "evals.longctx_niah_single.longctx"


def _mtp_eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MTP_EVAL_CACHE": str(tmp_path / "cache")}
    return subprocess.run(
        [console_script("mtp-eval"), "experiment=longctx_frontier", *SIM, *args],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip


def test_the_sweep_plans_fmha_v2_at_every_factor_and_kv_dtype(tmp_path: Path) -> None:
    run = _mtp_eval(tmp_path, "dry_run=true", f"hydra.sweep.dir={tmp_path / 'sweep'}")
    said = run.stdout + run.stderr
    commands = re.findall(r"^server command: (.*)$", said, re.M)
    envs = re.findall(r"^server env: (.*)$", said, re.M)
    assert len(commands) == len(envs) == 10, said[-3000:]
    factors = sorted(
        (re.search(r"--kv-cache-dtype (\S+)", c)[1], float(re.search(r"SCALE_FACTOR=(\S+)", e)[1]))  # type: ignore[index]
        for c, e in zip(commands, envs, strict=True)
    )
    assert factors == sorted((kv, f) for kv in ("bf16", "fp8_e4m3")
                             for f in (0.0, 1e4, 3e4, 1e5, 1e6))  # fmt: skip
    for command in commands:
        assert "--attention-backend trtllm_mha" in command
        assert "--context-length 135168" in command
        assert "--speculative-algorithm EAGLE3" in command
        assert "--speculative-draft-model-path outputs/models/longctx/draft" in command


def test_a_tiny_cell_runs_at_16k_and_128k_in_byte_tokens(tmp_path: Path) -> None:
    cell = tmp_path / "cell"
    run = _mtp_eval(tmp_path, "hydra.mode=RUN", "backend=fmha_v2", "kv_dtype=fp8_e4m3",
                    "skip_softmax.prefill=30000", f"{FIRST}.lengths=[16384,131072]",
                    f"{FIRST}.samples=1", "speed.prefill_tokens=[16384]", "speed.repeats=1",
                    "server.simulated.startup_delay_s=0.2", "client.progress=false",
                    f"hydra.run.dir={cell}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = result_of(cell)
    assert result.status == "ok" and len(result.evals) == 6
    # The speed phase times the eval's own haystacks, tokenised by the committed byte tokenizer
    # (random ids from 1000 up do not exist in a 264-id vocabulary).
    speed = json.loads((cell / "result.json").read_text())["speed"]
    assert speed["prompts"]["source"] == "eval:longctx_niah_single"
    assert speed["prompts"]["tokenizer"].endswith("longctx-model-worked-0.5.23/tokenizer")
    assert [p["prompt_tokens"] for p in speed["points"] if p["phase"] == "prefill"] == [16384]
    for path in (cell / "samples").glob("longctx_*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert sorted(r["meta"]["length"] for r in rows) == [16384, 131072]
        for row in rows:  # the server's count is the eval's byte count
            assert row["prompt_tokens"] == row["meta"]["prompt_tokens"] <= row["meta"]["length"]
            assert row["meta"]["counted_by"] == "bytes"
