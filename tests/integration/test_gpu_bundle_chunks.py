"""The GPU bundle travels as checksummed chunks over several device calls.

``chunks.py`` and ``setup_on_gpu.sh`` run for real (subprocess, real files): a call that carried
only the first chunk ends with status 3 and names what is still to come; the next call assembles,
verifies and unpacks the site and installs the FA3 library; a corrupted chunk is named. The
sm_90a cut runs on a synthetic fatbin section.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from benchmarks.live_h200 import fatbin_slim

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "benchmarks/live_h200"

pytestmark = pytest.mark.integration


def chunks(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(LIVE / "chunks.py"), *map(str, args)],
                          capture_output=True, text=True)  # fmt: skip


def test_split_then_assemble_gives_the_same_bytes_and_names_a_bad_chunk(tmp_path: Path) -> None:
    data = os.urandom(300_000)
    (tmp_path / "big.bin").write_bytes(data)
    split = chunks("split", tmp_path / "big.bin", tmp_path / "out", "--chunk-mib", "0.1")
    assert split.returncode == 0
    manifest = tmp_path / "out/big.bin.manifest"
    assert len(manifest.read_text().splitlines()) == 4  # 3 chunks of <= 104,857 bytes + the whole
    done = chunks("assemble", manifest, tmp_path / "joined.bin")
    assert done.returncode == 0 and (tmp_path / "joined.bin").read_bytes() == data
    part = tmp_path / "out/big.bin.part-01"
    body = part.read_bytes()
    part.write_bytes(bytes([body[0] ^ 0xFF]) + body[1:])  # a changed byte, whatever was there
    bad = chunks("assemble", manifest, tmp_path / "again.bin")
    assert bad.returncode == 1 and "big.bin.part-01" in bad.stderr
    assert not (tmp_path / "again.bin").exists()
    part.unlink()
    waiting = chunks("assemble", manifest, tmp_path / "again.bin")
    assert waiting.returncode == 3 and "big.bin.part-01" in waiting.stdout


def fake_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "benchmarks/live_h200").mkdir(parents=True)
    shutil.copy(REPO / "benchmarks/__init__.py", repo / "benchmarks")  # a package, run with -m
    for name in (
        "__init__.py",
        "setup_on_gpu.sh",
        "chunks.py",
        "make_tiny_model.py",
        "synth_train.py",
        "synth_tasks.py",
    ):
        shutil.copy(LIVE / name, repo / "benchmarks/live_h200" / name)
    # make_tiny_model reads the chat template from synth_train beside it, which imports evals,
    # as on the host's checkout
    shutil.copytree(REPO / "evals", repo / "evals", ignore=shutil.ignore_patterns("data"))
    return repo


# The lines of SGLang 0.5.19's layers/attention/dsa_backend.py around its unguarded import.
DSA_BACKEND_0_5_19 = """import logging


def is_cuda():
    return True


if is_cuda():
    import deep_gemm

