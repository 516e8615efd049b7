"""A server that changes between evals fails the cell (MISCONFIGURED under on_mismatch=warn).

Two simulated servers behind the project's fault proxy, which switches upstream after the first
eval's requests: as a server swapped behind one address, or restarted with the same flags.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers.cells import console_script, external_sim, result_of
from tests.helpers.proxied import FAST, external, fault_proxy, mtp_eval, read_json

pytestmark = pytest.mark.integration
EVALS = "evals=[mcq_sample,gsm8k_sample]"
FIRST_EVAL_REQUESTS = 58 * 2


@pytest.mark.parametrize("second", ["flashinfer", "fa3"], ids=["other-backend", "restarted"])
@pytest.mark.parametrize("policy", ["fail", "warn"])
def test_a_server_swapped_between_evals_fails_the_cell(tmp_path, second, policy):
    switch = ["--switch-after", str(FIRST_EVAL_REQUESTS)]
    with (
        external_sim(tmp_path / "a", [*FAST, EVALS], []) as first,
        external_sim(tmp_path / "b", [*FAST, EVALS, f"backend={second}"], []) as then,
        fault_proxy(tmp_path / "p", [first, then], *switch) as via,
    ):
        cell = tmp_path / "m" / "cell"
        run = mtp_eval(
            *external(via, EVALS, f"server.on_mismatch={policy}"), f"hydra.run.dir={cell}"
        )
    result = result_of(cell)
    changed = "attention_backend" if second == "flashinfer" else "start:startup_time"
    if policy == "fail":
        assert run.returncode != 0 and result.status == "failed"
        assert result.error.kind == "server_changed", result.error
        assert "the server changed during eval gsm8k_sample" in result.error.message
        assert changed in result.error.message
        return
    assert result.status == "ok", result.error
    assert any(changed in line for line in result.misconfigured()), result.misconfigured()
    assert "MISCONFIGURED" in run.stdout
    subprocess.run(
        [console_script("mtp-eval-report"), str(tmp_path / "m"), "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    summary = read_json(tmp_path / "r" / "summary.json")
    assert summary["cells"][0]["status"] == "misconfigured"
