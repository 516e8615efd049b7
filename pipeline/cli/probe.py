"""``mtp-eval-probe``: the kernel parity probe as a Hydra app (``conf/probe.yaml``).

It composes the same ``model``, ``backend`` and ``kv_dtype`` groups and ``skip_softmax`` values as
``mtp-eval``, plus a ``probe`` grid preset (``probe=quick`` or ``probe=full``), e.g.::

    mtp-eval-probe model=llama3_1_8b_eagle3 probe=quick probe.budget_s=420 probe.out_dir=results

Everything heavy (torch, FlashInfer, matplotlib) is imported by ``backends.probe.app`` only after
the config checked out; without a GPU the app exits with code 2 and says why.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import hydra
from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from backends.backend_conf import BackendConf, KvDtypeConf, SkipSoftmaxConf
from backends.probe.probe_conf import ProbeConf
from pipeline.cli.help_text import PROBE, help_page, wants_help
from pipeline.config.group_choices import group_problems
from pipeline.config.schema import CONF_DIR, CellModelConf
from pipeline.config.value_types import value_problems

_exit_codes: list[int] = []
PROBE_GROUPS = ("model", "backend", "kv_dtype", "probe")


@dataclass
class ProbeRootConf:
    """The whole probe config: the cell groups it shares with ``mtp-eval``, and the probe's own."""

    model: CellModelConf = field(default_factory=CellModelConf)
    backend: BackendConf = field(default_factory=BackendConf)
    kv_dtype: KvDtypeConf = field(default_factory=KvDtypeConf)
    skip_softmax: SkipSoftmaxConf = field(default_factory=SkipSoftmaxConf)
    probe: ProbeConf = field(default_factory=ProbeConf)


def register_probe_configs() -> None:
    """Register the schema that ``conf/probe.yaml`` builds on."""
    ConfigStore.instance().store(name="mtp_eval_probe_schema", node=ProbeRootConf)


def to_probe_config(cfg: DictConfig) -> ProbeRootConf:
    """The composed config as typed objects."""
    obj = OmegaConf.to_object(cfg)
    assert isinstance(obj, ProbeRootConf), type(obj)
    return obj


register_probe_configs()


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # SystemExit runs the probe's `finally`: compile children are killed and the JSON is saved.
    raise SystemExit(128 + signum)


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="probe")
def _app(cfg: DictConfig) -> int:
    from backends.probe.app import run_probe

    conf = to_probe_config(cfg)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    out_dir = Path(conf.probe.out_dir or HydraConfig.get().runtime.output_dir)
    code = run_probe(
        conf.model, conf.backend, conf.kv_dtype, conf.skip_softmax, conf.probe, out_dir
    )
    _exit_codes.append(code)
    return code


def main() -> None:
    """Entry point of ``mtp-eval-probe``: exit 0 pass, 1 a kernel failed, 2 cannot run here.

    A group choice no config folder has (``backend=fmha2``) exits 2 naming the choices, a value
    of the wrong type (``skip_softmax.prefill=abc``) naming the type its key takes.
    """
    argv = sys.argv[1:]
    if wants_help(argv):  # ours, not Hydra's (--hydra-help is still Hydra's)
        print(help_page(PROBE, PROBE_GROUPS, argv))
        return
    problems = group_problems(argv, PROBE_GROUPS)
    problems += value_problems(argv, ProbeRootConf)
    for line in problems:
        print(f"mtp-eval-probe: {line}", file=sys.stderr)
    if problems:
        sys.exit(2)
    _app()
    sys.exit(max(_exit_codes, default=0))


if __name__ == "__main__":
    main()
