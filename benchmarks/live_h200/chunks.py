#!/usr/bin/env python3
"""Cut a large file into transfer-sized chunks with sha256 checksums, and put it back together.

The device tool moves at most 64 MiB a call, repo included, so the bundle archives travel as
chunks, one or two a call, while the GPU machine stays warm (files under /tmp survive between
warm calls). Here (``make_bundle.sh``):

    python3 benchmarks/live_h200/chunks.py split FILE OUTDIR --chunk-mib 40

writes ``OUTDIR/NAME.part-00 ...`` and ``OUTDIR/NAME.manifest`` (one ``sha256 bytes name`` line
per chunk, then one for the whole file). On the GPU host (``setup_on_gpu.sh``):

    python3 benchmarks/live_h200/chunks.py stage DIR... --into /tmp/mtp-chunks
    python3 benchmarks/live_h200/chunks.py assemble /tmp/mtp-chunks/NAME.manifest OUTFILE

``stage`` copies whatever chunks, manifests and checksum files a call carried; ``assemble`` checks
every chunk and the whole against the manifest and exits 3, naming what is missing, while chunks
are still to come (so a call that carried only the first chunk ends cleanly), or 1 on a checksum
mismatch.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path

MISSING = 3


class ChunkError(RuntimeError):
    """A chunk or the assembled file does not match its manifest."""


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def split(path: Path, outdir: Path, chunk_bytes: int) -> Path:
    """Write ``path`` as chunks of at most ``chunk_bytes`` and a manifest; return the manifest."""
    outdir.mkdir(parents=True, exist_ok=True)
    for old in outdir.glob(f"{path.name}.part-*"):
        old.unlink()
    lines, index = [], 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(chunk_bytes), b""):
            part = outdir / f"{path.name}.part-{index:02d}"
            part.write_bytes(block)
            lines.append(f"{hashlib.sha256(block).hexdigest()} {len(block)} {part.name}")
            index += 1
    lines.append(f"{sha256(path)} {path.stat().st_size} {path.name}")
    manifest = outdir / f"{path.name}.manifest"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def read_manifest(manifest: Path) -> tuple[list[tuple[str, int, str]], tuple[str, int, str]]:
    """The chunk entries and the whole-file entry of a manifest."""
    entries = []
    for number, line in enumerate(manifest.read_text().splitlines(), start=1):
        fields = line.split()
        if len(fields) != 3 or not fields[1].isdigit():
            raise ChunkError(f"{manifest}: line {number} is not 'sha256 bytes name': {line!r}")
        entries.append((fields[0], int(fields[1]), fields[2]))
    if len(entries) < 2:
        raise ChunkError(f"{manifest}: needs chunk lines and a last line for the whole file")
    return entries[:-1], entries[-1]


def missing_chunks(manifest: Path) -> list[str]:
    """Chunks the manifest lists that are not beside it yet."""
    chunks, _ = read_manifest(manifest)
    return [name for _, _, name in chunks if not (manifest.parent / name).is_file()]


def assemble(manifest: Path, out: Path) -> None:
    """Check each chunk, join them into ``out`` and check the whole; raise ChunkError if not."""
    chunks, (whole_sum, whole_size, _) = read_manifest(manifest)
    for digest, size, name in chunks:
        part = manifest.parent / name
        if part.stat().st_size != size or sha256(part) != digest:
            raise ChunkError(f"{part}: sha256 or size differs from {manifest.name}; carry it again")
    partial = out.with_name(out.name + ".partial")
    with partial.open("wb") as handle:
        for _, _, name in chunks:
            with (manifest.parent / name).open("rb") as piece:
                shutil.copyfileobj(piece, handle, 1 << 20)
    if partial.stat().st_size != whole_size or sha256(partial) != whole_sum:
        partial.unlink()
        raise ChunkError(f"{out}: joined chunks differ from {manifest.name} (whole-file sha256)")
    partial.replace(out)


def stage(sources: list[Path], into: Path) -> list[str]:
    """Copy every ``*.part-*``, ``*.manifest`` and ``*.sha256`` under ``sources`` into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    copied = []
    for source in sources:
        for path in sorted(source.glob("*")) if source.is_dir() else []:
            if ".part-" in path.name or path.name.endswith((".manifest", ".sha256")):
                shutil.copyfile(path, into / path.name)
                copied.append(path.name)
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    p_split = sub.add_parser("split")
    p_split.add_argument("file", type=Path)
    p_split.add_argument("outdir", type=Path)
    p_split.add_argument("--chunk-mib", type=float, default=40.0)
    p_stage = sub.add_parser("stage")
    p_stage.add_argument("sources", type=Path, nargs="+")
    p_stage.add_argument("--into", type=Path, required=True)
    p_join = sub.add_parser("assemble")
    p_join.add_argument("manifest", type=Path)
    p_join.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.verb == "split":
        manifest = split(args.file, args.outdir, int(args.chunk_mib * 1048576))
        print(f"chunks: {manifest}\n{manifest.read_text()}", end="")
        return 0
    if args.verb == "stage":
        print(f"chunks: staged {stage(args.sources, args.into) or 'nothing'} in {args.into}")
        return 0
    waiting = missing_chunks(args.manifest)
    if waiting:
        print(f"chunks: {args.manifest.name}: still to carry: {', '.join(waiting)}")
        return MISSING
    try:
        assemble(args.manifest, args.out)
    except (ChunkError, OSError) as exc:
        print(f"chunks: {exc}", file=sys.stderr)
        return 1
    print(f"chunks: {args.out} assembled and verified ({args.out.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
