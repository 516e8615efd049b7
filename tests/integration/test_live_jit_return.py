"""``LIVE_SEND_JIT=1``: a lease's last call brings the host's JIT cache back for the next lease.

The tick packs ``SGLANG_CACHE_DIR`` (less the marker of a cache it unpacked) into chunks and a
manifest in ``$OUT``, the form ``lease_ready`` looks for and ``setup_on_gpu.sh`` unpacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from benchmarks.live_h200 import chunks
from tests.helpers.cells import REPO

pytestmark = pytest.mark.integration
SCRIPT = REPO / "benchmarks" / "live_h200" / "live_signoff.sh"


def send(tmp_path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "out").mkdir()
    # LIVE_PLAN=frontier on 0.5.19 starts no phase on the simulated server: only the return runs.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "LIVE": str(tmp_path / "live"), "MTP_REPO": str(tmp_path / "repo"),
           "LIVE_PLAN": "frontier", "LIVE_SGLANG": "0.5.19", "LIVE_SERVER": "simulated",
           "MTP_EVAL_COMMIT": "a85cf88e", "OUT": str(tmp_path / "out"), "LIVE_SEND_JIT": "1",
           "SGLANG_CACHE_DIR": str(cache)}  # fmt: skip
    return subprocess.run(["bash", str(SCRIPT), "tick", "0"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip


def test_the_cache_comes_back_whole_as_chunks_and_manifest(tmp_path: Path):
    cache = tmp_path / "cache"
    (cache / "flashinfer" / "fmha_v2").mkdir(parents=True)
    (cache / "flashinfer" / "fmha_v2" / "kernel.so").write_bytes(os.urandom(3000))
    (cache / ".from-jit-cache-0.5.23.tgz").touch()  # the earlier lease's marker stays behind
    run = send(tmp_path, cache)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "JIT cache:" in run.stdout and "in 2 files" in run.stdout
    manifest = tmp_path / "out" / "jit-cache-0.5.19.tgz.manifest"
    assert chunks.missing_chunks(manifest) == []
    chunks.assemble(manifest, tmp_path / "back.tgz")
    with tarfile.open(tmp_path / "back.tgz") as tar:
        names = set(tar.getnames())
        member = tar.extractfile("./flashinfer/fmha_v2/kernel.so")
        assert member is not None
        got = member.read()
    assert got == (cache / "flashinfer" / "fmha_v2" / "kernel.so").read_bytes()
    assert "./.from-jit-cache-0.5.23.tgz" not in names
    assert not (tmp_path / "out" / "live-state.tgz").exists()  # that call returns the cache only


def test_no_cache_folder_is_said_and_fails_the_call(tmp_path: Path):
    run = send(tmp_path, tmp_path / "nowhere")
    assert run.returncode == 1
    assert f"JIT cache: no folder {tmp_path / 'nowhere'}, nothing sent" in run.stdout
    assert list((tmp_path / "out").iterdir()) == []
