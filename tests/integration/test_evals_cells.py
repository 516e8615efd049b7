"""Whole cells with the GSM8K, MMLU-Pro, MT-Bench and lm-eval evals against the simulated server.

Ground truth is the simulated server's ledger (one line per served completion): per eval, the
accept length, accept rate and per-position acceptance in result.json must equal the figures of
the ledger lines of that eval's requests, for both SGLang flavours and both response paths
(``return_meta_info`` / ``sglext`` non-streaming, the final ``sglext`` chunk when streaming).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evals.base import make_eval
from evals.mtbench import turn_id
from evals.responses import parse_chat_response, parse_chat_stream
from pipeline.cell.job import run_cell
from pipeline.results.result_types import AcceptBlock, CellResult
from pipeline.results.store import read_result
from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import compose_conf, processes_mentioning
from tests.helpers.sim import SPEC_ARGS, Sim, chat, sse

pytestmark = pytest.mark.integration
EVALS = ["gsm8k_sample", "mmlu_pro_sample", "mtbench_sample", "lm_eval_sample"]
DRAFTS = 3  # tiny_sim: 4 verified tokens = 3 drafts per step


def run(tmp_path: Path, overrides: list[str], name: str = "cell") -> tuple[CellResult, Path]:
    cell_dir = tmp_path / name
    conf = compose_conf(overrides)
    run_cell(conf, cell_dir)
    result = read_result(cell_dir)  # as the report reads it
    assert result is not None
    assert processes_mentioning(str(cell_dir)) == [], "a server process survived the cell"
    return result, cell_dir


def ledger(cell_dir: Path) -> list[dict[str, Any]]:
    lines = (cell_dir / SIM_LEDGER_FILE).read_text().splitlines()
    return [row for row in map(json.loads, lines) if row["endpoint"] == "chat"]


def samples(cell_dir: Path, name: str) -> list[dict[str, Any]]:
    lines = (cell_dir / "samples" / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def rows_by_eval(cell_dir: Path, overrides: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Served ledger lines per eval: by the question the server matched (MT-Bench: none)."""
    conf = compose_conf(overrides)
    owner = {}
    for name, ev_conf in conf.evals.items():
        for entry in make_eval(name, ev_conf).answer_key():
            owner[entry["question"].strip().splitlines()[0].strip()] = name
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in ledger(cell_dir):
        if row["fault"] is None:
            out[owner.get(row["question_key"], "mtbench_sample")].append(row)
    return out


def truth(rows: list[dict[str, Any]]) -> dict[str, Any]:
    completion = sum(r["completion_tokens"] for r in rows)
    verify = sum(r["verify_ct"] for r in rows)
    width = max(len(r["histogram"]) for r in rows)
    hist = np.zeros(width)
    for r in rows:
        hist[: len(r["histogram"])] += r["histogram"]
    at_least = np.cumsum(hist[::-1])[::-1]
    return {
        "n_with_spec": len(rows),
        "accept_length": completion / verify,
        "accept_rate": sum(r["num_correct_drafts"] for r in rows) / (verify * DRAFTS),
        "per_position_acceptance": [float(x / hist.sum()) for x in at_least[1:]],
        "accept_length_request_mean": float(
            np.mean([r["completion_tokens"] / r["verify_ct"] for r in rows])
        ),
        "server_equivalent_accept_length": (completion - len(rows)) / verify,
    }


def assert_matches(accept: AcceptBlock | None, rows: list[dict[str, Any]]) -> None:
    expected = truth(rows)
    assert accept is not None and accept.cross_check and accept.metrics_cross_check
    assert accept.status == "ok"
    assert accept.n_with_spec == expected["n_with_spec"]
    # Token-weighted figures: the same integers divided, so exactly equal.
    assert accept.accept_length == expected["accept_length"]
    assert accept.accept_rate == expected["accept_rate"]
    assert list(accept.per_position_acceptance) == pytest.approx(
        expected["per_position_acceptance"], rel=1e-12
    )
    assert accept.accept_length_request_mean == pytest.approx(
        expected["accept_length_request_mean"], rel=1e-12
    )
    # The server folds its totals in per 40-step decode log interval, as SGLang does: its figure
    # leaves out the last, unfinished interval (under 40 of its steps), hence not exact.
    assert accept.server_avg_spec_accept_length == pytest.approx(
        expected["server_equivalent_accept_length"], rel=2e-2
    )
    assert accept.cross_check.agrees is True
    assert accept.metrics_cross_check.agrees is True
    assert accept.accept_length_stderr > 0 and accept.accept_rate_stderr > 0
    assert len(accept.per_position_acceptance_stderr) == len(expected["per_position_acceptance"])


