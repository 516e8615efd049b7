"""Before a lease: the bundle a live plan needs is checked on the CPU machine, not on the device.

``lease_ready.py`` and ``live_signoff.sh`` run for real (subprocess, real chunk files cut by
``chunks.py``, a real git repo).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.live_h200.lease_ready import SERVING_LONGCTX_STEPS

LIVE = Path(__file__).resolve().parents[2] / "benchmarks" / "live_h200"

pytestmark = pytest.mark.integration


# A lease's exports in the caller's shell would change what lease_ready checks: not inherited.
_LEASE_ENV = ("LIVE_CODE_TAR", "MTP_EVAL_COMMIT", "LIVE_PLAN", "LIVE_SGLANG", "LIVE_SERVING_SKIP")


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None):
    base = {k: v for k, v in os.environ.items() if k not in _LEASE_ENV}
    return subprocess.run([*map(str, args)], capture_output=True, text=True, timeout=120,
                          check=False, cwd=cwd, env={**base, **(env or {})})  # fmt: skip


def _repo(tmp_path: Path, archives: list[str]) -> Path:
    repo = tmp_path / "repo"
    (repo / ".gpu-bundle").mkdir(parents=True)
    (repo / "code.py").write_text("print('tracked')\n")
    _run("git", "init", "-q", cwd=repo)
    _run("git", "add", "code.py", cwd=repo)
    for name in archives:
        big = tmp_path / name
        big.write_bytes(os.urandom(300_000))
        cut = _run(sys.executable, LIVE / "chunks.py", "split", big, repo / ".gpu-bundle",
                   "--chunk-mib", "0.1")  # fmt: skip
        assert cut.returncode == 0, cut.stderr
    return repo


def _ready(repo: Path, *args: str, env: dict[str, str] | None = None):
    return _run(sys.executable, "-m", "benchmarks.live_h200.lease_ready", "--repo", repo, *args,
                cwd=LIVE.parents[1], env=env)  # fmt: skip


FULL = ["sgl-site-0.5.23.tar.zst", "flash_ops.sm90a.so.zst", "jit-cache-fi.tgz"]


def test_a_whole_bundle_is_ready_and_says_how_many_calls_staging_takes(tmp_path):
    done = _ready(_repo(tmp_path, FULL), "--plan", "dependence")
    assert done.returncode == 0, done.stderr
    assert "SGLang 0.5.23" in done.stdout and "9 chunks" in done.stdout
    assert "2 staging calls" in done.stdout  # 8 paths a call: 3 manifests and 5 chunks, then 4
    calls = [json.loads(line.split(": ", 1)[1]) for line in done.stdout.splitlines()[1:]]
    assert [len(c) for c in calls] == [8, 4] and all(c.startswith(".gpu-bundle/") for c in calls[0])
    chunks = [name.split("/")[1] for call in calls for name in call if ".part-" in name]
    # the site first, the JIT cache next, FA3 last: the order the device unpacks them
    assert chunks == [f"{a}.part-{i:02d}" for a in (FULL[0], FULL[2], FULL[1]) for i in range(3)]


def test_a_plan_of_another_release_names_the_archive_and_how_to_build_it(tmp_path):
    got = _ready(_repo(tmp_path, FULL), "--plan", "signoff")
    assert got.returncode == 1
    assert (
        "SGLang 0.5.19's site archive: no .gpu-bundle/sgl-site-0.5.19.tar.*.manifest" in got.stderr
    )
    assert "WHEELS_TXT=benchmarks/live_h200/wheels.txt" in got.stderr
    assert (
        _ready(_repo(tmp_path / "b", FULL), "--plan", "signoff", "--sglang", "0.5.23").returncode
        == 0
    )


def test_no_jit_cache_is_refused_unless_a_cold_compile_is_accepted(tmp_path):
    repo = _repo(tmp_path, FULL[:2])
    got = _ready(repo, "--plan", "frontier")
    assert got.returncode == 1 and "a FlashInfer JIT cache: no .gpu-bundle/jit-cache" in got.stderr
    assert "--allow-cold-jit" in got.stderr
    assert _ready(repo, "--plan", "frontier", "--allow-cold-jit").returncode == 0


def test_a_missing_or_altered_chunk_is_named(tmp_path):
    repo = _repo(tmp_path, FULL)
    (repo / ".gpu-bundle" / "flash_ops.sm90a.so.zst.part-01").unlink()
    part = repo / ".gpu-bundle" / "sgl-site-0.5.23.tar.zst.part-00"
    part.write_bytes(b"x" + part.read_bytes()[1:])
    got = _ready(repo, "--plan", "v23")
    assert got.returncode == 1
    assert "chunk flash_ops.sm90a.so.zst.part-01 is missing" in got.stderr
    assert "chunk sgl-site-0.5.23.tar.zst.part-00 differs from" in got.stderr


@pytest.mark.parametrize("plan", ["longctx-cell", "longctx-frontier", "serving"])
def test_a_plan_serving_the_long_context_model_needs_its_weights_and_says_how_to_restore_them(
    tmp_path, plan
):
    got = _ready(_repo(tmp_path, FULL), "--plan", plan)
    assert got.returncode == 1
    assert "the trained long-context model: no .gpu-bundle/longctx-model.tar.manifest" in got.stderr
    assert "model_store restore longctx-model-followups-0.5.23" in got.stderr
    done = _ready(_repo(tmp_path / "b", [*FULL, "longctx-model.tar"]), "--plan", plan)
    assert done.returncode == 0, done.stderr
    assert "12 chunks" in done.stdout


def test_a_serving_lease_of_the_8b_shape_alone_carries_no_weights(tmp_path):
    repo = _repo(tmp_path, [*FULL, "longctx-model.tar"])
    skip = "lc-on-v2 lc-off-v2 lc-on lc-off lc-bench lc-st-seq lc-st-pre sv-bench"
    done = _ready(repo, "--plan", "serving", env={"LIVE_SERVING_SKIP": skip})
    assert done.returncode == 0, done.stderr
    assert "9 chunks" in done.stdout and "longctx-model" not in done.stdout
    # one trained-model step still run: the weights travel
    more = _ready(repo, "--plan", "serving", "--serving-skip", skip.replace("lc-bench ", ""))
    assert "12 chunks" in more.stdout


def test_the_trained_models_serving_steps_are_the_plans_own():
    script = (LIVE / "live_signoff.sh").read_text()
    block = script.split("SERVING_STEPS=(", 1)[1].split(")\n", 1)[0]
    names = {line.strip().strip('"').split()[0] for line in block.splitlines() if line.strip()}
    assert {n for n in names if n.startswith("lc-")} == set(SERVING_LONGCTX_STEPS)


def test_an_unknown_plan_is_a_usage_error(tmp_path):
    got = _ready(_repo(tmp_path, FULL), "--plan", "speeed")
    assert got.returncode == 2 and "--plan 'speeed': one of signoff" in got.stderr


def test_live_signoff_refuses_a_plan_of_another_release_than_the_carried_bundle(tmp_path):
    repo = _repo(tmp_path, FULL[:1])
    env = {"LIVE": str(tmp_path / "live"), "MTP_CHUNKS": str(tmp_path / "none")}
    got = _run("bash", LIVE / "live_signoff.sh", "tick", "0", cwd=repo, env=env)
    assert got.returncode == 2
    assert (
        "LIVE_PLAN=signoff plans SGLang 0.5.19, the carried bundle is SGLang 0.5.23" in got.stderr
    )
    assert not (tmp_path / "live").exists()  # nothing started


def _code_tar(repo: Path) -> str:
    """A real ``git archive`` of the repo's one commit; returns that commit."""
    _run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c", cwd=repo)
    sha = _run("git", "rev-parse", "HEAD", cwd=repo).stdout.strip()
    made = _run("git", "archive", "--format=tar.gz", "-o", ".gpu-bundle/code.tar.gz", sha,
                "code.py", cwd=repo)  # fmt: skip
    assert made.returncode == 0, made.stderr
    return sha


def test_the_code_tarball_travels_in_every_call_and_must_hold_the_named_commit(tmp_path):
    repo = _repo(tmp_path, FULL)
    sha = _code_tar(repo)
    args = ("--plan", "dependence", "--code-tar", ".gpu-bundle/code.tar.gz")
    done = _ready(repo, *args, "--commit", sha)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line.split(": ", 1)[1]) for line in done.stdout.splitlines()[1:]]
    assert all(c[0] == ".gpu-bundle/code.tar.gz" for c in calls) and len(calls) == 2
    assert sum(".part-" in n for c in calls for n in c) == 9  # no chunk lost to the extra path
    wrong = _ready(repo, *args, "--commit", "0" * 40)
    assert wrong.returncode == 1 and f"holds commit {sha[:12]}" in wrong.stderr
    assert "MTP_EVAL_COMMIT=000000000000" in wrong.stderr
    gone = _ready(repo, "--plan", "dependence", "--code-tar", ".gpu-bundle/code-x.tar.gz")
    assert gone.returncode == 1 and "git archive --format=tar.gz" in gone.stderr
