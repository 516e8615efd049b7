"""Hydra finds launchers only under the ``hydra_plugins`` namespace: this names the project's.

The code is ``pipeline/cluster/slurm_launcher.py``; ``conf/hydra/launcher/slurm.yaml`` selects it.
Without the slurm extra (hydra-submitit-launcher) there is nothing to name, and Hydra's plugin scan
must not warn about it.
"""

try:
    from pipeline.cluster.slurm_launcher import SlurmLauncher
except ImportError:  # a base install: hydra/launcher=slurm needs `pip install 'mtp-eval[slurm]'`
    pass
else:

    class MtpEvalSlurmLauncher(SlurmLauncher):
        """``hydra/launcher=slurm`` (see :mod:`pipeline.cluster.slurm_launcher`)."""
