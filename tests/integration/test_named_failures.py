"""Failures named for what they are, through the installed ``mtp-eval`` and real servers."""

from __future__ import annotations

import pytest

from tests.helpers.cells import external_sim, result_of
from tests.helpers.proxied import FAST, external, fault_proxy, mtp_eval

pytestmark = pytest.mark.integration


def test_every_request_503_names_the_http_errors_and_shows_no_answers(tmp_path):
    rules = ["--http-5xx-every", "1", "--http-status", "503"]
    with (
        external_sim(tmp_path / "a", FAST, []) as url,
        fault_proxy(tmp_path / "p", [url], *rules) as via,
    ):
        run = mtp_eval(*external(via, "client.max_retries=1"), f"hydra.run.dir={tmp_path}/c")
    assert run.returncode != 0
    result = result_of(tmp_path / "c")
    assert result.status == "failed" and result.error.kind == "too_many_errors"
    message = result.error.message
    assert "mcq_sample 100.0% (no answers), http_5xx 116" in message, message
    assert "HTTP 503" in message and "accept statistics" not in message
    block = result.evals["mcq_sample"]
    assert (block.accuracy, block.ci95) == (None, (None, None))
    assert "mcq_sample no answers" in run.stdout and "0.000 [0.000" not in run.stdout
