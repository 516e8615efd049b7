"""Which cell comes after this one in the sweep, for ``server.prestart_next`` (Hydra's side).

Hydra's basic launcher runs a sweep's jobs in order in this process; its sweeper saved the
sweep's own config in ``multirun.yaml`` before the first job. Job k+1 is composed from it as the
launcher will compose it (``load_sweep_config``, about 0.2 s), its folder from
``hydra.sweep.subdir`` with ``hydra.job.num = k+1``. Other launchers run each cell in its own
process, where there is no next cell to start: the setting is refused there.
"""

from __future__ import annotations

from pathlib import Path

from hydra.conf import HydraConf
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from pipeline.cell.prestart import NextCell
from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.prestart_checks import KEY, launcher_problems
from pipeline.config.schema import RootConf


def next_cell(hydra_cfg: HydraConf, conf: RootConf) -> NextCell | None:
    """The sweep's next cell after this job's ``conf`` (None: a single run, or the last job).

    Raises:
        ConfigError: a launcher other than Hydra's basic one (``hydra/launcher=local``, ``slurm``).
    """
    if hydra_cfg.mode != RunMode.MULTIRUN:
        return None
    problems = launcher_problems(conf, str(hydra_cfg.launcher.get("_target_", "")))
    if problems:
        raise ConfigError(problems)
    try:
        return _next_job(hydra_cfg)
    except Exception as err:  # the current cell runs as without the setting
        print(f"mtp-eval: {KEY}: the next cell was not composed ({err}); it starts its own server")
        return None


def _next_job(hydra_cfg: HydraConf) -> NextCell | None:
    """Job k+1 from the sweep's ``multirun.yaml`` (None: this job is the last)."""
    from pipeline.results.sweep_jobs import sweep_jobs

    sweep_dir = Path(str(hydra_cfg.sweep.dir))
    master = OmegaConf.load(sweep_dir / "multirun.yaml")
    assert isinstance(master, DictConfig)
    node = OmegaConf.to_container(master.hydra, resolve=False)
    jobs = sweep_jobs({str(k): v for k, v in node.items()}) if isinstance(node, dict) else None
    num = int(hydra_cfg.job.num) + 1
    if jobs is None or num >= len(jobs):
        return None
    return _composed(master, jobs[num], num, sweep_dir)


def _composed(master: DictConfig, overrides: list[str], num: int, sweep_dir: Path) -> NextCell:
    """Job ``num`` of the sweep: its typed config and its folder."""
    from hydra.core.global_hydra import GlobalHydra

    job = GlobalHydra.instance().config_loader().load_sweep_config(master, overrides)
    with read_write(job), open_dict(job):
        job.hydra.job.num = num
        job.hydra.job.id = num
        subdir = str(OmegaConf.select(job, "hydra.sweep.subdir"))
        del job["hydra"]
    conf = to_cell_config(job)
    return NextCell(conf, Path(conf.output_dir or sweep_dir / subdir), num)
