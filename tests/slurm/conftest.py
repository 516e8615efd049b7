"""The `slurm` tier: a real single-node SLURM (.ci/slurm/cluster), up once per session.

Every test here submits through real `sbatch` and checks with `scontrol` that SLURM itself ran
(or cancelled) the jobs whose ids the cells recorded. The cluster needs root; CI runs this tier
as root after the rest of the suite (`make test-slurm`). Nothing here is skipped: without SLURM
the tier fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.slurm import CLUSTER, Slurm


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory):
    # .ci/run names the folder so that its exit trap can stop the daemons whatever happens here
    named = os.environ.get("MTP_EVAL_SLURM_DIR")
    folder = Path(named) if named else tmp_path_factory.mktemp("slurm")
    up = subprocess.run(
        [str(CLUSTER), "up", str(folder)], text=True, capture_output=True, timeout=600
    )
    if up.returncode != 0:
        subprocess.run([str(CLUSTER), "down", str(folder)], check=False, timeout=60)
        pytest.fail(f"the test SLURM did not come up:\n{up.stdout}{up.stderr}"[-4000:])
    env = dict(os.environ)
    env.update(SLURM_CONF=str(folder / "slurm.conf"), PATH=f"{folder / 'bin'}:{env['PATH']}")
    try:
        yield Slurm(folder, env)
    finally:
        subprocess.run([str(CLUSTER), "down", str(folder)], check=False, timeout=60)
