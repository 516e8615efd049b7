"""Host-wide problems found once, before a sweep's first cell, with every missing input at once.

A cell finds out, before its server starts, which GPU to plan for, which SGLang release it plans
for and whether its evals' rows load. None of that depends on the cell's variant: without a GPU
every cell of a sweep would fail with the same line, and a dry run for a real server would learn
one missing setting per run. The pre-flight asks the same functions the cell asks
(``plan_gpu``, ``sglang_version``, ``make_eval``), for every distinct job of the sweep, collects
every answer that would fail a cell, and refuses the sweep with each problem said once.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from evals.base import make_eval
from evals.chat_tokens import tokenizer_problem
from evals.datasets import DatasetError
from pipeline.config.checks import config_problems
from pipeline.config.prompt_source import eval_name, tokenizer_source
from pipeline.config.schema import RootConf
from pipeline.config.sweep_checks import sweep_job_configs, typed_config
from pipeline.results.cell_error import CellError
from pipeline.serving.keys import with_api_key
from pipeline.serving.server_api import ServerApiError
from pipeline.serving.server_checks import plan_gpu
from pipeline.serving.server_kind import ServerPlan
from pipeline.serving.sglang_release import sglang_version

PREFLIGHT_REFUSED = 2  # as a value out of range: nothing started
# The config roots the host checks read: jobs that differ only elsewhere (backend, kv_dtype,
# skip_softmax, model) share the GPU, the SGLang release and the datasets, so compose once
# (dry_run: a dry run plans for a GPU this host does not have).
# speed, parity and model: speed.prompts / parity.prompts=eval:NAME read the model's tokenizer
# on this host.
HOST_ROOTS = frozenset(
    {"gpu", "server", "evals", "client", "experiment", "dry_run", "speed", "parity", "model"}
)
# What a cell's own pre-server steps raise for a problem the user can fix; anything else is a
# bug and is left to the cell, which records it with its traceback.
_FIXABLE = (CellError, ServerApiError, DatasetError, ValueError)
Check = Callable[[], object]


def _failure(check: Check) -> str | None:
    try:
        check()
    except _FIXABLE as err:
        return str(err)
    return None


def cell_problems(conf: RootConf, loaded: dict[str, str | None] | None = None) -> list[str]:
    """What would fail this cell before its server starts, each check run (none stops the rest).

    Args:
        conf: the cell's typed config.
        loaded: datasets already tried, by their config's text: a dataset shared by many jobs
            is loaded once (the outcome: None, or the problem).
    """
    try:
        conf = with_api_key(conf)
        problems = []
    except ValueError as err:  # a key variable unset: the server checks below go without it
        problems = [str(err)]
    server, api_key = ServerPlan.of(conf.server), conf.client.api_key
    checks: list[Check] = [
        lambda: plan_gpu(conf.gpu, server, api_key, conf.dry_run),
        lambda: sglang_version(server, api_key),
    ]
    phases = (("speed.prompts", conf.speed), ("parity.prompts", conf.parity),
              ("serving.prompts", conf.serving))  # fmt: skip
    for key, phase in phases:
        if phase.enabled and eval_name(phase.prompts, key) is not None:
            checks.append(functools.partial(_tokenizer_found, conf, key, phase.prompts))
    problems += [p for p in map(_failure, checks) if p is not None]
    tried = {} if loaded is None else loaded
    for name, eval_conf in conf.evals.items():
        key = f"{name}: {eval_conf.kind} {eval_conf.dataset!r}"
        if key not in tried:
            tried[key] = _failure(functools.partial(make_eval, name, eval_conf))
        problems += [p for p in [tried[key]] if p is not None]
    return problems


def _tokenizer_found(conf: RootConf, setting: str, prompts: str) -> None:
    """Raise what the cell would: ``setting=eval:NAME`` and no local tokenizer to read."""
    path, key = tokenizer_source(conf.model)
    problem = tokenizer_problem(path, key)
    if problem is not None:
        raise ValueError(f"{setting}={prompts}: {problem}")


def said_once(found: Iterable[tuple[str, str]], jobs: int) -> list[str]:
    """One line per problem, naming the jobs that have it unless it is every job.

    Args:
        found: (problem, the job's overrides) pairs, in the order found.
        jobs: how many distinct jobs were checked.
    """
    where: dict[str, list[str]] = {}
    for problem, job in found:
        where.setdefault(problem, []).append(job)
    return [
        problem if len(named) == jobs else f"{problem} (in {'; '.join(named)})"
        for problem, named in where.items()
    ]


def sweep_host_problems(config: DictConfig) -> list[str]:
    """Every problem that would fail a cell of this sweep before its server starts, once each.

    Jobs whose values are out of range are skipped: the config check has refused the sweep.
    Nothing is checked when the cells run on other hosts (``hydra/launcher=slurm``): a login
    node's missing GPU, SGLang or dataset cache says nothing of the compute nodes'.
    """
    if runs_elsewhere(config):
        return []
    loaded: dict[str, str | None] = {}
    found: list[tuple[str, str]] = []
    jobs = 0
    for where, job in sweep_job_configs(config, HOST_ROOTS):
        conf = typed_config(job)
        if conf is None or config_problems(conf):
            continue
        jobs += 1
        found += [(problem, where) for problem in cell_problems(conf, loaded)]
    return said_once(found, jobs)


def runs_elsewhere(config: DictConfig) -> bool:
    """Whether the sweep's launcher runs its cells on other hosts (SLURM, Hydra's or ours)."""
    target = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
    return "slurm" in target.lower()


def refuse(problems: list[str]) -> None:
    """Print each problem once and end the program (exit code 2) when there is any."""
    for line in problems:
        print(f"mtp-eval: {line}", file=sys.stderr)
    if problems:
        print(
            f"mtp-eval: nothing was started: {len(problems)} problem(s) above would fail the "
            "cells before their servers start; fix them and run the same command again",
            file=sys.stderr,
        )
        raise SystemExit(PREFLIGHT_REFUSED)  # passes Hydra's callback guard (Exception only)


class PreflightCallback(Callback):
    """Refuses a run or sweep in which a cell would fail before its server starts (exit code 2)."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra before the first job of a multirun (after the config check)."""
        refuse(sweep_host_problems(config))

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra before a single run's cell."""
        job = copy.deepcopy(config)
        with read_write(job), open_dict(job):
            del job["hydra"]
        conf = typed_config(job)
        if conf is not None and not config_problems(conf):  # else the app says what is wrong
            refuse(cell_problems(conf))
