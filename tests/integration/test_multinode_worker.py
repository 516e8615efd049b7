"""A worker node of a multi-node cell: a real server process, stopped once node 0 is done."""

import sys
import threading
import time

import pytest

from pipeline.cluster.multinode import DONE_MARKER, serve_as_worker
from tests.helpers.cells import processes_mentioning

pytestmark = pytest.mark.integration


@pytest.mark.serial  # under 10 s: alone
def test_worker_node_runs_until_node0_is_done(tmp_path):
    argv = [sys.executable, "-c", "import time; time.sleep(60)", str(tmp_path)]
    threading.Timer(1.0, lambda: (tmp_path / DONE_MARKER).write_text("ok\n")).start()
    started = time.monotonic()
    outcome = serve_as_worker(argv, {}, tmp_path, rank=1, grace_s=2, poll_s=0.1)
    assert outcome.status == "ok" and time.monotonic() - started < 10
    assert processes_mentioning(str(tmp_path)) == []


def test_worker_whose_launcher_dies_reports_it(tmp_path):
    import sys

    from pipeline.cluster.multinode import serve_as_worker

    argv = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    outcome = serve_as_worker(argv, {}, tmp_path, rank=1, grace_s=2, poll_s=0.1)
    assert outcome.status == "failed" and outcome.exit_code == 3 and "boom" in outcome.log_tail