@pytest.mark.parametrize("stream", ["false", "true"])
@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_accept_statistics_equal_the_ledger_per_eval_and_per_cell(
    tmp_path: Path, fast_sim: list[str], version: str, stream: str
) -> None:
    overrides = [
        *fast_sim,
        f"evals=[{','.join(EVALS)}]",
        f"server.simulated.sglang_version={version}",
        f"client.stream={stream}",
    ]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    by_eval = rows_by_eval(cell_dir, overrides)
    assert set(by_eval) == set(EVALS)
    for name in EVALS:
        block = result.evals[name]
        assert_matches(block.accept, by_eval[name])
        assert block.n_samples == len(by_eval[name])
        if name != "mtbench_sample":  # graded: accuracy is the server's own correctness
            truth_accuracy = np.mean([bool(r["correct"]) for r in by_eval[name]])
            assert block.accuracy == pytest.approx(truth_accuracy, abs=1e-12)
    assert_matches(result.accept, [r for rows in by_eval.values() for r in rows])
    sources = {s["spec"]["source"] for n in EVALS for s in samples(cell_dir, n) if s["spec"]}
    # lm-eval never streams, so its statistics always come from the non-streaming body.
    assert sources == {"sglext"}
    assert not [w for w in result.warnings if "differs" in w]


def test_scores_and_counts_per_eval(tmp_path: Path, fast_sim: list[str]) -> None:
    result, _ = run(tmp_path, [*fast_sim, f"evals=[{','.join(EVALS)}]"])
    assert result.status == "ok", result.error
    gsm, mt, lm = (result.evals[n] for n in ("gsm8k_sample", "mtbench_sample", "lm_eval_sample"))
    assert gsm.graded is True and gsm.counts["correct"] + gsm.counts["wrong"] == 64
    assert mt.graded is False and mt.accuracy is None
    assert mt.counts == {"answered": 40, "truncated": 0, "error": 0}
    assert lm.lm_eval["primary"]["mtp_arith_sample"]["value"] == lm.accuracy
    assert gsm.sampling == {
        "temperature": 0.0,
        "top_p": None,
        "top_k": None,
        "min_p": None,
        "max_tokens": 2048,
        "seed": None,
        "source": "model",
    }


def test_mtbench_second_turn_carries_the_first_answer(tmp_path: Path, fast_sim: list[str]) -> None:
    result, cell_dir = run(tmp_path, [*fast_sim, "evals=[mtbench_sample]"])
    assert result.status == "ok", result.error
    lines = samples(cell_dir, "mtbench_sample")
    first = {s["meta"]["conversation"]: s for s in lines if s["meta"]["turn"] == 1}
    second = [s for s in lines if s["meta"]["turn"] == 2]
    assert len(first) == len(second) == 20
    for s in second:
        assert s["question_id"] == turn_id(s["meta"]["conversation"], 2)
        # The simulated server counts one token per word of every message: the history with
        # the model's first answer makes the second prompt longer than that answer.
        answer = first[s["meta"]["conversation"]]
        assert s["prompt_tokens"] > answer["completion_tokens"] + answer["prompt_tokens"]


def test_truncated_and_errored_requests_are_counted_per_eval(
    tmp_path: Path, fast_sim: list[str]
) -> None:
    overrides = [
        *fast_sim,
        f"evals=[{','.join(EVALS)}]",
        "model.sampling.max_tokens=150",
        "+server.simulated.faults.malformed_json_rate=0.2",
        "client.max_error_rate=1.0",
    ]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "ok", result.error
    errors_seen = 0
    for name in EVALS:
        block, lines = result.evals[name], samples(cell_dir, name)
        truncated = [s for s in lines if s["finish_reason"] == "length" and not s["error_kind"]]
        errored = [s for s in lines if s["error_kind"]]
        assert block.counts["truncated"] == len(truncated) > 0, name
        assert block.counts["error"] == len(errored), name
        assert not any(s["correct"] for s in truncated + errored), name
        assert block.n_samples == len(lines)
        errors_seen += len(errored)
    mt_lines = samples(cell_dir, "mtbench_sample")
    blocked = [s for s in mt_lines if s["error_kind"] == "previous_turn_failed"]
    failed_first = [s for s in mt_lines if s["error_kind"] and s["meta"]["turn"] == 1]
    assert len(blocked) == len(failed_first) > 0  # never dropped: counted as errors
    assert len(mt_lines) == 40 and errors_seen > 0
    # lm-eval retries a malformed body itself (its own attempts), so its answers all arrive.
    assert result.evals["lm_eval_sample"].counts["error"] == 0


def test_non_speculative_cell_says_so_for_every_eval(tmp_path: Path, fast_sim: list[str]) -> None:
    spec_off = [
        f"model.speculative.{k}=null"
        for k in ("algorithm", "num_steps", "eagle_topk", "num_draft_tokens")
    ]
    result, _ = run(tmp_path, [*fast_sim, f"evals=[{','.join(EVALS)}]", *spec_off])
    assert result.status == "ok", result.error
    assert result.accept.status == "not_speculative"
    assert {e.accept.status if e.accept else None for e in result.evals.values()} == {
        "not_speculative"
    }


