"""The typed ``result.json`` contract: every released result reads, and writes back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.results.cell_paths import (
    cell_name,
    job_order,
    result_path,
    samples_path,
    server_log_path,
)
from pipeline.results.result_types import SCHEMA_VERSION, CellResult, Resumed
from pipeline.results.store import read_result, write_result

OLD_SWEEP = Path(__file__).parents[1] / "data" / "sweep-schema1-f95dc87"
OLD_RESULTS = sorted(OLD_SWEEP.glob("*/result.json"))


def test_the_fixture_holds_ok_and_unsupported_results():
    statuses = sorted(json.loads(p.read_text())["status"] for p in OLD_RESULTS)
    assert statuses == ["ok", "ok", "unsupported"]


@pytest.mark.parametrize("path", OLD_RESULTS, ids=lambda p: p.parent.name)
def test_an_old_result_reads_and_writes_back_byte_identical(tmp_path, path):
    result = read_result(path.parent)
    assert result is not None and result.schema_version == SCHEMA_VERSION
    write_result(tmp_path, result.to_json())
    assert result_path(tmp_path).read_bytes() == path.read_bytes()


def test_typed_fields_of_an_old_ok_result():
    result = read_result(OLD_SWEEP / "0_tiny-sim_fmha_v2_auto_exact")
    assert result is not None
    assert result.status == "ok" and result.simulated and result.error is None
    assert result.cell.name == "tiny-sim/fmha_v2/auto/sp=None/sd=None"
    assert (result.cell.variant, result.cell.kv_dtype) == ("fmha_v2", "auto")
    assert result.cell.speculative["algorithm"] == "EAGLE"
    assert result.cell.gpu_name == "NVIDIA H200 (simulated)"
    summary = result.evals["mcq_sample"]
    assert summary.accuracy == pytest.approx(0.7) and summary.ci95[0] is not None
    assert (summary.mean_prefill_s, summary.prefill_s_per_1k_prompt_tokens) == (None, None)
    assert result.accept.status == "ok"
    assert result.accept.accept_length == pytest.approx(2.5797, 1e-3)
    assert result.ended_at and result.started_at and result.misconfigured() == []


def test_an_unsupported_result_keeps_its_reasons():
    result = read_result(OLD_SWEEP / "2_tiny-sim_trtllm_mha_auto_exact")
    assert result is not None and result.error is not None
    assert result.status == "unsupported" and result.error.kind == "unsupported"
    assert result.error.reasons and "speculative" in result.error.first_line()


def test_an_early_result_without_the_newer_blocks_reads_as_empty_not_none():
    early = {"status": "ok", "cell": {"model": "m"}, "timing": {"finished_at": "2026-01-01"}}
    result = CellResult.from_json(early)
    assert result.cell.variant is None and result.cell.gpu_name is None
    assert result.ended_at == "2026-01-01" and result.evals == {} and result.warnings == ()
    assert result.unverified_lines() == [] and result.misconfigured() == []
    assert result.accept.accept_length is None and result.provenance.git_sha is None
    assert result.to_json() == early


def test_a_newer_schema_is_refused_with_the_fix():
    with pytest.raises(ValueError, match=r"schema_version 2 is newer.*update mtp-eval"):
        CellResult.from_json({"schema_version": 2, "status": "ok"})


@pytest.mark.parametrize(
    ("mismatches", "label_runs", "runs", "expected"),
    [
        ([], {}, {}, []),
        ([{"key": "kv_cache_dtype", "requested": "fp8", "observed": "auto"}], {}, {},
         ["kv_cache_dtype: asked 'fp8', server runs 'auto'"]),
        ([{"key": "x", "requested": 1, "observed": 2, "verifiable": False}], {}, {}, []),
        ([], {"prefill": "fmha_v2"}, {"prefill": "fa3"},
         ["runs.prefill: asked 'fmha_v2', server runs 'fa3'"]),
        ([], {"prefill": "default"}, {"prefill": "fa3"}, []),
        ([{"key": "attention_backend", "requested": "a", "observed": "b"}],
         {"prefill": "a"}, {"prefill": "b"}, ["attention_backend: asked 'a', server runs 'b'"]),
    ],
)  # fmt: skip
def test_misconfigured(mismatches, label_runs, runs, expected):
    data = {"mismatches": mismatches, "label_runs": label_runs, "runs": runs}
    assert CellResult.from_json(data).misconfigured() == expected


def test_unverified_lines_and_skips():
    data = {"unverified": [{"key": "k", "requested": 1}], "resumed": [{"at": "b", "action": "x"}]}
    result = CellResult.from_json(data)
    assert result.unverified_lines() == ["k=1"]
    assert not result.skipped_since("a")
    again = CellResult.from_json(result.with_resumed(Resumed("c", "skipped: already ok")))
    assert again.skipped_since("b") and not again.skipped_since("d")
    assert not again.skipped_since(None)
    assert again.to_json()["resumed"][0] == {"at": "b", "action": "x"}


def test_paths_and_names(tmp_path):
    assert samples_path(tmp_path, "gpqa") == tmp_path / "samples" / "gpqa.jsonl"
    assert server_log_path(tmp_path) == tmp_path / "server.log"
    assert cell_name("m", "fa3", "auto", None, 0.5) == "m/fa3/auto/sp=None/sd=0.5"
    folders = [tmp_path / n for n in ("10_b", "2_a", "x")]
    assert sorted(folders, key=job_order) == [tmp_path / "2_a", tmp_path / "10_b", tmp_path / "x"]


def test_the_report_reads_a_damaged_or_newer_result_as_a_failed_cell(tmp_path):
    from pipeline.report.load.cells import load_cells

    for name, text in [("a", "{oops"), ("b", '{"schema_version": 99, "status": "ok"}')]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(text)
    cells, _, _ = load_cells([tmp_path])
    by_name = {c.folder.name: c for c in cells if c.folder}
    assert by_name["a"].status == "failed" and "a/result.json: not valid JSON" in by_name["a"].note
    assert by_name["b"].status == "failed" and "schema_version 99 is newer" in by_name["b"].note
    assert by_name["b"].name.startswith("unknown/unknown/unknown/")  # not "None/None/None"


def test_the_draft_writes_errors_as_the_cell_always_did():
    from pipeline.results.result_draft import ResultDraft
    from pipeline.results.result_types import ResultError

    draft = ResultDraft({"status": "failed", "error": None})
    draft.set_error("unsupported", ResultError("unsupported", "m", "", ({"outcome": "reject"},)))
    assert list(draft.to_json()["error"]) == ["kind", "message", "reasons", "log_tail"]
    draft.set_error("failed", ResultError("server_crash", "secret here", "secret there"))
    draft.redact_error(lambda text: text.replace("secret", "***"))
    assert draft.to_json() == {
        "status": "failed",
        "error": {"kind": "server_crash", "message": "*** here", "log_tail": "*** there"},
    }
    assert draft.error == ResultError("server_crash", "*** here", "*** there")


def test_the_draft_is_read_typed_as_its_written_file_would_be(tmp_path):
    from pipeline.results.result_draft import ResultDraft
    from pipeline.results.store import read_result, write_result

    cell = {"name": "m/fa3/auto/sp=None/sd=None", "model": "m", "variant": "fa3",
            "kv_dtype": "auto", "skip_softmax": {"prefill": 0.5, "decode": None}}  # fmt: skip
    draft = ResultDraft.start(cell, "h", {}, simulated=True, slurm=None, started_at="t0")
    draft.set_platform({"name": "H200"}, "0.5.23")
    draft.status = "ok"
    write_result(tmp_path, draft.to_json())
    view, on_disk = draft.as_result(), read_result(tmp_path)
    assert on_disk is not None and view == on_disk
    assert (view.cell.skip_prefill, view.cell.gpu_name, view.status) == (0.5, "H200", "ok")


def test_an_eval_summary_typed_and_its_sequential_block_checked():
    from pipeline.results.result_types import EvalSummary

    seq = {"role": "candidate", "max_repeats": 8, "repeats_per_round": 2, "look": 2,
           "decision": "GO", "alpha": 0.05}  # fmt: skip
    summary = EvalSummary.from_json({"accuracy": 0.5, "graded": False, "sequential": seq})
    assert not summary.graded and summary.accept is None and summary.ci95 == (None, None)
    checked = summary.checked_sequential()
    assert checked is not None and checked == summary.sequential
    assert checked.look == 2 and dict(checked.design) == {
        "max_repeats": 8,
        "repeats_per_round": 2,
        "alpha": 0.05,
    }
    assert EvalSummary.from_json({}).checked_sequential() is None
    with pytest.raises(ValueError, match="must be a mapping"):
        EvalSummary.from_json({"sequential": [1]}).checked_sequential()
    with pytest.raises(ValueError, match="lacks repeats_per_round, look"):
        lacking = {"role": "candidate", "max_repeats": 4}
        EvalSummary.from_json({"sequential": lacking}).checked_sequential()


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ({"mean_prefill_s": 0.05, "prefill_s_per_1k_prompt_tokens": 0.02}, (0.05, 0.02)),
        ({"mean_prefill_s": 1, "prefill_s_per_1k_prompt_tokens": None}, (1.0, None)),
        ({}, (None, None)),  # written before prefill times were recorded
        ({"mean_prefill_s": "0.05", "prefill_s_per_1k_prompt_tokens": True}, (None, None)),
    ],
)
def test_an_eval_summary_reads_its_prefill_time(written, expected):
    from pipeline.results.result_types import EvalSummary

    summary = EvalSummary.from_json({"accuracy": 0.5, **written})
    assert (summary.mean_prefill_s, summary.prefill_s_per_1k_prompt_tokens) == expected
