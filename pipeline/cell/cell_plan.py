"""What a cell job decides once from the composed config, before it plans a launch.

Each step is handed its part: serving gets the ``ServerPlan`` (the server's settings and what its
kind means, looked up here and nowhere else), the server checks a ``CheckPlan``, measuring a
``MeasurePlan``, resume the two policies it judges a finished cell by.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config.schema import ParityConf, RootConf, SpeedConf
from pipeline.measuring.measure_plan import MeasurePlan
from pipeline.results.resume import ResumePolicies
from pipeline.serving.server_checks import CheckPlan
from pipeline.serving.server_kind import ServerPlan


@dataclass(frozen=True)
class CellPlan:
    """The decisions every later step of a cell reads instead of asking the config again."""

    server: ServerPlan
    checks: CheckPlan
    measure: MeasurePlan
    resume: ResumePolicies
    speed: SpeedConf  # the speed phase (``speed.enabled``: after the evals, or alone)
    parity: ParityConf  # the parity phase (``parity.enabled``: after the speed phase, or alone)

    @classmethod
    def of(cls, conf: RootConf) -> CellPlan:
        """The plan of a cell.

        Raises:
            ValueError: an unknown ``server.kind`` (the message lists the known ones).
        """
        policies = ResumePolicies(conf.server.on_unverified, conf.server.on_foreign_traffic)
        server = ServerPlan.of(conf.server)
        checks = CheckPlan(
            server, conf.backend.name, conf.model, conf.gpu, conf.client.api_key, conf.dry_run
        )
        return cls(server, checks, measure_plan(conf), policies, conf.speed, conf.parity)


def measure_plan(conf: RootConf) -> MeasurePlan:
    """The parts of ``conf`` that measuring reads."""
    model, server = conf.model, conf.server
    return MeasurePlan(
        evals=dict(conf.evals),
        sampling=model.sampling,
        chat_template_kwargs=model.chat_template_kwargs,
        reasoning_parser=model.reasoning_parser,
        model_name=model.served_model_name or model.path,
        speculative=model.speculative.algorithm is not None,
        client=conf.client,
        sequential=conf.sequential,
        idle_timeout_s=server.idle_timeout_s,
        on_mismatch=server.on_mismatch,
        on_foreign_traffic=server.on_foreign_traffic,
    )