@pytest.mark.parametrize(
    ("eval_name", "row", "fragments"),
    [
        ("gsm8k_sample", {"question": "Q", "answer": "no number"}, ["row 2", "'answer'"]),
        (
            "mmlu_sample",
            {"question": "Q", "choices": ["a", "b"], "answer": 5},
            ["row 2", "'answer'"],
        ),
        ("mtbench_sample", {"prompt": "not a list"}, ["row 2", "'prompt'"]),
    ],
)
def test_unparseable_row_stops_the_cell_with_file_row_and_field(
    tmp_path: Path, fast_sim: list[str], eval_name: str, row: dict, fragments: list[str]
) -> None:
    good = {
        "gsm8k_sample": {"question": "Q0", "answer": "#### 1"},
        "mmlu_sample": {"question": "Q0", "choices": ["a", "b"], "answer": 0},
        "mtbench_sample": {"prompt": ["hi"]},
    }[eval_name]
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")
    overrides = [
        *fast_sim,
        f"evals=[{eval_name}]",
        f"evals.{eval_name}.dataset.source=file",
        f"evals.{eval_name}.dataset.path={path}",
    ]
    result, cell_dir = run(tmp_path, overrides)
    assert result.status == "failed"
    message = result.error.message
    assert str(path) in message and all(f in message for f in fragments), message
    assert not (cell_dir / "server.log").exists()  # stopped before a server started


def test_multi_turn_resume_rebuilds_second_turns_from_kept_answers(
    tmp_path: Path, fast_sim: list[str]
) -> None:
    base = [*fast_sim, "evals=[mtbench_sample]"]
    first, cell_dir = run(tmp_path, [*base, "+server.simulated.faults.crash_after_requests=25"])
    assert first.status == "failed" and first.error.kind == "server_died"
    kept = [s for s in samples(cell_dir, "mtbench_sample") if not s["error_kind"]]
    assert 20 <= len(kept) < 40
    again, _ = run(tmp_path, base)
    assert again.status == "ok", again.error
    block = again.evals["mtbench_sample"]
    assert block.resumed_samples == len(kept)
    assert block.counts == {"answered": 40, "truncated": 0, "error": 0}
    lines = {(s["question_id"], s["repeat"]): s for s in samples(cell_dir, "mtbench_sample")}
    assert len(lines) == 40


@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_n_greater_than_one_lists_match_the_ledger(tmp_path: Path, version: str) -> None:
    sim = Sim(tmp_path / version, [*SPEC_ARGS, "--enable-metrics"], {"sglang_version": version}, {})
    try:
        sim.wait_ready()
        body = chat(
            sim.url,
            "Question 1: which option is number 1?",
            n=3,
            return_meta_info=True,
            return_spec_tokens_details=True,
        )
        assert isinstance(body["sglext"]["spec_tokens_details"], list)
        served = sim.ledger()
        for i in range(3):
            for source, parsed in (
                ("sglext", parse_chat_response(body, i)),
                ("meta_info", parse_chat_response({**body, "sglext": None}, i)),
            ):
                spec = parsed.spec
                assert spec is not None and spec.source == source
                assert served[i]["index"] == i
                assert (spec.verify_ct, spec.num_correct_drafts, list(spec.histogram)) == (
                    served[i]["verify_ct"],
                    served[i]["num_correct_drafts"],
                    served[i]["histogram"],
                )
                assert spec.completion_tokens == served[i]["completion_tokens"]
    finally:
        sim.kill_group()


def test_n_greater_than_one_stream_completion_tokens_per_choice(tmp_path: Path) -> None:
    sim = Sim(tmp_path / "s", [*SPEC_ARGS, "--enable-metrics"], {}, {})
    try:
        sim.wait_ready()
        chunks = sse(
            sim.url + "/v1/chat/completions",
            {
                "model": "m",
                "messages": [{"role": "user", "content": "hello"}],
                "n": 2,
                "stream": True,
                "stream_options": {"include_usage": True},
                "return_spec_tokens_details": True,
            },
        )
        served = sim.ledger()
        for i in range(2):
            spec = parse_chat_stream(chunks, i).spec
            assert spec is not None and spec.verify_ct == served[i]["verify_ct"]
            assert spec.completion_tokens == served[i]["completion_tokens"]
    finally:
        sim.kill_group()


def test_the_trained_models_evals_run_as_a_cell(tmp_path: Path, fast_sim: list[str]) -> None:
    # model=synth_llama and its three bundled evals through a whole cell.
    synth = ["synth_arith", "synth_mcq", "synth_retrieval"]
    result, cell_dir = run(tmp_path, [*fast_sim, "model=synth_llama", f"evals=[{','.join(synth)}]"])
    assert result.status == "ok", result.error
    counts = {n: result.evals[n].counts for n in synth}
    assert [c["correct"] + c["wrong"] for c in counts.values()] == [200, 180, 48]
    assert all(result.evals[n].graded for n in synth)
    lengths = [r["prompt_tokens"] for r in samples(cell_dir, "synth_retrieval")]
    assert len(lengths) == 48 and max(lengths) > 3 * min(lengths)  # 4k to 16.9k tokens