logger = logging.getLogger(__name__)
"""


def make_bundle(tmp_path: Path) -> tuple[Path, bytes]:
    """A site archive and an FA3 library, each cut into chunks as make_bundle.sh does."""
    site = tmp_path / "build/sgl-site"
    (site / "sgl_kernel").mkdir(parents=True)
    (site / "sgl_kernel/__init__.py").write_text("")
    (site / "marker.txt").write_bytes(os.urandom(200_000))
    dsa = site / "sglang/srt/layers/attention/dsa_backend.py"
    dsa.parent.mkdir(parents=True)
    dsa.write_text(DSA_BACKEND_0_5_19)
    archive = tmp_path / "build/sgl-site-0.5.19.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(site, arcname="sgl-site")
    library = os.urandom(250_000)
    so = tmp_path / "build/flash_ops.sm90a.so"
    so.write_bytes(library)
    subprocess.run(["xz", "-k", "-0", str(so)], check=True)
    out = tmp_path / "chunks"
    for path in (archive, Path(str(so) + ".xz")):
        assert chunks("split", path, out, "--chunk-mib", "0.15").returncode == 0
    digest = subprocess.run(["sha256sum", so.name], cwd=so.parent, capture_output=True, text=True)
    (out / "flash_ops.sm90a.so.sha256").write_text(digest.stdout)
    return out, library


def source_setup(repo: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    model = tmp_path / "tiny"
    model.mkdir(exist_ok=True)
    recipe = {"kind": "tiny-random-llama", "version": 1, "seed": 0, "vocab_size": 4096}
    (model / "mtp_eval_recipe.json").write_text(json.dumps(recipe) + "\n")  # made already
    env = {**os.environ, "SGL_SITE_PARENT": str(tmp_path / "host"), "TINY_MODEL": str(model),
           "MTP_CHUNKS": str(tmp_path / "host/chunks"), "PYTHONPATH": ""}  # fmt: skip
    script = ". benchmarks/live_h200/setup_on_gpu.sh; echo rc=$?"
    return subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def carry(repo: Path, out: Path, names: list[str]) -> None:
    """What one device call carries: exactly these files in .gpu-bundle/."""
    shutil.rmtree(repo / ".gpu-bundle", ignore_errors=True)
    (repo / ".gpu-bundle").mkdir()
    for name in names:
        shutil.copy(out / name, repo / ".gpu-bundle" / name)


def test_setup_assembles_over_calls_and_installs_fa3(tmp_path: Path) -> None:
    repo = fake_repo(tmp_path)
    out, library = make_bundle(tmp_path)
    site_parts = sorted(p.name for p in out.glob("sgl-site-*.part-*"))
    fa3_files = sorted(p.name for p in out.glob("flash_ops*"))
    assert len(site_parts) >= 2
    carry(repo, out, ["sgl-site-0.5.19.tar.xz.manifest", site_parts[0]])
    first = source_setup(repo, tmp_path)
    assert "rc=3" in first.stdout and site_parts[1] in first.stdout + first.stderr
    assert not (tmp_path / "host/sgl-site").exists()
    carry(repo, out, site_parts[1:] + fa3_files)
    second = source_setup(repo, tmp_path)
    log = second.stdout + second.stderr
    assert (tmp_path / "host/sgl-site/marker.txt").is_file(), log
    assert "fa3: flash_ops.abi3.so (sm_90a) installed and verified" in log
    assert (tmp_path / "host/sgl-site/sgl_kernel/flash_ops.abi3.so").read_bytes() == library
    # 0.5.19's DSA backend imports deep_gemm (not in the bundle) when graphs capture: guarded
    assert "deep_gemm import guarded" in log
    dsa = tmp_path / "host/sgl-site/sglang/srt/layers/attention/dsa_backend.py"
    assert Path(f"{dsa}.orig").read_text() == DSA_BACKEND_0_5_19
    imported = subprocess.run([sys.executable, "-c", f"import runpy; print(runpy.run_path('{dsa}')"
                               "['deep_gemm'])"], capture_output=True, text=True)  # fmt: skip
    assert imported.stdout.strip() == "None", imported.stderr
    # no SGLang here: the import check that follows must fail, and say so
    assert "import check failed" in log and "rc=1" in second.stdout


def test_a_carried_jit_cache_is_unpacked_once_into_the_hosts_cache(tmp_path: Path) -> None:
    # Compiled kernels brought back from an earlier lease: in SGLANG_CACHE_DIR before any server
    # starts, even on the first call, while the site's chunks are still to come.
    repo = fake_repo(tmp_path)
    out, _ = make_bundle(tmp_path)
    compiled = tmp_path / "lease/.cache/flashinfer/0.7.2/90a/cached_ops/fmha_v2"
    compiled.mkdir(parents=True)
    (compiled / "fmha_v2.so").write_bytes(os.urandom(150_000))
    packed = tmp_path / "build/jit-cache-0.5.23-h200.tgz"
    subprocess.run(
        ["tar", "-czf", str(packed), "-C", str(tmp_path / "lease"), ".cache"], check=True
    )
    assert chunks("split", packed, out, "--chunk-mib", "0.1").returncode == 0
    jit_parts = sorted(p.name for p in out.glob("jit-cache-*.part-*"))
    cache = tmp_path / "host/sglang-cache"
    os.environ["SGLANG_CACHE_DIR"] = str(cache)
    try:
        manifests = ["jit-cache-0.5.23-h200.tgz.manifest", "sgl-site-0.5.19.tar.xz.manifest"]
        carry(repo, out, [*manifests, jit_parts[0]])
        first = source_setup(repo, tmp_path)
        assert "jit cache: not complete yet" in first.stdout and "rc=3" in first.stdout
        carry(repo, out, jit_parts[1:])
        second = source_setup(repo, tmp_path)
        assert "jit cache: jit-cache-0.5.23-h200.tgz unpacked" in second.stdout, second.stderr
        unpacked = cache / ".cache/flashinfer/0.7.2/90a/cached_ops/fmha_v2/fmha_v2.so"
        assert unpacked.read_bytes() == (compiled / "fmha_v2.so").read_bytes()
        third = source_setup(repo, tmp_path)  # the next call of the lease: nothing again
        assert "jit cache" not in third.stdout
    finally:
        del os.environ["SGLANG_CACHE_DIR"]


def fatbin(entries: list[tuple[int, int, bytes]]) -> bytes:
    """One fatbin: a 16-byte header, then (kind, arch, payload) entries with 64-byte headers."""
    body = b""
    for kind, arch, payload in entries:
        header = bytearray(64)
        struct.pack_into("<HHIQ", header, 0, kind, 0, 64, len(payload))
        struct.pack_into("<I", header, 28, arch)
        body += bytes(header) + payload
    return struct.pack("<IHHQ", fatbin_slim.FATBIN_MAGIC, 1, 16, len(body)) + body


def test_fatbin_cut_keeps_only_the_leading_sm90a_elf() -> None:
    one = fatbin([(2, 90, b"A" * 100), (2, 80, b"B" * 50), (2, 86, b"C" * 70)])
    two = fatbin([(2, 90, b"D" * 30), (2, 80, b"E" * 40)])
    buf = bytearray(b"\0" * 8 + one + b"\0" * 8 + two)
    count, zeroed = fatbin_slim.slim(buf, 0, len(buf))
    assert (count, zeroed) == (2, 64 + 50 + 64 + 70 + 64 + 40)
    assert len(buf) == 16 + len(one) + len(two)  # nothing moved
    assert b"A" * 100 in buf and b"D" * 30 in buf and not set(b"BCE") & set(buf)
    assert struct.unpack_from("<Q", buf, 8 + 8)[0] == 64 + 100
    with pytest.raises(SystemExit, match="does not lead with sm_90a"):
        fatbin_slim.slim(bytearray(fatbin([(2, 80, b"x")])), 0, 100)


DEVICE_CALL_BYTES = 64 * 2**20  # the device tool moves at most this per call, repo included


def test_one_chunk_and_the_repo_fit_one_device_call() -> None:
    """A committed result or model that grows the repo must not silently break the transfers."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False)
    if listed.returncode != 0:  # an unpacked sdist has no index to size; .ci/run runs in a clone
        pytest.skip("not a git checkout")
    tracked = sum((REPO / p).stat().st_size for p in listed.stdout.decode().split("\0") if p
                  and (REPO / p).is_file())  # fmt: skip
    script = (LIVE / "make_bundle.sh").read_text()
    chunk_mib = int(script.split('CHUNK_MIB="${CHUNK_MIB:-', 1)[1].split("}", 1)[0])
    margin = 2 * 2**20  # untracked files and the carried manifests
    assert tracked + chunk_mib * 2**20 + margin <= DEVICE_CALL_BYTES, (
        f"tracked files {tracked / 2**20:.1f} MiB + a {chunk_mib}-MiB chunk exceed one device "
        f"call ({DEVICE_CALL_BYTES // 2**20} MiB): lower CHUNK_MIB in make_bundle.sh or move "
        "large committed files into an archive"
    )
