"""`hydra/launcher=slurm` names the project's launcher, and Hydra can find it from any folder
(an editable install hides `hydra_plugins/` from Hydra's scan; the CLI registers the class)."""

import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_slurm_preset_targets_the_projects_launcher():
    preset = yaml.safe_load((REPO / "conf/hydra/launcher/slurm.yaml").read_text())
    assert preset["_target_"] == "hydra_plugins.mtp_eval_launcher.MtpEvalSlurmLauncher"


def test_cli_registers_the_launcher_from_outside_the_checkout(tmp_path):
    code = (
        "import hydra_plugins.mtp_eval_launcher as m; from hydra.core.plugins import Plugins; "
        "from pipeline.cli.app import register_slurm_launcher; register_slurm_launcher(); "
        "name = 'hydra_plugins.mtp_eval_launcher.MtpEvalSlurmLauncher'; "
        "print(m.__file__, name in Plugins.instance().class_name_to_class)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.split()
    assert Path(out[0]).resolve() == REPO / "hydra_plugins/mtp_eval_launcher/__init__.py"
    assert out[1] == "True"
