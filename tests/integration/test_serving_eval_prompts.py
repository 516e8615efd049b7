"""``serving.prompts=eval:longctx_niah_single`` end to end: a real cell on the simulated server.

Ground truth is the simulated server's ledger (one line per served prompt: the sha256 of the ids
it received, their count, and how many cache flushes came before): every serving request must be
one of the eval's prompts, tokenized here by HF transformers with the model's committed tokenizer
and chat template, cut to its bucket; no level may send a cut prompt twice or meet one sent
before its flush; a level with fewer prompts than it asks for is capped (or skipped below its
concurrency) and a bucket longer than every prompt skipped, each with a note in result.json and
the report.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evals.base import make_eval
from pipeline.results.result_schema import shape_problems
from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import REPO, compose_conf, console_script, report_markdown

pytestmark = pytest.mark.integration

TOKENIZER = "benchmarks/results/live-h200/longctx-model-worked-0.5.23/tokenizer"
FIRST = "evals.longctx_niah_single.longctx"
# Three questions at 2048 and three at 4608 byte tokens: six prompts reach 1024, three 4096.
CELL = [
    "model=synth_longctx", "evals=[longctx]", f"{FIRST}.lengths=[2048,4608]",
    f"{FIRST}.samples=3", f"{FIRST}.tokens=bytes", "server.simulated.prompt_tokens=bytes",
    "speed.enabled=false", "serving.enabled=true", "serving.prompts=eval:longctx_niah_single",
    "serving.buckets=[1024,4096,8192]", "serving.concurrency=[1,4]", "serving.requests=4",
    "serving.output_tokens=16", "serving.warmup=1",
]  # fmt: skip
# In order, what the sweep sends: (bucket, requests, a level? False: the bucket's warm-up).
# 1024 x 4 asks for 8 (twice its concurrency) and gets the 6 there are; 4096 x 1 asks for 4 and
# gets 3; 4096 x 4 is skipped (3 prompts cannot keep 4 in flight); 8192 has no prompt.
SENT = [(1024, 1, False), (1024, 4, True), (1024, 6, True), (4096, 1, False), (4096, 3, True)]


def _run_cell(root: Path, name: str, *more: str) -> Path:
    env = {**os.environ, "MTP_EVAL_CACHE": str(root / "cache")}
    run = subprocess.run(
        [console_script("mtp-eval"), *CELL, *more, "server.simulated.startup_delay_s=0.2",
         "client.progress=false", f"hydra.run.dir={root / name}"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return root / name


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cell: the six long-context evals, then the serving sweep on the first's prompts."""
    return _run_cell(tmp_path_factory.mktemp("serving-eval"), "cell")


@pytest.fixture(scope="module")
def prompts(cell: Path) -> list[list[int]]:
    """The eval's prompts as SGLang's chat endpoint would tokenize them (HF, directly)."""
    from transformers import AutoTokenizer

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MTP_EVAL_CACHE", str(cell.parent / "cache"))  # the cell's questions
        conf = compose_conf(CELL).evals["longctx_niah_single"]
        prompts = make_eval("longctx_niah_single", conf).prompts()
    tok = AutoTokenizer.from_pretrained(REPO / TOKENIZER)
    return [
        list(tok.apply_chat_template(p.messages, add_generation_prompt=True, return_dict=False))
        for p in prompts
    ]


def _digest(ids: list[int]) -> str:
    return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()  # the sim's prompt text


def _serving_rows(cell: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (cell / SIM_LEDGER_FILE).open()]
    return [r for r in rows if r["endpoint"] == "generate"]  # the evals went through chat


