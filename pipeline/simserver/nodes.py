"""Multi-node SGLang as the simulated server plays it (``--nnodes N --node-rank R``).

What the live two-node cell on an H200 host showed
(``benchmarks/results/live-h200/two-gpu/``): node 0 serves HTTP and
holds the rendezvous at ``--dist-init-addr``; a node of rank >= 1 serves nothing, and when node 0
stops, its torch.distributed read fails (``Connection reset by peer``), its child sends SIGQUIT
and SGLang's ``kill_process_tree`` kills it (exit -9). Node 0 here listens on the rendezvous port
and the other nodes hold a connection to it, so a pipeline that stops node 0 before telling the
other nodes sees them die exactly as SGLang's do.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Mapping
from typing import Any

log = logging.getLogger("sglang.simserver")
CONNECT_TIMEOUT_S = 120.0  # SGLang's nodes wait that long and more for the rendezvous


def rendezvous(args: Mapping[str, Any]) -> tuple[str, int] | None:
    """``(host, port)`` of ``--dist-init-addr`` for a multi-node server, else None.

    Raises:
        ValueError: several nodes without a ``--dist-init-addr HOST:PORT`` (SGLang refuses it).
    """
    if int(args.get("nnodes") or 1) <= 1:
        return None
    host, _, port = str(args.get("dist_init_addr") or "").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--nnodes {args['nnodes']} needs --dist-init-addr HOST:PORT")
    return host, int(port)


class Rendezvous:
    """Node 0's end: the other nodes' connections, held until ``close``.

    Node 0 is not ready before every other node has joined: SGLang's node 0 blocks in
    torch.distributed's init until the whole group is there, so it never answers
    ``/health_generate`` while a node is missing.
    """

    def __init__(self, others: int = 0) -> None:
        self.server: asyncio.Server | None = None
        self.peers: list[asyncio.StreamWriter] = []
        self.others = others  # nodes of rank >= 1 that must join
        self.complete = asyncio.Event()
        if others == 0:
            self.complete.set()

    async def open(self, host: str, port: int) -> None:
        """Listen on ``host:port`` and keep every node that joins."""
        self.server = await asyncio.start_server(self._keep, host, port)
        log.info("Rendezvous for %s:%d open (node 0)", host, port)

    async def _keep(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        log.info("node joined the rendezvous from %s", writer.get_extra_info("peername"))
        self.peers.append(writer)
        if len(self.peers) >= self.others:
            self.complete.set()
        await reader.read()  # until that node goes away

    def close(self) -> None:
        """Drop every node, as node 0's schedulers do when SIGTERM reaches them."""
        if self.server is not None:
            self.server.close()
        for writer in self.peers:
            writer.transport.abort()


async def serve_as_other_node(host: str, port: int, rank: int, stop: asyncio.Event) -> int:
    """A node of rank >= 1: join node 0, then wait for SIGTERM (exit 0) or node 0 to vanish.

    Returns:
        0 after SIGTERM; 1 when node 0 never answered. A vanished node 0 kills this process.
    """
    reader = await _join(host, port)
    if reader is None:
        log.error(
            "node %d: no rendezvous at %s:%d after %.0f s", rank, host, port, CONNECT_TIMEOUT_S
        )
        return 1
    log.info("node %d joined %s:%d; serving no HTTP (node 0 does)", rank, host, port)
    lost = asyncio.ensure_future(reader.read())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({lost, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if stopped.done():
        lost.cancel()
        return 0
    log.error(
        "RuntimeError: [gloo/transport/tcp/pair.cc:538] Read error [%s]:%d: "
        "Connection reset by peer",
        host,
        port,
    )
    log.error("Received sigquit from a child process. It usually means the child failed.")
    logging.shutdown()
    os.kill(os.getpid(), signal.SIGKILL)  # SGLang's kill_process_tree includes the parent
    return 1  # not reached


async def _join(host: str, port: int) -> asyncio.StreamReader | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CONNECT_TIMEOUT_S
    while loop.time() < deadline:
        try:
            reader, _ = await asyncio.open_connection(host, port)
            return reader
        except OSError:
            await asyncio.sleep(0.1)
    return None
