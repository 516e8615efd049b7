"""A simulated multi-node server's node 0 is not ready until every other node has joined.

SGLang's node 0 blocks in torch.distributed's init until the whole group is there; the simulated
node 0 must not answer ``/health_generate`` earlier, or a cell can finish before node 1 joined.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers.sim import Sim, free_port, status

pytestmark = pytest.mark.integration


def test_node_0_waits_for_node_1_before_it_is_healthy(tmp_path: Path) -> None:
    addr = f"127.0.0.1:{free_port()}"
    nodes = ["--nnodes", "2", "--dist-init-addr", addr]
    node0 = Sim(tmp_path / "n0", [*nodes, "--node-rank", "0"], {}, {})
    node1 = None
    try:
        deadline = time.monotonic() + 3.0  # well past the 0.2-s start-up delay
        while time.monotonic() < deadline:
            assert node0.proc.poll() is None, node0.log()
            assert status(node0.url + "/health_generate") != 200, node0.log()
            time.sleep(0.1)
        node1 = Sim(tmp_path / "n1", [*nodes, "--node-rank", "1"], {}, {})
        node0.wait_ready(timeout=30.0)
        assert "node joined the rendezvous" in node0.log()
    finally:
        node0.kill_group()
        if node1 is not None:
            node1.kill_group()
