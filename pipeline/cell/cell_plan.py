"""What a cell job decides once from the composed config, before it plans a launch.

Each step is handed its part: serving gets the ``ServerPlan`` (the server's settings and what its
kind means, looked up here and nowhere else), resume the two policies it judges a finished cell by.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config.schema import RootConf
from pipeline.results.resume import ResumePolicies
from pipeline.serving.server_kind import ServerPlan


@dataclass(frozen=True)
class CellPlan:
    """The decisions every later step of a cell reads instead of asking the config again."""

    server: ServerPlan
    resume: ResumePolicies

    @classmethod
    def of(cls, conf: RootConf) -> CellPlan:
        """The plan of a cell.

        Raises:
            ValueError: an unknown ``server.kind`` (the message lists the known ones).
        """
        policies = ResumePolicies(conf.server.on_unverified, conf.server.on_foreign_traffic)
        return cls(ServerPlan.of(conf.server), policies)
