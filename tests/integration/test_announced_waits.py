"""A server that accepts the connection and never answers: the wait says so every few seconds,
then fails with the message that names the fix. A real local socket, through the console script.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time

import pytest

from pipeline.serving.waiting import WAIT_PROGRESS_S
from tests.helpers.cells import console_script

pytestmark = pytest.mark.integration


def _against_a_mute_server(
    tmp_path, extra: list[str]
) -> tuple[subprocess.CompletedProcess[str], float]:
    with socket.socket() as mute:  # listens, so the kernel accepts; nothing ever reads or answers
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        url = f"http://127.0.0.1:{mute.getsockname()[1]}"
        args = [
            "server=external", f"server.base_url={url}", "gpu=h200", "server.external_timeout_s=12",
            f"hydra.run.dir={tmp_path / 'cell'}", *extra,
        ]  # fmt: skip
        start = time.monotonic()
        run = subprocess.run(
            [console_script("mtp-eval"), *args],
            capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        )  # fmt: skip
        return run, time.monotonic() - start


def test_an_external_url_that_never_answers_is_not_a_silent_wait(tmp_path):
    # Was: 60 s of silence (server.external_timeout_s), then the message.
    run, took = _against_a_mute_server(tmp_path, [])
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    waited = re.findall(
        r"still waiting for GET \S+/server_info: (\d+) s of at most 12 s", run.stderr
    )
    assert [int(s) for s in waited] == [5, 10], run.stderr  # every WAIT_PROGRESS_S, then the fix
    assert WAIT_PROGRESS_S == 5.0 and took >= 12
    assert "did not answer GET /server_info" in run.stderr
    assert "server.external_timeout_s=12 s" in run.stderr


def test_the_health_wait_of_an_external_server_says_so_every_few_seconds_too(tmp_path):
    run, _ = _against_a_mute_server(tmp_path, ["server.sglang_version=0.5.19"])
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    waited = [
        int(s) for s in re.findall(r"waiting for the server at \S+: (\d+) s of 12 s", run.stdout)
    ]
    gaps = [b - a for a, b in zip([0, *waited[:-1]], waited, strict=True)]
    assert len(waited) >= 2 and max(gaps) <= 6, run.stdout
    assert "nothing healthy answered" in run.stdout
