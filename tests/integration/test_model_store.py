"""model_store restores weights kept in git history, checked against their manifest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.live_h200.model_store import main
from tests.helpers.cells import REPO

# Each stored run and its tar's size (its README's figure): the carried model and the one the
# long-context frontier runs so far measured.
RUNS = [("longctx-model-followups-0.5.23", 60_160_000), ("longctx-model-worked-0.5.23", 60_149_760)]


@pytest.mark.parametrize(("run_name", "tar_bytes"), RUNS)
def test_the_long_context_weights_come_back_from_history_whole(
    tmp_path: Path, run_name: str, tar_bytes: int
) -> None:
    ask = ["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"]
    shallow = subprocess.run(ask, capture_output=True, text=True, check=False).stdout.strip()
    if shallow != "false":  # a shallow or git-less copy has no history to restore from
        pytest.skip(f"{REPO} is not a full git clone (is-shallow: {shallow!r})")
    assert main(["restore", run_name, "--into", str(tmp_path), "--repo", str(REPO)]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    parts = [f"longctx-model.tar.part-0{i}" for i in range(4)]
    assert names == ["longctx-model.tar.manifest", *parts]
    # The four chunks make the tar the run's README names, byte for byte.
    joined = tmp_path / "longctx-model.tar"
    run = subprocess.run([sys.executable, str(REPO / "benchmarks/live_h200/chunks.py"), "assemble",
                          str(tmp_path / "longctx-model.tar.manifest"), str(joined)],
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert joined.stat().st_size == tar_bytes
    # --extract: the folders model=synth_longctx reads, unpacked from the same chunks.
    models = tmp_path / "models"
    assert main(["restore", run_name, "--into", str(tmp_path / "again"), "--repo", str(REPO),
                 "--extract", str(models)]) == 0  # fmt: skip
    assert (models / "longctx" / "target" / "model.safetensors").stat().st_size == 50_897_920
    assert (models / "longctx" / "draft" / "config.json").is_file()


def test_a_run_without_stored_weights_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["restore", "signoff-0.5.23", "--into", str(tmp_path), "--repo", str(REPO)]) == 1
    assert "signoff-0.5.23/store.json: no store.json" in capsys.readouterr().err
