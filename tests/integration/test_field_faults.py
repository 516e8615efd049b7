"""Faults servers show in the field, each through the installed ``mtp-eval`` on the simulated
server (real sockets, its ``faults`` settings) and ``mtp-eval-report`` on what it wrote.

Aborted replies (SGLang's finish reason ``abort``) are never graded; HTTP 429 waits Retry-After;
an error object inside a stream and a reply that is not UTF-8 get one retry; replies without
accept statistics are counted, warned and bounded; the server-side figures say which window and
which weighting of DP ranks they stand for.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pipeline.serving.server_command import SIM_LEDGER_FILE
from tests.helpers.cells import result_of, run_script
from tests.helpers.proxied import FAST, mtp_eval, read_json

pytestmark = pytest.mark.integration
EVAL = "mcq_sample"
FAULT = "+server.simulated.faults."


# Ready after 0.05 s, not FAST's 0.2: no test here is about the server's start-up.
START = "server.simulated.startup_delay_s=0.05"


def cell(folder: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    """One ``mtp-eval`` cell on the simulated server, into ``folder``."""
    return mtp_eval(*FAST, START, *overrides, f"hydra.run.dir={folder}")


def report(sweep: Path, out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    """``mtp-eval-report`` over ``sweep``: the process and its ``summary.json``.

    ``--no-html``: the tests read summary.json and report.md, which the page does not change.
    """
    argv = [str(sweep), "--out", str(out), "--no-html", *args]
    done = run_script("mtp-eval-report", *argv, timeout=120)
    return done, read_json(out / "summary.json")


def check_of(summary: dict[str, Any], variant: str, kind: str) -> dict[str, Any]:
    found = next(c for c in summary["cells"] if c["variant"] == variant)
    return next(k for k in found["checks"] if k["kind"] == kind)


def samples(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "samples" / f"{EVAL}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def ledger_faults(folder: Path, fault: str) -> int:
    rows = (folder / SIM_LEDGER_FILE).read_text().splitlines()
    return sum(1 for line in rows if json.loads(line)["fault"] == fault)


# 1. An aborted reply is never an answer.
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_two_servers_of_equal_answers_with_1_in_9_aborts_give_go(tmp_path, stream):
    common = ["evals.mcq_sample.repeats=4", f"client.stream={stream}"]
    base = cell(tmp_path / "m" / "fa3", *common)
    cand = cell(tmp_path / "m" / "fi", *common, "backend=flashinfer", f"{FAULT}abort_rate=0.111")
    assert base.returncode == 0 and cand.returncode == 0, cand.stdout + cand.stderr
    aborted = ledger_faults(tmp_path / "m" / "fi", "abort")
    assert aborted >= 15  # 232 requests and their retries, 1 in 9 aborted
    block = result_of(tmp_path / "m" / "fi").evals[EVAL]
    assert block.data["retries"] == {"aborted": aborted}  # every abort retried, none graded
    assert block.rates["error_rate"] == 0.0
    assert block.accuracy == result_of(tmp_path / "m" / "fa3").evals[EVAL].accuracy
    assert f"{aborted} retried (aborted {aborted}), 0 errored" in cand.stdout
    done, summary = report(tmp_path / "m", tmp_path / "r")
    check = check_of(summary, "flashinfer", "accuracy_vs_baseline")
    assert check["verdict"] == "GO", check["message"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert check["numbers"]["cand_aborted"] == aborted
    shown = (tmp_path / "r" / "report.md").read_text()
    assert f"aborted 0 / {aborted} replies (retried or counted as errors, never graded)" in shown


def test_aborts_retries_do_not_cure_are_errors_of_their_own_kind(tmp_path):
    no_retry = ["client.max_retries=0", "client.max_error_rate=0.3"]
    done = cell(tmp_path / "c", *no_retry, f"{FAULT}abort_rate=0.111")
    assert done.returncode == 0, done.stdout + done.stderr
    aborted = ledger_faults(tmp_path / "c", "abort")
    block = result_of(tmp_path / "c").evals[EVAL]
    assert aborted >= 6 and block.data["error_kinds"] == {"aborted": aborted}
    assert block.counts["error"] == aborted and block.data["n_answered"] == 116 - aborted
    assert "the server aborted the reply: Aborted" in block.data["error_examples"]["aborted"]
    lost = [r for r in samples(tmp_path / "c") if r["error_kind"] == "aborted"]
    assert all(r["response"] is None and r["correct"] is False for r in lost)
    assert f"0 retried, {aborted} errored (aborted {aborted})" in done.stdout


@pytest.mark.parametrize(
    ("status", "stream", "retried", "errored"),
    [
        (503, False, "http_5xx", None),  # SGLang answers HTTP 503: retried until answered
        (503, True, "stream_error", "stream_error"),  # the error object in the stream: once
        (400, False, None, "http_4xx"),  # HTTP 400: it would abort again, not retried
    ],
    ids=["503-json", "503-stream", "400-json"],
)
def test_an_abort_with_a_status_is_the_error_sglang_answers_with(
    tmp_path, status, stream, retried, errored
):
    faults = [f"{FAULT}abort_rate=0.111", f"{FAULT}abort_status={status}"]
    done = cell(tmp_path / "c", *faults, f"client.stream={stream}", "client.max_error_rate=0.3")
    assert done.returncode == 0, done.stdout + done.stderr
    aborted = ledger_faults(tmp_path / "c", "abort")
    block = result_of(tmp_path / "c").evals[EVAL]
    kinds = {**block.data["retries"], **block.data["error_kinds"]}
    assert aborted >= 6 and set(kinds) == {k for k in (retried, errored) if k}, kinds
    if retried and not errored:
        assert block.data["retries"] == {retried: aborted} and block.counts["error"] == 0
    if errored and not retried:
        assert block.data["error_kinds"] == {errored: aborted}
        assert "exceeds the maximum allowed length" in block.data["error_examples"][errored]


# 6. Field faults: 429, error objects in streams, invalid UTF-8.
@pytest.mark.parametrize(
    ("retry_after", "least_wait"),
    [("1", 1.0), ("Thu, 01 Jan 2026 00:00:00 GMT", 0.0)],  # seconds, or a date (past: now)
    ids=["seconds", "http-date"],
)
def test_429_is_waited_out_as_retry_after_says_and_answered(tmp_path, retry_after, least_wait):
    faults = [f"{FAULT}rate_limit_rate=0.2", f"{FAULT}retry_after='{retry_after}'"]
    done = cell(tmp_path / "c", *faults)
    assert done.returncode == 0, done.stdout + done.stderr
    block = result_of(tmp_path / "c").evals[EVAL]
    limited = block.data["retries"].get("rate_limited", 0)
    assert limited >= 15 and block.data["retries"] == {"rate_limited": limited}
    assert block.rates["error_rate"] == 0.0 and block.data["n_answered"] == 116
    for record in samples(tmp_path / "c"):
        waits = record["retried"].count("rate_limited")
        assert record["latency_s"] >= least_wait * waits


def test_a_retry_after_beyond_the_budget_is_rate_limited_at_once(tmp_path):
    faults = [f"{FAULT}rate_limit_rate=0.2", f"{FAULT}retry_after='30'"]
    budget = ["client.rate_limit_wait_s=2", "client.max_error_rate=0.5"]
    done = cell(tmp_path / "c", *faults, *budget)
    assert done.returncode == 0, done.stdout + done.stderr
    block = result_of(tmp_path / "c").evals[EVAL]
    limited = block.data["error_kinds"]["rate_limited"]
    assert limited >= 15 and block.data["error_kinds"] == {"rate_limited": limited}
    assert "HTTP 429" in block.data["error_examples"]["rate_limited"]
    assert "Retry-After '30'" in block.data["error_examples"]["rate_limited"]
    assert all(r["latency_s"] < 10 for r in samples(tmp_path / "c"))  # no 30 s waits


@pytest.mark.parametrize(
    ("fault", "stream"),
    [("stream_error", True), ("invalid_utf8", False), ("invalid_utf8", True)],
    ids=["stream-error", "utf8-json", "utf8-stream"],
)
def test_an_error_in_a_stream_or_invalid_utf8_gets_one_retry(tmp_path, fault, stream):
    done = cell(
        tmp_path / "c", f"{FAULT}{fault}_rate=0.2", f"client.stream={stream}",
        "client.max_error_rate=0.2",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    block = result_of(tmp_path / "c").evals[EVAL]
    hit = ledger_faults(tmp_path / "c", fault)
    retried, errored = block.data["retries"], block.data["error_kinds"]
    assert retried == {fault: retried[fault]} and retried[fault] >= 15
    assert set(errored) <= {fault}  # hit twice in a row: an error of its kind
    assert retried[fault] + errored.get(fault, 0) == hit
    for record in samples(tmp_path / "c"):
        assert record["retried"].count(fault) <= 1  # one retry, never two
        if record["error_kind"] == fault:
            assert record["retried"] == [fault] and record["response"] is None


def test_replies_without_meta_info_are_counted_and_fail_the_accept_check_beyond_the_bound(
    tmp_path,
):
    done = cell(tmp_path / "m" / "fa3", f"{FAULT}missing_meta_info_rate=0.15")
    assert done.returncode == 0, done.stdout + done.stderr
    lacking = ledger_faults(tmp_path / "m" / "fa3", "missing_meta_info")
    accept = result_of(tmp_path / "m" / "fa3").evals[EVAL].accept
    assert lacking >= 8 and accept.without_statistics == lacking
    assert (accept.n_requests, accept.n_with_spec) == (116, 116 - lacking)
    said = f"{lacking} of 116 answered requests carried no accept statistics"
    assert said in done.stdout + done.stderr
    failed, summary = report(tmp_path / "m", tmp_path / "r")
    check = check_of(summary, "fa3", "accept_metric")
    assert check["verdict"] == "FAIL", check["message"]
    assert f"{lacking} of 116 answered requests without accept statistics" in check["message"]
    assert "beyond the 5% accept_max_unmeasured allows" in check["message"]
    assert failed.returncode != 0
    loose = tmp_path / "loose.yaml"
    loose.write_text("baseline: fa3\ndefaults:\n  accept_max_unmeasured: 0.2\n")
    _, summary = report(tmp_path / "m", tmp_path / "r2", "--tolerance", str(loose))
    check = check_of(summary, "fa3", "accept_metric")
    assert check["verdict"] == "PASS" and "without accept statistics" in check["message"]


def test_after_a_resume_the_server_figures_name_the_resumed_window(tmp_path):
    folder = tmp_path / "m" / "fa3"
    first = cell(folder, f"{FAULT}crash_after_requests=40")
    assert first.returncode != 0
    again = cell(folder)
    assert again.returncode == 0, again.stdout + again.stderr
    block = result_of(folder).evals[EVAL]
    kept = block.data["resumed_samples"]
    assert kept >= 30
    window = block.accept.window
    assert dict(window) == {"covers": "resumed", "requests": 116 - kept, "of": 116}
    assert block.accept.traffic is not None and block.accept.traffic.sent == 116 - kept
    _, summary = report(tmp_path / "m", tmp_path / "r")
    message = check_of(summary, "fa3", "accept_metric")["message"]
    assert f"the resumed window, {116 - kept} of 116 requests" in message


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_dp2_server_accept_length_says_how_its_ranks_were_weighted(tmp_path, stream):
    folder = tmp_path / "m" / "fa3"
    done = cell(folder, "server.extra_args=[--dp-size,2]", f"client.stream={stream}")
    assert done.returncode == 0, done.stdout + done.stderr
    accept = result_of(folder).evals[EVAL].accept
    weighting = accept.data["server_accept_weighting"]
    _, summary = report(tmp_path / "m", tmp_path / "r")
    message = check_of(summary, "fa3", "accept_metric")["message"]
    if not stream:  # each reply's meta_info.dp_rank weights its rank's figure
        assert weighting == "verify steps of the window's requests per meta_info.dp_rank"
        assert "unweighted" not in message and "unweighted" not in done.stdout
        return
    assert weighting.startswith("unweighted mean of 2 DP ranks")
    assert "spec_verify_calls_total carries no dp_rank label" in weighting
    assert f"server accept length: {weighting}" in message
    assert "the server-level accept length is the unweighted mean" in done.stdout + done.stderr
