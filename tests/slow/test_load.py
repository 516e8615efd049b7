"""5,000 requests at concurrency 256: no error, bounded memory, exactly 5,000 samples on disk."""

import json
import subprocess
import sys

import pytest

from tests.helpers.cells import REPO

pytestmark = pytest.mark.slow


def test_5000_requests_at_concurrency_256(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.load_5000", "--out", str(tmp_path)],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    figures = json.loads(proc.stdout[proc.stdout.index("{") :])
    print(figures)
    assert figures["status_ok"] == 1.0
    assert figures["samples"] == 5000 and figures["errors"] == 0
    assert (
        figures["peak_rss_mib"] < 600
    )  # the whole pipeline process, Python and libraries included
