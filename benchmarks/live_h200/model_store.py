#!/usr/bin/env python3
"""Trained weights kept in git history, out of the working tree, restored as device chunks.

    python -m benchmarks.live_h200.model_store restore longctx-model-followups-0.5.23 \
        [--extract outputs/models]

A device call carries the tracked tree (about 42 MB) plus at most 64 MiB in all, so the 60-MB
long-context model cannot be tracked, and a new checkout has no ignored files: each session had
to retrain it (2026-12-05: the trained weights were lost with the session). Instead the weights'
chunks were committed once and removed by the next commit; ``store.json`` in the run's folder
names that commit and every chunk's path. ``restore`` writes them into ``.gpu-bundle/`` (where
``lease_ready`` and the carry look) with ``git show``, then checks each chunk's size and sha256
against the committed manifest, so a lease carries exactly the weights the run measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.live_h200.chunks import ChunkError, assemble, read_manifest, sha256

RESULTS = Path("benchmarks/results/live-h200")


@dataclass(frozen=True)
class Store:
    """Where one run's weights live in history: a commit and the chunk files' paths in it."""

    commit: str
    manifest: str
    chunks: tuple[str, ...]


def read_store(run: str, repo: Path) -> Store:
    """``store.json`` of the run's folder; a clear error naming the file when absent."""
    path = repo / RESULTS / run / "store.json"
    if not path.is_file():
        raise ChunkError(f"{path}: no store.json; runs with stored weights have one")
    raw = json.loads(path.read_text())
    return Store(commit=raw["commit"], manifest=raw["manifest"], chunks=tuple(raw["chunks"]))


def git_blob(repo: Path, commit: str, path: str) -> bytes:
    """The bytes of PATH at COMMIT (``git show``), or an error saying the history lacks it."""
    run = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"],
                         capture_output=True, check=False)  # fmt: skip
    if run.returncode != 0:
        raise ChunkError(f"git show {commit[:12]}:{path} failed ({run.stderr.decode().strip()}):"
                         " this checkout lacks that commit; fetch main's full history")  # fmt: skip
    return run.stdout


def restore(run: str, repo: Path, into: Path) -> list[Path]:
    """Write the run's manifest and chunks into INTO and check them against the manifest."""
    store = read_store(run, repo)
    into.mkdir(parents=True, exist_ok=True)
    written = []
    for path in (store.manifest, *store.chunks):
        out = into / Path(path).name
        out.write_bytes(git_blob(repo, store.commit, path))
        written.append(out)
    parts, _whole = read_manifest(written[0])
    for digest, size, name in parts:
        chunk = into / name
        if not chunk.is_file() or chunk.stat().st_size != size or sha256(chunk) != digest:
            raise ChunkError(f"{chunk}: size or sha256 differs from {written[0].name}")
    return written


def extract(manifest: Path, into: Path) -> Path:
    """Assemble the chunks beside MANIFEST and unpack the tar into INTO (its ``longctx/`` etc.)."""
    whole = manifest.with_suffix("")  # longctx-model.tar.manifest -> longctx-model.tar
    assemble(manifest, whole)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(whole) as tar:
        tar.extractall(into, filter="data")
    return into


def main(argv: list[str] | None = None) -> int:
    """``restore RUN [--into DIR]``: exit 0 with the chunks written, 1 naming what is wrong."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("verb", choices=("restore",))
    parser.add_argument("run", help="folder under benchmarks/results/live-h200 with a store.json")
    parser.add_argument("--into", type=Path, default=Path(".gpu-bundle"))
    parser.add_argument("--repo", type=Path, default=Path("."))
    parser.add_argument("--extract", type=Path, default=None,
                        help="also assemble the tar and unpack it here (model=synth_longctx "
                             "reads outputs/models: --extract outputs/models)")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        written = restore(args.run, args.repo, args.into)
        if args.extract is not None:
            print(f"model_store: unpacked into {extract(written[0], args.extract)}")
    except ChunkError as err:
        print(f"model_store: {err}", file=sys.stderr)
        return 1
    print(f"model_store: {len(written)} files of {args.run} in {args.into}, sha256 checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
