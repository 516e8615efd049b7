"""``speed.prompts=eval:synth_retrieval`` end to end: a real ``mtp-eval`` cell, simulated server.

Ground truth is the simulated server's ledger (one line per served prompt, with the sha256 of the
ids it received): every speed request must be one of the retrieval eval's prompts, tokenized
here by HF transformers with the trained model's own tokenizer and chat template, cut to the
shape's length; the requests of one run distinct; the radix cache flushed before every run. A
shape longer than every prompt is skipped with a note, and a model without a local tokenizer is
refused before any server starts.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from evals.base import make_eval
from evals.eval_conf import EvalConf
from pipeline.results.result_types import CellResult
from tests.helpers.cells import REPO, console_script, processes_mentioning

pytestmark = pytest.mark.integration

TOKENIZER = "benchmarks/results/live-h200/trained-model/target"
SPEED = [
    "speed.enabled=true", "speed.prompts=eval:synth_retrieval", "speed.warmup=1",
    "speed.repeats=2", "speed.prefill_tokens=[1024,16384,20000]", "speed.prefill_batches=[8]",
    "speed.decode_batches=[2]", "speed.decode_prompt_tokens=512", "speed.decode_new_tokens=8",
]  # fmt: skip
RUNS = 3  # warm-up + repeats per shape


def _run(*argv: str, timeout: float = 280) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script("mtp-eval"), *argv], cwd=REPO, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def _digest(ids: list[int]) -> str:
    return hashlib.sha256(" ".join(map(str, ids)).encode()).hexdigest()  # the sim's prompt text


def _retrieval_ids() -> list[list[int]]:
    """The eval's prompts as SGLang's chat endpoint would tokenize them (HF, directly)."""
    from transformers import AutoTokenizer

    raw = OmegaConf.load(REPO / "conf/evals/synth_retrieval.yaml")["synth_retrieval"]
    conf = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(EvalConf), raw))
    assert isinstance(conf, EvalConf)
    tok = AutoTokenizer.from_pretrained(REPO / TOKENIZER)
    return [
        list(tok.apply_chat_template(p.messages, add_generation_prompt=True, return_dict=False))
        for p in make_eval("synth_retrieval", conf).prompts()
    ]


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cell: the retrieval eval, then its prompts' speed phase."""
    run_dir = tmp_path_factory.mktemp("speed-eval") / "run"
    run = _run("evals=[synth_retrieval]", f"model.tokenizer_path={TOKENIZER}", *SPEED,
               f"hydra.run.dir={run_dir}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run_dir


def _speed_rows(cell_dir: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (cell_dir / "simulated_ledger.jsonl").open()]
    return [r for r in rows if r["endpoint"] == "generate"]


def test_the_server_received_the_evals_token_ids_cut_to_each_length(cell: Path) -> None:
    prompts = _retrieval_ids()
    rows = _speed_rows(cell)
    lengths = [r["prompt_tokens"] for r in rows]
    # 1 x 1024, 1 x 16384 and 8 x 1024 prefill, 2 x 512 decode; 3 runs of each; 20000 skipped.
    assert lengths == [1024] * RUNS + [16384] * RUNS + [1024] * 8 * RUNS + [512] * 2 * RUNS
    for row in rows:
        length = row["prompt_tokens"]
        cut = {_digest(p[:length]) for p in prompts if len(p) >= length}
        assert row["prompt_sha256"] in cut, row
    calls: dict[str, set[str]] = {}
    for row in rows:  # a batch's rows share the request id before its "_i"
        calls.setdefault(row["rid"].split("_")[0], set()).add(row["prompt_sha256"])
    assert [len(hashes) for hashes in calls.values()] == [1] * 6 + [8] * 3 + [2] * 3  # distinct
    flushed = (cell / "server.log").read_text().count("Cache flushed successfully!")
    assert flushed >= len(calls) + 1  # once before the phase, then before each run


def test_the_result_says_the_prompts_were_the_evals(cell: Path) -> None:
    data = json.loads((cell / "result.json").read_text())
    assert data["status"] == "ok" and data["evals"]["synth_retrieval"]
    block = data["speed"]
    assert "token_ids" not in block
    assert block["prompts"] == {
        "source": "eval:synth_retrieval", "tokenizer": TOKENIZER, "distinct": 48,
        "shortest": min(map(len, _retrieval_ids())), "longest": max(map(len, _retrieval_ids())),
        "shared_prefix_tokens": block["prompts"]["shared_prefix_tokens"],
        "radix_cache": "flushed before every run",
    }  # fmt: skip
    assert 0 < block["prompts"]["shared_prefix_tokens"] < 1024
    speed = CellResult.from_json(data).speed
    assert speed is not None and "the synth_retrieval eval's prompts" in speed.prompts
    assert any(n.startswith("prefill 1 x 20000 skipped: speed.prompts=eval:synth_retrieval has 0")
               and "not tiled" in n for n in speed.notes), speed.notes  # fmt: skip


def test_a_model_without_a_local_tokenizer_is_refused_before_a_server_starts(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    run = _run("evals=[synth_retrieval]", *SPEED, f"hydra.run.dir={run_dir}", timeout=120)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert (
        "mtp-eval: speed.prompts=eval:synth_retrieval: model.path='tiny-sim' is not a local folder"
        in run.stderr
        and "set model.tokenizer_path" in run.stderr
    ), run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert not (run_dir / "server.log").exists() and not (run_dir / "result.json").exists()
    assert processes_mentioning(str(run_dir)) == []


def test_an_eval_the_cell_does_not_run_is_refused_when_composed(tmp_path: Path) -> None:
    run = _run(*SPEED, f"hydra.run.dir={tmp_path / 'run'}", timeout=60)  # evals=[mcq_sample]
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert "speed.prompts=eval:synth_retrieval names an eval the cell does not run" in run.stderr


def test_the_reports_speed_intro_names_the_prompts(cell: Path, tmp_path: Path) -> None:
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(cell), "--out", str(tmp_path / "report")],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode in (0, 2), report.stdout[-2000:] + report.stderr[-2000:]
    text = (tmp_path / "report" / "report.md").read_text()
    assert (
        f"Prompts: the synth_retrieval eval's prompts as its cell sends them (chat template, the "
        f"tokenizer of {TOKENIZER}), cut to each shape's length." in text
    ), text[:3000]
