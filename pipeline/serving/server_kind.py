"""What each ``server.kind`` means, decided in one place (pure).

A cell's server is one of four kinds: the simulated SGLang server (``pipeline.simserver``), SGLang
started here, SGLang started in ``docker run``, or an external server already running at
``server.base_url``. The cell job looks the kind up once (``ServerPlan.of``) and hands the plan to
every serving step, which asks the kind's traits instead of comparing strings.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from pipeline.config.schema import ServerConf


@dataclass(frozen=True)
class ServerKind:
    """The traits of one server kind that the cell's steps depend on."""

    name: str
    program: tuple[str, ...]  # the launcher in front of SGLang's arguments; () starts nothing
    simulated: bool = False  # the simulated server: its settings are written for it, GPU simulated
    docker: bool = False  # the argv runs inside ``docker run``
    gpu_here: bool = False  # it runs on this host's GPU, so planning needs one detected

    @property
    def launched(self) -> bool:
        """Whether the pipeline starts (and stops) the server, as opposed to reaching one."""
        return bool(self.program)

    @property
    def external(self) -> bool:
        """A server someone else started: reached at ``server.base_url``, never stopped."""
        return not self.launched


KINDS = {
    kind.name: kind
    for kind in (
        ServerKind("simulated", (sys.executable, "-m", "pipeline.simserver"), simulated=True),
        ServerKind("sglang", (sys.executable, "-m", "sglang.launch_server"), gpu_here=True),
        ServerKind("docker", ("python3", "-m", "sglang.launch_server"), docker=True, gpu_here=True),
        ServerKind("external", ()),
    )
}


@dataclass(frozen=True)
class ServerPlan:
    """A cell's server as the serving steps read it: its settings and what its kind means."""

    conf: ServerConf
    kind: ServerKind

    @classmethod
    def of(cls, server: ServerConf) -> ServerPlan:
        """The plan of ``server``, its kind looked up once.

        Raises:
            ValueError: an unknown ``server.kind`` (see ``server_kind``).
        """
        return cls(server, server_kind(server))


def server_kind(server: ServerConf) -> ServerKind:
    """The traits of ``server.kind``.

    Raises:
        ValueError: an unknown kind; the message lists the known ones.
    """
    kind = KINDS.get(server.kind)
    if kind is None:
        raise ValueError(
            f"server.kind={server.kind!r} is not a server kind "
            "(choose simulated, sglang, docker or external)"
        )
    return kind
