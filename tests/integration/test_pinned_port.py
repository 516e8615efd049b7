"""A pinned ``server.port`` runs every cell of a sweep; a port another listener holds is refused
by name, and a sweep with a failed cell exits 1. Real loopback sockets, the simulated server,
the installed ``mtp-eval``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pipeline.cell.guards import GuardError, check_port_free
from pipeline.cli.sweep_outcome import sweep_end_line, sweep_outcomes
from tests.helpers.cells import processes_mentioning, result_of, run_script
from tests.helpers.sim import free_port

pytestmark = pytest.mark.integration
QUICK = ["evals.mcq_sample.dataset.limit=6", "evals.mcq_sample.repeats=1"]


def _cells(sweep: Path) -> dict[str, str]:
    return {p.parent.name: result_of(p.parent).status for p in sweep.glob("*/result.json")}


@pytest.fixture
def listener() -> Iterator[int]:
    """A port another process's listener holds for the test."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _time_wait_on(port: int) -> int:
    """A connection to ``port`` closed by its server side first: TIME_WAIT stays on the port.

    The server socket sets ``SO_REUSEADDR`` as uvicorn (SGLang) and aiohttp (the simulated
    server) do; Linux lets a bind with it pass such TIME_WAIT entries, a plain bind not.
    """
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen()
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server closes first, as a stopped server does
        client.recv(1)
        client.close()
    return port


def test_time_wait_on_the_port_is_no_holder_but_a_listener_is(listener):
    port = _time_wait_on(free_port())
    states = {c.status for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port}
    assert psutil.CONN_TIME_WAIT in states
    with socket.socket() as plain, pytest.raises(OSError):  # the check as it was: refused
        plain.bind(("127.0.0.1", port))
    check_port_free("127.0.0.1", port)  # as SGLang binds: free
    with pytest.raises(GuardError) as refused:
        check_port_free("127.0.0.1", listener)
    assert refused.value.kind == "port_in_use"
    assert f"server.port={listener} on 127.0.0.1 is held by another listener" in str(refused.value)
    assert "leave server.port unset" in str(refused.value)


def test_a_sweep_on_one_pinned_port_runs_every_cell(tmp_path, fast_sim):
    sweep, port = tmp_path / "sweep", free_port()
    run = run_script(
        "mtp-eval", "-m", "backend=fmha_v2,fa3,fa3_repeat", f"server.port={port}",
        f"hydra.sweep.dir={sweep}", *fast_sim, *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert sorted(_cells(sweep).values()) == ["ok", "ok", "ok"], _cells(sweep)
    assert "another" not in run.stdout + run.stderr
    assert processes_mentioning(str(sweep)) == []
    (sweep / "1_tiny-sim_fa3_auto_exact" / "result.json").unlink()  # a job that left nothing
    line = sweep_end_line(sweep_outcomes(sweep))
    assert line is not None and line.startswith("1 of 3 cells failed (a job: left no result.json)")


def test_a_held_port_fails_its_cell_by_name_and_the_sweep_exits_1(tmp_path, fast_sim, listener):
    sweep = tmp_path / "sweep"
    run = run_script(
        "mtp-eval", "-m", f"server.port={free_port()},{listener}", f"hydra.sweep.dir={sweep}",
        *fast_sim, *QUICK, cwd=tmp_path,
    )  # fmt: skip
    said = run.stdout + run.stderr
    assert run.returncode == 1, said[-3000:]
    assert sorted(_cells(sweep).values()) == ["failed", "ok"], _cells(sweep)
    assert f"server.port={listener} on 127.0.0.1 is held by another listener" in said
    assert "1 of 2 cells failed (tiny-sim/fa3/auto/sp=None/sd=None: port_in_use)" in said
    assert "exit code 1" in said
    (failed,) = [p.parent for p in sweep.glob("*/result.json") if result_of(p.parent).error]
    assert not (failed / "server.log").exists()  # nothing was started on the held port
