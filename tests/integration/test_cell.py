"""A whole cell against the simulated server as a real subprocess (launcher, client, result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cell.job import run_cell
from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result
from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import compose_conf, processes_mentioning

pytestmark = pytest.mark.integration


def ledger(cell_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (cell_dir / SIM_LEDGER_FILE).read_text().splitlines()]


def samples(cell_dir: Path, name: str = "mcq_sample") -> list[dict]:
    path = cell_dir / "samples" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(tmp_path: Path, overrides: list[str]) -> tuple[CellResult, Path]:
    cell_dir = tmp_path / "cell"
    result = run_cell(compose_conf(overrides), cell_dir)
    on_disk = read_result(cell_dir)
    assert on_disk is not None and on_disk.status == result.status
    assert processes_mentioning(str(cell_dir)) == [], "a server process survived the cell"
    return on_disk, cell_dir


def test_cell_matches_simulated_ground_truth(tmp_path, fast_sim):
    result, cell_dir = run(tmp_path, [*fast_sim, "backend=fmha_v2", "kv_dtype=fp8_e4m3"])
    assert result.status == "ok", result.error
    assert result.simulated is True
    served = [e for e in ledger(cell_dir) if e["endpoint"] == "chat" and e["fault"] is None]
    ev = result.evals["mcq_sample"]
    assert ev.n_samples == len(served) == len(samples(cell_dir))
    truth_accuracy = sum(bool(e["correct"]) for e in served) / len(served)
    assert ev.accuracy == pytest.approx(truth_accuracy, abs=1e-12)
    truth_accept = sum(e["completion_tokens"] for e in served) / sum(e["verify_ct"] for e in served)
    assert result.accept.accept_length == pytest.approx(truth_accept, abs=1e-12)
    truth_rate = sum(e["num_correct_drafts"] for e in served) / sum(
        e["verify_ct"] * 3 for e in served
    )
    assert result.accept.accept_rate == pytest.approx(truth_rate, abs=1e-12)
    assert result.accept.cross_check.agrees is True
    assert all(not m.verifiable for m in result.mismatches)
    assert result.observed["kv_cache_dtype"] == "fp8_e4m3"
    assert result.provenance.server_argv[:3][-1] == "pipeline.simserver"


def test_non_speculative_cell_says_so(tmp_path, fast_sim):
    result, _ = run(
        tmp_path,
        [
            *fast_sim,
            "model.speculative.algorithm=null",
            "model.speculative.num_steps=null",
            "model.speculative.eagle_topk=null",
            "model.speculative.num_draft_tokens=null",
        ],
    )
    assert result.status == "ok", result.error
    assert result.accept.status == "not_speculative"


def test_dry_run_starts_nothing_and_records_argv(tmp_path, fast_sim):
    result, cell_dir = run(tmp_path, [*fast_sim, "dry_run=true", "backend=fmha_v2"])
    assert result.status == "planned"
    assert (
        "--prefill-attention-backend" in result.server_argv
        or "--attention-backend" in result.server_argv
    )
    assert not (cell_dir / "server.log").exists()


@pytest.mark.parametrize(
    ("fault", "status", "error_kind"),
    [
        (
            "+server.simulated.faults.reject_message='bad flag combination'",
            "failed",
            "server_rejected_config",
        ),
        ("+server.simulated.faults.crash_at_start=true", "failed", "server_crash"),
        ("+server.simulated.faults.never_healthy=true", "failed", "server_timeout"),
        ("+server.simulated.faults.crash_after_requests=20", "failed", "server_died"),
        ("+server.simulated.faults.missing_spec_keys=true", "failed", "missing_accept_metric"),
    ],
)
def test_fault_fails_cell_with_kind(tmp_path, fast_sim, fault, status, error_kind):
    overrides = [*fast_sim, fault, "client.max_retries=1", "client.retry_backoff_s=0.01"]
    if "never_healthy" in fault:
        overrides.append("server.startup_timeout_s=2")
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == status
    assert result.error.kind == error_kind, result.error
    if "crash_after" in fault:
        answered = [s for s in samples(cell_dir) if s["error_kind"] is None]
        assert len(answered) == 20  # every sample answered before the crash is on disk
    if "reject" in fault:
        assert "bad flag combination" in result.error.message


@pytest.mark.parametrize(
    ("fault", "rate_key"),
    [
        ("+server.simulated.faults.malformed_json_rate=0.2", "error_rate"),
        ("+server.simulated.faults.truncation_rate=0.3", "truncated_rate"),
        ("+server.simulated.faults.connection_reset_rate=0.2", None),
        ("+server.simulated.faults.http_5xx_rate=0.3", None),
    ],
)
def test_soft_faults_are_counted_never_scored_correct(tmp_path, fast_sim, fault, rate_key):
    overrides = [*fast_sim, fault, "client.retry_backoff_s=0.01", "client.max_error_rate=1.0"]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    ev = result.evals["mcq_sample"]
    lines = samples(cell_dir)
    bad = [s for s in lines if s["error_kind"] or s["finish_reason"] == "length"]
    assert all(not s["correct"] for s in bad)
    if rate_key:
        assert ev.rates[rate_key] > 0
    else:  # retried: 5xx and resets are retried until they succeed
        retried = [s for s in lines if s["attempts"] > 1]
        assert retried and all(s["error_kind"] is None for s in retried)


def test_latency_fault_slows_but_succeeds(tmp_path, fast_sim):
    result, _ = run(
        tmp_path, [*fast_sim, "server.simulated.latency_s=0.05", "evals.mcq_sample.repeats=1"]
    )
    assert result.status == "ok"
    assert result.evals["mcq_sample"].wall_time_s > 0.05


def test_the_servers_prefill_time_reaches_samples_and_the_eval_summary(tmp_path, fast_sim):
    # 0.4 s per 1,000 prompt tokens: the simulated server waits it and reports it in meta_info.
    rate = 0.4
    overrides = [*fast_sim, f"server.simulated.prefill_s_per_1k_tokens={rate}"]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    records = samples(cell_dir)
    assert len({r["prompt_tokens"] for r in records}) > 1  # prompts of several lengths
    for r in records:  # timestamps near 1.8e9 s carry about 2.4e-7 s of float resolution
        assert r["prefill_s"] == pytest.approx(rate * r["prompt_tokens"] / 1000, abs=1e-6)
    ev = result.evals["mcq_sample"]
    mean = sum(r["prefill_s"] for r in records) / len(records)
    assert ev.mean_prefill_s == pytest.approx(mean, rel=1e-9)
    assert ev.prefill_s_per_1k_prompt_tokens == pytest.approx(rate, rel=1e-4)
