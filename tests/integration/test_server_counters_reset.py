"""An eval whose server-level accept length is gone because another client reset the counters
says why. The other client is the project's fault proxy calling ``/flush_cache`` after the
eval's last request, as a second cell measuring the same server does."""

from __future__ import annotations

import pytest

from tests.helpers.cells import external_sim, result_of
from tests.helpers.proxied import FAST, external, fault_proxy, mtp_eval

pytestmark = pytest.mark.integration


def test_counters_reset_by_another_client_are_named(tmp_path):
    sequential = ["client.follow_server=false", "client.concurrency=1"]
    with (
        external_sim(tmp_path / "a", FAST, []) as url,
        fault_proxy(tmp_path / "p", [url], "--flush-after", "116") as via,
    ):
        run = mtp_eval(*external(via, *sequential), f"hydra.run.dir={tmp_path}/c")
    assert run.returncode == 0, run.stdout + run.stderr
    result = result_of(tmp_path / "c")
    assert result.evals["mcq_sample"].accept.server_avg_spec_accept_length is None
    said = [w for w in result.warnings if "no avg_spec_accept_length" in w]
    assert said and "another client flushed them" in said[0], result.warnings
    assert "eval mcq_sample: the server reported no avg_spec_accept_length" in run.stdout
