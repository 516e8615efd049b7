"""Replies that did not finish are never graded answers; retries are counted and shown.

Through real processes: a simulated server, the project's fault proxy in front of it
(``tests/helpers/fault_proxy.py``) and the installed ``mtp-eval`` / ``mtp-eval-report``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script, external_sim, result_of
from tests.helpers.proxied import FAST, external, fault_proxy, mtp_eval, proxy_faults, read_json

pytestmark = pytest.mark.integration
EVAL = "mcq_sample"


def figures(cell: Path) -> tuple:
    block = result_of(cell).evals[EVAL]
    accept = block.accept
    assert accept is not None
    # Sums over requests in the order they finished: equal up to rounding.
    floats = [accept.accept_length, accept.accept_rate, accept.accept_length_request_mean]
    return block.accuracy, dict(block.counts), accept.n_with_spec, [round(x, 9) for x in floats]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_cut_replies_are_retried_and_the_figures_stay_exact(tmp_path, stream):
    with external_sim(tmp_path / "a", FAST, []) as url:
        direct = mtp_eval(*external(url, f"client.stream={stream}"), f"hydra.run.dir={tmp_path}/d")
        assert direct.returncode == 0, direct.stdout + direct.stderr
        rules = ["--cut-every", "9", "--cut-after", "3"]
        with fault_proxy(tmp_path / "p", [url], *rules) as via:
            cut = mtp_eval(*external(via, f"client.stream={stream}"), f"hydra.run.dir={tmp_path}/c")
    assert cut.returncode == 0, cut.stdout + cut.stderr
    cuts = len(proxy_faults(tmp_path / "p"))
    assert cuts >= 12  # 116 requests and their retries, 1 in 9 cut
    assert figures(tmp_path / "c") == figures(tmp_path / "d")
    block = result_of(tmp_path / "c").evals[EVAL]
    assert block.data["retries"] == {"unfinished": cuts}
    assert block.rates["error_rate"] == 0.0
    assert f"{cuts} retried (unfinished {cuts}), 0 errored" in cut.stdout  # the console says it


@pytest.mark.parametrize(
    "cut_after",
    ['"logprobs": nu', '"spec_accept_rate": 0.'],
    ids=["inside-null", "after-decimal-point"],
)
def test_a_json_reply_cut_inside_a_literal_or_a_number_is_retried_not_an_error(tmp_path, cut_after):
    """Half of a body lands wherever the reply's length puts it; here it lands there each time.

    A JSON parser stops at the start of a ``nu`` it cannot read, not at the end of the bytes:
    such a cut was taken for a malformed body, never retried, and counted an error (the
    ``[json]`` test above failed so in a CI run, where a cut happened to land there).
    """
    with external_sim(tmp_path / "a", FAST, []) as url:
        rules = ["--cut-every", "9", "--cut-json-after", cut_after]
        with fault_proxy(tmp_path / "p", [url], *rules) as via:
            cut = mtp_eval(*external(via, "client.stream=false"), f"hydra.run.dir={tmp_path}/c")
    assert cut.returncode == 0, cut.stdout + cut.stderr
    cuts = len(proxy_faults(tmp_path / "p"))
    assert cuts >= 12
    block = result_of(tmp_path / "c").evals[EVAL]
    assert block.data["retries"] == {"unfinished": cuts}, block.data.get("error_kinds")
    assert block.counts.get("error", 0) == 0 and block.rates["error_rate"] == 0.0
    assert f"{cuts} retried (unfinished {cuts}), 0 errored" in cut.stdout


def test_unretried_cuts_are_errors_beside_the_verdict_never_a_no_go(tmp_path):
    """Two servers of equal accuracy, cuts on the candidate's side, no retries: errors shown."""
    no_retry = ["client.stream=true", "client.max_retries=0", "client.max_error_rate=0.2"]
    with (
        external_sim(tmp_path / "a", FAST, []) as base_url,
        external_sim(tmp_path / "b", [*FAST, "backend=flashinfer"], []) as cand_url,
        fault_proxy(tmp_path / "p", [cand_url], "--cut-every", "9", "--cut-after", "3") as via,
    ):
        base = mtp_eval(*external(base_url, *no_retry), f"hydra.run.dir={tmp_path}/m/fa3")
        cand = mtp_eval(
            *external(via, *no_retry, "backend=flashinfer"), f"hydra.run.dir={tmp_path}/m/fi"
        )
    assert base.returncode == 0 and cand.returncode == 0, cand.stdout + cand.stderr
    cuts = len(proxy_faults(tmp_path / "p"))
    block = result_of(tmp_path / "m" / "fi").evals[EVAL]
    assert block.data["error_kinds"] == {"unfinished": cuts}
    assert block.counts["error"] == cuts and block.data["n_answered"] == 116 - cuts
    assert "no_answer" not in block.data["error_kinds"]
    assert (
        block.counts["no_answer"]
        == result_of(tmp_path / "m" / "fa3").evals[EVAL].counts["no_answer"]
    )  # the cut replies are not graded "no answer"
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(tmp_path / "m"), "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    summary = read_json(tmp_path / "r" / "summary.json")
    cell = next(c for c in summary["cells"] if c["variant"] == "flashinfer")
    check = next(k for k in cell["checks"] if k["kind"] == "accuracy_vs_baseline")
    assert check["verdict"] != "NO-GO", check
    assert check["numbers"]["cand_error"] == pytest.approx(cuts / 116)
    shown = (tmp_path / "r" / "report.md").read_text()
    assert f"errors 0.0% / {100 * cuts / 116:.1f}%" in shown, report.stdout


def test_http_500s_are_counted_shown_and_warned_about(tmp_path):
    with (
        external_sim(tmp_path / "a", FAST, []) as url,
        fault_proxy(tmp_path / "p", [url], "--http-5xx-every", "4") as via,
    ):
        run = mtp_eval(*external(via), f"hydra.run.dir={tmp_path}/c")
    assert run.returncode == 0, run.stdout + run.stderr
    n = len(proxy_faults(tmp_path / "p"))
    assert n >= 29
    assert result_of(tmp_path / "c").evals[EVAL].retries == {"http_5xx": n}
    assert f"eval {EVAL}: {n} retried (http_5xx {n}), 0 errored of 116 requests" in run.stdout
    assert f"warning: eval {EVAL}: {n} retries over 116 requests" in run.stdout
    subprocess.run(
        [console_script("mtp-eval-report"), str(tmp_path / "c"), "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    warnings = read_json(tmp_path / "r" / "summary.json")["warnings"]
    assert any(f"{n} retries over 116 requests (http_5xx {n})" in w for w in warnings), warnings
