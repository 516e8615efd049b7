"""A real lm-eval task, end to end, inside a cell against the simulated server (offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.cell.job import run_cell
from pipeline.results.result_types import CellResult
from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import compose_conf, processes_mentioning, result_of

pytestmark = pytest.mark.integration
TASK = "mtp_arith_sample"
METRIC = "exact_match,final-answer"


def run(tmp_path: Path, overrides: list[str]) -> tuple[CellResult, Path]:
    cell_dir = tmp_path / "cell"
    run_cell(compose_conf(["evals=[lm_eval_sample]", *overrides]), cell_dir)
    assert processes_mentioning(str(cell_dir)) == [], "a server process survived the cell"
    return result_of(cell_dir), cell_dir


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def served(cell_dir: Path) -> list[dict[str, Any]]:
    rows = jsonl(cell_dir / SIM_LEDGER_FILE)
    return [r for r in rows if r["endpoint"] == "chat" and r["fault"] is None]


def test_task_runs_in_a_cell_and_its_score_is_in_result_json(
    tmp_path: Path, fast_sim: list[str]
) -> None:
    result, cell_dir = run(tmp_path, fast_sim)
    assert result.status == "ok", result.error
    block = result.evals["lm_eval_sample"]
    lm = block.lm_eval
    rows = served(cell_dir)
    assert len(rows) == 12 and all(r["kind"] == "numeric" for r in rows)  # the key matched
    # lm-eval's own score equals the server's ground truth (its filter reads the final line).
    truth = sum(bool(r["correct"]) for r in rows) / len(rows)
    assert lm["results"][TASK][METRIC] == pytest.approx(truth, abs=1e-12)
    assert lm["primary"][TASK] == {
        "filter": "final-answer",
        "metric": "exact_match",
        "binary": True,
        "value": lm["results"][TASK][METRIC],
        "stderr": lm["results"][TASK]["exact_match_stderr,final-answer"],
    }
    assert block.accuracy == lm["results"][TASK][METRIC]  # ours agrees with lm-eval's
    assert lm["model_args"]["max_gen_toks"] == 2048 and lm["gen_kwargs"]["max_gen_toks"] == 2048
    # The client's in-flight count follows the server's running limit (48 with speculation).
    assert lm["model_args"]["num_concurrent"] == result.client_concurrency == 48
    assert lm["n_shot"] == {TASK: 0}
    assert lm["lm_eval_version"].startswith("0.4.")
    # lm-eval's per-sample log and our records, joined one to one.
    log = jsonl(cell_dir / "samples" / f"lm_eval_{TASK}.jsonl")
    assert len(log) == 12 and {r["task"] for r in log} == {TASK}
    assert all("doc_hash" in r and "resps" in r for r in log)
    ours = jsonl(cell_dir / "samples" / "lm_eval_sample.jsonl")
    assert len(ours) == 12 and all(r["spec"] and r["error_kind"] is None for r in ours)
    assert lm["requests"] == {"recorded": 12, "not_joined": 0}
    by_doc = {r["doc_id"]: r for r in log}
    for record in ours:
        sample = by_doc[record["meta"]["doc_id"]]
        assert record["correct"] is (sample["exact_match"] == 1.0)
        assert record["response"] == sample["resps"][0][0]
    # Speculative statistics of lm-eval's requests, exactly the server's.
    accept = block.accept
    assert accept.status == "ok" and accept.n_with_spec == 12
    assert accept.accept_length == sum(r["completion_tokens"] for r in rows) / sum(
        r["verify_ct"] for r in rows
    )
    assert accept.cross_check.agrees is True


def test_max_tokens_replaces_lm_evals_256_token_default(
    tmp_path: Path, fast_sim: list[str]
) -> None:
    # Completions of 150-450 tokens: a 256-token cap would cut about two in three.
    overrides = [
        *fast_sim,
        "model.sampling.max_tokens=600",
        "server.simulated.mean_completion_tokens=300",
    ]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    rows = served(cell_dir)
    assert max(r["completion_tokens"] for r in rows) > 256
    assert all(r["finish_reason"] == "stop" for r in rows)
    assert result.evals["lm_eval_sample"].counts["truncated"] == 0


def test_truncation_is_counted_never_silent(tmp_path: Path, fast_sim: list[str]) -> None:
    result, cell_dir = run(tmp_path, [*fast_sim, "model.sampling.max_tokens=100"])
    assert result.status == "ok", result.error
    block = result.evals["lm_eval_sample"]
    cut = sum(r["finish_reason"] == "length" for r in served(cell_dir))
    assert block.counts["truncated"] == cut > 0
    assert block.rates["truncated_rate"] == cut / 12
    records = jsonl(cell_dir / "samples" / "lm_eval_sample.jsonl")
    assert not any(r["correct"] for r in records if r["finish_reason"] == "length")


def test_reasoning_model_with_small_limit_is_warned(tmp_path: Path, fast_sim: list[str]) -> None:
    overrides = [*fast_sim, "+model.chat_template_kwargs.enable_thinking=true"]
    result, _ = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    assert any("max_tokens 2048 is small for a reasoning model" in w for w in result.warnings)
    sent = result.evals["lm_eval_sample"].lm_eval
    assert "chat_template_kwargs" not in sent["model_args"]  # in every body, see the unit test


def test_failing_server_fails_the_eval_and_the_cell(tmp_path: Path, fast_sim: list[str]) -> None:
    overrides = [
        *fast_sim,
        "+server.simulated.faults.http_5xx_rate=1.0",
        "client.max_retries=1",
    ]
    result, _ = run(tmp_path, overrides)
    assert result.status == "failed"
    assert result.error.kind == "lm_eval_failed"
    assert "mtp_arith_sample" in result.error.message


def test_unknown_task_is_named_before_a_server_starts(tmp_path: Path, fast_sim: list[str]) -> None:
    result, cell_dir = run(tmp_path, [*fast_sim, "evals.lm_eval_sample.dataset.path=gsm8k_typo"])
    assert result.status == "failed"
    message = result.error.message
    assert "dataset.path='gsm8k_typo'" in message and "no such task" in message
    assert "gsm8k" in message  # a close name is offered
    assert not (cell_dir / "server.log").exists()
