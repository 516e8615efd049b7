"""Hydra finds launchers only under the ``hydra_plugins`` namespace: this names the project's.

The code is ``pipeline/slurm_launcher.py``; ``conf/hydra/launcher/slurm.yaml`` selects it.
"""

from pipeline.slurm_launcher import SlurmLauncher


class MtpEvalSlurmLauncher(SlurmLauncher):
    """``hydra/launcher=slurm`` (see :mod:`pipeline.slurm_launcher`)."""
