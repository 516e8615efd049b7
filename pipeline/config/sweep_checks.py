"""A sweep's every job checked before its first cell, and a run's config before its folder.

Hydra's callback (``conf/config.yaml``: ``hydra.callbacks``) composes each distinct job of a
multirun and refuses the sweep with exit code 2 when any job has a value the rules of
``pipeline.config.checks`` refuse, naming the first job that has it; a single run is checked as
the app checks it (``cell_config.to_cell_config``) before Hydra makes its folder.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError, config_problems, phantom_evals
from pipeline.config.prestart_checks import launcher_problems
from pipeline.config.schema import RootConf

# The config roots the rules read: a job's overrides elsewhere (backend, kv_dtype, gpu)
# cannot change a checked value, so jobs that differ only there are composed once.
CHECKED_ROOTS = frozenset(
    {
        "skip_softmax",
        "client",
        "server",
        "evals",
        "sequential",
        "experiment",
        "model",
        "cluster",
        "speed",
        "serving",
        "parity",  # its rules, and parity.enabled lets evals=[] run the phase alone
    }
)


def checked_overrides(
    overrides: list[str], roots: frozenset[str] = CHECKED_ROOTS
) -> tuple[str, ...]:
    """A job's overrides under ``roots`` (by default: those that can change a checked value)."""
    keys = (o.lstrip("+~").split("=", 1)[0].split(".", 1)[0].split("@", 1)[0] for o in overrides)
    return tuple(o for o, root in zip(overrides, keys, strict=True) if root in roots)


def sweep_job_configs(
    config: DictConfig, roots: frozenset[str]
) -> Iterator[tuple[str, DictConfig]]:
    """Each distinct job's composed config (its ``hydra`` node dropped), named by its overrides.

    Jobs whose overrides under ``roots`` are the same are composed once (about 0.2 s each:
    composing every job would cost a sweep's worth of seconds). Basic sweeper only.

    Args:
        config: the multirun's config as Hydra gives it to ``on_multirun_start``.
        roots: the config roots whose overrides can change what the caller checks.
    """
    from hydra.core.global_hydra import GlobalHydra

    from pipeline.results.sweep_jobs import sweep_jobs

    hydra = OmegaConf.to_container(config.hydra, resolve=False)
    jobs = sweep_jobs({str(k): v for k, v in hydra.items()}) if isinstance(hydra, dict) else None
    distinct = dict.fromkeys(checked_overrides(job, roots) for job in jobs or [])
    loader = GlobalHydra.instance().config_loader()
    for overrides in distinct:
        job = loader.load_sweep_config(config, list(overrides))
        with read_write(job), open_dict(job):
            del job["hydra"]
        yield " ".join(overrides) or "every job", job


def typed_config(job: DictConfig) -> RootConf | None:
    """``job`` as the schema's dataclasses; None for a wrong key or type (Hydra reports it)."""
    try:
        conf = OmegaConf.to_object(job)
    except Exception:  # a wrong key or type: Hydra reports it when the job composes
        return None
    assert isinstance(conf, RootConf), type(conf)
    return conf


def sweep_problems(config: DictConfig) -> list[str]:
    """Every job's out-of-range values, each with the first job that has it (basic sweeper).

    Args:
        config: the multirun's config as Hydra gives it to ``on_multirun_start``.
    """
    first_job: dict[str, str] = {}
    launcher = str(OmegaConf.select(config, "hydra.launcher._target_") or "")
    for where, job in sweep_job_configs(config, CHECKED_ROOTS):
        for problem in phantom_evals(job):
            first_job.setdefault(problem, where)
        conf = typed_config(job)
        found = [] if conf is None else config_problems(conf) + launcher_problems(conf, launcher)
        for problem in found:
            first_job.setdefault(problem, where)
    return [f"{problem} (in {where})" for problem, where in first_job.items()]


class SweepCheckCallback(Callback):
    """Refuses a sweep with a value out of range (exit code 2); keeps another sweep's record."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra before the first job of a multirun."""
        from hydra.errors import HydraException

        from pipeline.config.sweep_folder import keep_other_sweep

        try:
            problems = sweep_problems(config)
        except HydraException as err:  # a job Hydra cannot compose: said before any folder
            cause = str(err.__cause__ or "").strip().splitlines()
            problems = [f"{err}: {cause[0]}" if cause else str(err)]
        for line in problems:
            print(f"mtp-eval: {line}", file=sys.stderr)
        if problems:  # SystemExit passes Hydra's callback guard (it catches Exception only)
            raise SystemExit(2)
        hydra = OmegaConf.to_container(config.hydra, resolve=False)
        node = {str(k): v for k, v in hydra.items()} if isinstance(hydra, dict) else {}
        for line in keep_other_sweep(Path(str(config.hydra.sweep.dir)), node):
            print(f"mtp-eval: {line}", file=sys.stderr)

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Called by Hydra before a single run, before it creates the run's folder.

        The same checks as the app's, refused here so that a failed compose leaves no empty
        ``outputs/runs/<time>_.../`` behind (exit code 2, one line per problem).
        """
        job = config.copy()
        with read_write(job), open_dict(job):
            del job["hydra"]
        try:
            to_cell_config(job)
        except ConfigError as err:
            for line in err.problems:
                print(f"mtp-eval: {line}", file=sys.stderr)
            raise SystemExit(2) from None  # passes Hydra's callback guard
