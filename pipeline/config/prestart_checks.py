"""The rules of ``server.prestart_next`` (pure): when the next cell's server may start early.

With the setting on, cell k starts cell k+1's server on the same GPU while its own evals run
(``pipeline/cell/prestart.py``). Two servers then share one GPU for a while, so nothing timed may
run then, and both must fit: each is held to ``MAX_SHARE`` of the GPU's memory.
"""

from __future__ import annotations

from pipeline.config.schema import RootConf

KEY = "server.prestart_next"
MAX_SHARE = 0.45  # two servers on one GPU: each at most this mem_fraction_static (0.9 together)
_LAUNCHED = frozenset({"simulated", "sglang", "docker"})
BASIC_LAUNCHER = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"


def prestart_problems(conf: RootConf) -> list[str]:
    """Why this cell may not run with ``server.prestart_next=true`` (empty: it may, or it is off).

    The same rule is asked of the next cell before its server starts early
    (``timed_phases``), so a sweep where any cell times speed or serving is refused whole.
    """
    if not conf.server.prestart_next:
        return []
    problems = [
        f"{KEY}=true shares the GPU with the next cell's starting server, but this cell times "
        f"{phase} ({phase}.enabled=true): timing needs the GPU alone; set {KEY}=false"
        for phase in timed_phases(conf)
    ]
    share = conf.server.mem_fraction_static
    if share is None or not 0 < share <= MAX_SHARE:
        problems.append(
            f"{KEY}=true runs two servers on one GPU: set server.mem_fraction_static to at most "
            f"{MAX_SHARE} (it is {share}) so both fit; add --max-total-tokens to "
            "server.extra_args for the same KV pool in every cell (SGLang sizes it from the "
            "memory free when it starts)"
        )
    if conf.server.kind not in _LAUNCHED:
        problems.append(f"{KEY}=true: server={conf.server.kind} starts no server; set {KEY}=false")
    if conf.cluster.nodes > 1:
        problems.append(f"{KEY}=true: a cell over cluster.nodes>1 is not started ahead")
    return problems


def timed_phases(conf: RootConf) -> list[str]:
    """The timed phases a cell runs (``speed``, ``serving``): none may share the GPU."""
    enabled = (("speed", conf.speed.enabled), ("serving", conf.serving.enabled))
    return [name for name, on in enabled if on]


def launcher_problems(conf: RootConf, launcher: str) -> list[str]:
    """``server.prestart_next`` under a launcher that runs each cell in its own process."""
    if not conf.server.prestart_next or launcher == BASIC_LAUNCHER:
        return []
    return [
        f"{KEY}=true needs Hydra's basic launcher (the cells one after another in one process); "
        f"{launcher or 'this launcher'} runs each cell in its own process: drop {KEY} or "
        "hydra/launcher"
    ]
