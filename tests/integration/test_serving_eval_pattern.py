"""``serving.prompts=eval:PATTERN`` end to end: each bucket sends one matched eval's prompts.

The cell runs the six long-context evals; the pattern ``longctx_niah_multi*y`` matches exactly two
of them, generated at clearly different lengths: ``longctx_niah_multikey`` at 4608 byte tokens
(first in the cell's order) and ``longctx_niah_multiquery`` at 1536. Both reach the 1024 bucket
with enough prompts, so it must draw from the least cut, the short eval (the first eval, or the
one with the most prompts, would be the long one); only the long eval reaches 4096; none reaches
8192. Ground truth is the simulated server's ledger (the sha256 of each served prompt's ids): each
level's requests must be exactly the chosen eval's cuts, tokenized here by HF transformers with the
model's committed tokenizer, and result.json and the report must name each bucket's eval.
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
LONG, SHORT = "longctx_niah_multikey", "longctx_niah_multiquery"
PATTERN = "eval:longctx_niah_multi*y"
CELL = [
    "model=synth_longctx", "evals=[longctx]", f"{FIRST}.lengths=[1024]", f"{FIRST}.samples=4",
    f"{FIRST}.tokens=bytes", "server.simulated.prompt_tokens=bytes",
    f"evals.{LONG}.longctx.lengths=[4608]", f"evals.{SHORT}.longctx.lengths=[1536]",
    "speed.enabled=false", "serving.enabled=true", f"serving.prompts={PATTERN}",
    "serving.buckets=[1024,4096,8192]", "serving.concurrency=[1,2]", "serving.requests=4",
    "serving.output_tokens=8", "serving.warmup=1",
]  # fmt: skip
# In order, what the sweep sends: (bucket, the eval drawn, requests, a level? False: warm-up).
SENT = [
    (1024, SHORT, 1, False), (1024, SHORT, 4, True), (1024, SHORT, 4, True),
    (4096, LONG, 1, False), (4096, LONG, 4, True), (4096, LONG, 4, True),
]  # fmt: skip


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cell: the six long-context evals, then the serving sweep on the pattern's two."""
    root = tmp_path_factory.mktemp("serving-pattern")
    env = {**os.environ, "MTP_EVAL_CACHE": str(root / "cache")}
    run = subprocess.run(
        [console_script("mtp-eval"), *CELL, "server.simulated.startup_delay_s=0.2",
         "client.progress=false", f"hydra.run.dir={root / 'cell'}"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return root / "cell"


@pytest.fixture(scope="module")
def prompts(cell: Path) -> dict[str, list[list[int]]]:
    """Each matched eval's prompts as SGLang's chat endpoint would tokenize them (HF, directly)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(REPO / TOKENIZER)
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MTP_EVAL_CACHE", str(cell.parent / "cache"))  # the cell's questions
        conf = compose_conf(CELL)
        for name in (LONG, SHORT):
            found[name] = [
                list(tok.apply_chat_template(p.messages, add_generation_prompt=True,
                                             return_dict=False))
                for p in make_eval(name, conf.evals[name]).prompts()
            ]  # fmt: skip
    return found


def _digest(ids: list[int]) -> str:
    return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()  # the sim's prompt text


def _cuts(prompts: list[list[int]], bucket: int) -> set[str]:
    return {_digest(p[:bucket]) for p in prompts if len(p) >= bucket}


def test_the_evals_reach_the_buckets_as_the_test_assumes(
    prompts: dict[str, list[list[int]]],
) -> None:
    # Both evals fill the 1024 bucket's largest level (4) with distinct cuts, so only the least
    # cut rule picks the short one; the short eval cannot reach 4096; neither reaches 8192.
    assert len(_cuts(prompts[SHORT], 1024)) == 4 and len(_cuts(prompts[LONG], 1024)) == 4
    assert max(map(len, prompts[SHORT])) < 4096 <= min(map(len, prompts[LONG]))
    assert max(map(len, prompts[LONG])) < 8192
    assert not _cuts(prompts[SHORT], 1024) & _cuts(prompts[LONG], 1024)


def test_each_bucket_sent_exactly_the_chosen_evals_cuts(
    cell: Path, prompts: dict[str, list[list[int]]]
) -> None:
    rows = [json.loads(line) for line in (cell / SIM_LEDGER_FILE).open()]
    rows = [r for r in rows if r["endpoint"] == "generate"]  # the evals went through chat
    assert len(rows) == sum(count for _, _, count, _ in SENT)
    start = 0
    for bucket, name, count, level in SENT:
        part, start = rows[start : start + count], start + count
        cuts = _cuts(prompts[name], bucket)
        assert all(r["prompt_tokens"] == bucket and r["prompt_sha256"] in cuts for r in part)
        if level:  # the chosen eval's four prompts, each once
            assert {r["prompt_sha256"] for r in part} == cuts


def test_the_result_and_the_report_name_each_buckets_eval(
    cell: Path, prompts: dict[str, list[list[int]]], tmp_path: Path
) -> None:
    data: dict[str, Any] = json.loads((cell / "result.json").read_text())
    assert data["status"] == "ok" and shape_problems(data) == {}
    block = data["serving"]
    found = block["eval_prompts"]
    assert found["source"] == PATTERN and found["distinct"] == 8
    assert found["buckets"] == {"1024": f"eval:{SHORT}", "4096": f"eval:{LONG}"}
    assert [(p["source"], p["distinct"]) for p in found["pools"]] == [
        (f"eval:{LONG}", 4), (f"eval:{SHORT}", 4)]  # fmt: skip
    said = f"(bucket: 1024: eval:{SHORT}, 4096: eval:{LONG})"
    assert block["prompts"].startswith(f"{PATTERN}: each bucket") and said in block["prompts"]
    got = {(p["bucket"], p["concurrency"]): p["requests"] for p in block["points"]}
    assert got == {(1024, 1): 4, (1024, 2): 4, (4096, 1): 4, (4096, 2): 4}
    longest = f"{LONG} {max(map(len, prompts[LONG]))}, {SHORT} {max(map(len, prompts[SHORT]))}"
    assert block["notes"] == [
        f"bucket 8192 skipped: serving.prompts={PATTERN} matches no eval with a prompt of 8192 "
        f"tokens or more (the longest of each: {longest}); real text is not tiled (a repeated "
        "prompt attends to its own copy)"
    ]
    text = report_markdown(cell, tmp_path / "report")
    assert f"Prompts: {PATTERN}: each bucket the matched eval whose prompts are cut least" in text
    assert said in text