def test_each_level_sent_distinct_eval_prompts_cut_to_its_bucket_after_a_flush(
    cell: Path, prompts: list[list[int]]
) -> None:
    rows = _serving_rows(cell)
    assert len(rows) == sum(count for _, count, _ in SENT)
    start, epochs = 0, []
    for bucket, count, level in SENT:
        part, start = rows[start : start + count], start + count
        cuts = {_digest(p[:bucket]) for p in prompts if len(p) >= bucket}
        assert all(r["prompt_tokens"] == bucket and r["prompt_sha256"] in cuts for r in part)
        assert all(r["stream"] and r["completion_tokens"] == 16 for r in part)
        if level:  # each prompt once, all after one flush that no earlier request shares
            assert len({r["prompt_sha256"] for r in part}) == count
            (epoch,) = {r["flushes"] for r in part}
            assert not epochs or epoch > epochs[-1]
            epochs.append(epoch)


def test_the_result_records_the_prompts_the_caps_and_the_skipped_bucket(
    cell: Path, prompts: list[list[int]]
) -> None:
    data = json.loads((cell / "result.json").read_text())
    assert data["status"] == "ok" and shape_problems(data) == {}
    block = data["serving"]
    assert block["eval_prompts"] == {
        "source": "eval:longctx_niah_single", "tokenizer": TOKENIZER, "distinct": 6,
        "shortest": min(map(len, prompts)), "longest": max(map(len, prompts)),
        "shared_prefix_tokens": block["eval_prompts"]["shared_prefix_tokens"],
        "radix_cache": "flushed before every level",
    }  # fmt: skip
    assert "/generate" in block["method"] and block["prompts"].startswith("eval:longctx_niah")
    got = {(p["bucket"], p["concurrency"]): p for p in block["points"]}
    assert {k: p["requests"] for k, p in got.items()} == {(1024, 1): 4, (1024, 4): 6, (4096, 1): 3}
    for (bucket, _), p in got.items():
        assert p["errors"] == 0 and p["prompt_tokens_mean"] == bucket
        assert p["metrics"]["sglang:generation_tokens_total"] == 16 * p["requests"]
        assert p["accept_length"] is not None and p["ttft_ms"]["p50"] > 0
    notes = " | ".join(block["notes"])
    assert "bucket 1024, concurrency 4: 6 requests, not 8" in notes
    assert "bucket 4096, concurrency 4 skipped" in notes
    assert "bucket 8192 skipped: serving.prompts=eval:longctx_niah_single has no prompt" in notes


def test_the_reports_serving_intro_names_the_prompts_and_the_notes(
    cell: Path, tmp_path: Path
) -> None:
    text = report_markdown(cell, tmp_path / "report")
    assert "## Serving: synth-longctx" in text
    assert "Prompts: eval:longctx_niah_single: the longctx_niah_single eval's prompts" in text
    assert "Notes: bucket 1024, concurrency 4: 6 requests, not 8" in text


def test_speculation_off_serves_the_same_eval_prompts_and_runs_no_eval(
    cell: Path, prompts: list[list[int]], tmp_path: Path
) -> None:
    off = _run_cell(cell.parent, "off", "serving.speculation=false")
    data = json.loads((off / "result.json").read_text())
    assert data["status"] == "ok" and not data["evals"]  # the evals were its prompts' source only
    assert "--speculative-algorithm" not in data["server"]["argv"]
    assert data["serving"]["prompts"] == json.loads((cell / "result.json").read_text())[
        "serving"]["prompts"]  # fmt: skip
    rows = _serving_rows(off)
    assert {r["endpoint"] for r in [json.loads(x) for x in (off / SIM_LEDGER_FILE).open()]} == {
        "generate"}  # fmt: skip
    cuts = {_digest(p[:b]) for p in prompts for b in (1024, 4096) if len(p) >= b}
    assert rows and all(r["prompt_sha256"] in cuts for r in rows)
    out = tmp_path / "report"  # now the report pairs them: speculation's speed-up per level
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(cell), str(off), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode in (0, 2), report.stdout[-2000:] + report.stderr[-2000:]
    entries = json.loads((out / "summary.json").read_text())["serving"]
    on = [e for e in entries if e["speculation"]]
    assert on and all(e["spec_user_speedup"] is not None for e in on)
