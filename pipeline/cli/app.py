"""``mtp-eval``: the Hydra app that runs one cell per job (``-m`` sweeps over cells)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import hydra
from hydra.conf import HydraConf
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from pipeline.cell.provenance import commit_problem
from pipeline.cli.help_text import MTP_EVAL, help_page, wants_help
from pipeline.cluster.slurm_job import StopSignal, in_submitit_job, install_stop_handlers
from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.schema import CONF_DIR, register_configs
from pipeline.config.schema_keys import override_problems
from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result

register_configs()
_single_run_failed: list[bool] = []
_resume_with: list[str] = []  # the override that resumes this run, once a cell started
CONFIG_ERROR = 2  # a value out of range: nothing started
INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
CELL_GROUPS = (  # the --help page's groups, in the order a user picks them
    *("model", "backend", "kv_dtype", "gpu", "evals", "server", "client", "experiment"),
    "hydra/launcher",
)


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _app(cfg: DictConfig) -> str:
    from pipeline.cell.job import run_cell
    from pipeline.cell.prestart import expect_next
    from pipeline.cell.provenance import now_iso
    from pipeline.cli.next_cell import next_cell
    from pipeline.cli.summary import cell_report

    hydra_cfg = HydraConfig.get()
    try:
        conf = to_cell_config(cfg)
        expect_next(next_cell(hydra_cfg, conf) if conf.server.prestart_next else None)
    except ConfigError as err:  # one line per value, no traceback; ends a sweep before its cell
        for line in err.problems:
            print(f"mtp-eval: {line}", file=sys.stderr)
        raise SystemExit(CONFIG_ERROR) from None
    cell_dir = Path(conf.output_dir or hydra_cfg.runtime.output_dir)
    install_stop_handlers()  # SIGTERM (and SIGUSR2 under SLURM) -> the cell stops, keeps its result
    job_num = int(hydra_cfg.job.num) if hydra_cfg.mode == RunMode.MULTIRUN else 0
    _resume_with[:] = [resume_override(hydra_cfg)]
    started_at = now_iso()
    try:
        result = run_cell(conf, cell_dir, job_num)
    except StopSignal:
        if not in_submitit_job(os.environ):
            raise  # an in-process sweep stops as a whole; rerunning it resumes
        result = read_result(cell_dir) or CellResult.from_json({"status": "failed"})
    print(cell_report(result, cell_dir, started_at), flush=True)
    if hydra_cfg.mode == RunMode.RUN:
        _single_run_failed.append(result.status == "failed")
    return result.status


def resume_override(hydra_cfg: HydraConf) -> str:
    """What to add to the command so that it resumes this run's folder ("" if nothing is needed).

    The default folders are named by the time they start, so the same command run again would
    start afresh elsewhere; a folder the command names itself is found again.
    """
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    if any(str(o).lstrip("+").startswith(key + "=") for o in hydra_cfg.overrides.hydra):
        return ""
    folder = Path(hydra_cfg.sweep.dir if multirun else hydra_cfg.run.dir).resolve()
    return f"{key}={folder}"


def interrupted_message() -> str:
    """The line printed on Ctrl-C: what was kept, and the exact way to resume."""
    head = "mtp-eval: interrupted (Ctrl-C); the server was stopped, answered samples are kept, "
    extra = _resume_with[0] if _resume_with else ""
    if extra:
        return head + f"and the same command with {extra} added resumes it"
    return head + "and the same command resumes the cell"


def register_slurm_launcher() -> None:
    """Make ``hydra/launcher=slurm`` findable when the slurm extra is installed.

    Hydra finds launchers by scanning the ``hydra_plugins`` namespace, which an editable install
    (``make install``) hides behind its import hook; registering the class works either way.
    """
    from hydra.core.plugins import Plugins

    with contextlib.suppress(ImportError):  # no hydra-submitit-launcher: the slurm extra is off
        from hydra_plugins import mtp_eval_launcher

        launcher = getattr(mtp_eval_launcher, "MtpEvalSlurmLauncher", None)
        if launcher is not None:
            Plugins.instance().register(launcher)


def main() -> None:
    """Entry point of the ``mtp-eval`` console script.

    A single run exits 1 when its cell failed; a multirun exits 0 when every cell produced its
    result and 1 when any cell failed or none produced one (``pipeline.cli.sweep_outcome``). A
    problem every cell would hit before its server starts (no GPU, no SGLang version, a dataset
    that does not load) exits 2 before the first cell (``pipeline.cli.preflight``). An override
    whose key the schema lacks, with or without ``+``, a group choice no config folder has, or
    an ``MTP_EVAL_COMMIT`` that is no commit id, exits 2 before anything is composed. Ctrl-C
    ends it with one line and exit code 130: the cell's ``result.json`` says ``interrupted``
    and its answered samples are kept. ``--help`` prints ``pipeline.cli.help_text.MTP_EVAL``.
    """
    if wants_help(sys.argv[1:]):  # ours, not Hydra's (--hydra-help is still Hydra's)
        print(help_page(MTP_EVAL, CELL_GROUPS, sys.argv[1:]))
        return
    register_slurm_launcher()
    problems = override_problems(sys.argv[1:])  # before Hydra, whose message suggests a "+"
    problems += [bad] if (bad := commit_problem(os.environ)) else []
    for line in problems:
        print(f"mtp-eval: {line}", file=sys.stderr)
    if problems:
        sys.exit(CONFIG_ERROR)
    try:
        _app()
    except KeyboardInterrupt:
        print(interrupted_message(), file=sys.stderr)
        sys.exit(INTERRUPTED)
    if any(_single_run_failed):
        sys.exit(1)


if __name__ == "__main__":
    main()
