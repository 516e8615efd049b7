"""What a cell job decides once from the composed config, before it plans a launch.

Each step is handed its part: serving gets the ``ServerPlan`` (the server's settings and what its
kind means, looked up here and nowhere else), launching a ``LaunchSettings``, the server checks a
``CheckPlan``, measuring a ``MeasurePlan``, resume the two policies it judges a finished cell by.
Past ``CellPlan.of`` the job reads no ``RootConf``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backends.backend_conf import BackendConf, GpuConf, KvDtypeConf, SkipSoftmaxConf
from backends.options import LaunchOptions
from evals.eval_conf import ClientConf
from pipeline.config.schema import CellModelConf, ParityConf, RootConf, ServingConf, SpeedConf
from pipeline.measuring.measure_plan import MeasurePlan
from pipeline.results.resume import ResumePolicies
from pipeline.serving.server_checks import CheckPlan
from pipeline.serving.server_kind import ServerPlan

EXTERNAL_PORT = 30000  # the port an external server's plan names; it is reached by base_url


@dataclass(frozen=True)
class LaunchSettings:
    """What planning, starting and stopping the cell's server read of the config.

    Attributes:
        model: the model (its ``CellSpec`` part; also the speed phase's tokenizer and path).
        backend: the variant.
        kv_dtype: the KV cache dtype.
        skip_softmax: the skip-softmax factors.
        gpu: the GPU as the config names it (``gpu=auto`` detects it).
        options: the server's launch options; port 0 means a free port, chosen when the cell
            plans its launch (``server.port`` unset for a server the pipeline starts).
        nodes: ``cluster.nodes`` (>1: one SGLang launcher per node, node 0 serving HTTP).
        dist_init_port: ``cluster.dist_init_port``, node 0's rendezvous.
        client: the keys (masked in every file the cell writes) and ``client.max_error_rate``.
        dry_run: plan and record the launch; start nothing.
    """

    model: CellModelConf
    backend: BackendConf
    kv_dtype: KvDtypeConf
    skip_softmax: SkipSoftmaxConf
    gpu: GpuConf
    options: LaunchOptions
    nodes: int
    dist_init_port: int
    client: ClientConf
    dry_run: bool


@dataclass(frozen=True)
class CellPlan:
    """The decisions every later step of a cell reads instead of asking the config again."""

    server: ServerPlan
    launch: LaunchSettings
    checks: CheckPlan
    measure: MeasurePlan
    resume: ResumePolicies
    speed: SpeedConf  # the speed phase (``speed.enabled``: after the evals, or alone)
    parity: ParityConf  # the parity phase (``parity.enabled``: after the speed phase, or alone)
    serving: ServingConf = field(default_factory=ServingConf)  # the serving phase (issue 42)

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
        launch = launch_settings(conf, server)
        measure = measure_plan(conf)
        return cls(server, launch, checks, measure, policies, conf.speed, conf.parity, conf.serving)


def launch_settings(conf: RootConf, server: ServerPlan) -> LaunchSettings:
    """The parts of ``conf`` that launching reads (``server``: its kind, looked up once)."""
    cluster = conf.cluster
    return LaunchSettings(
        model=conf.model,
        backend=conf.backend,
        kv_dtype=conf.kv_dtype,
        skip_softmax=conf.skip_softmax,
        gpu=conf.gpu,
        options=launch_options(server, conf.client),
        nodes=cluster.nodes,
        dist_init_port=cluster.dist_init_port,
        client=conf.client,
        dry_run=conf.dry_run,
    )


def launch_options(planned: ServerPlan, client: ClientConf) -> LaunchOptions:
    """The server's launch options; port 0 (a free one, chosen later) when none is set."""
    server = planned.conf
    port = server.port or (0 if planned.kind.launched else EXTERNAL_PORT)
    return LaunchOptions(
        host=server.host,
        port=port,
        random_seed=server.random_seed,
        mem_fraction_static=server.mem_fraction_static,
        max_running_requests=server.max_running_requests,
        enable_metrics=server.enable_metrics,
        api_key=client.api_key,
        admin_api_key=client.admin_api_key,
        extra_args=tuple(server.extra_args),
        env=tuple(sorted(server.env.items())),
    )


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
