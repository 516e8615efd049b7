#!/usr/bin/env python3
"""Before a lease: is everything a live plan needs here, whole, and for the right SGLang release?

    python3 -m benchmarks.live_h200.lease_ready --plan dependence [--allow-cold-jit]

A lease starts its 30 minutes at the first call, so every missing or mismatched piece found on
the device is device time spent staging (issue 41 item 6: a phase run without ``LIVE_PLAN``
planned for 0.5.19 against a 0.5.23 bundle and its servers died on their first request; a fresh
checkout has no JIT cache, so its first lease paid a 6-12 minute cold compile). Checked here, on
the CPU machine, in seconds:

- the plan's release (``live_signoff.sh``'s rule, ``LIVE_SGLANG`` over it) has its site archive's
  manifest in ``.gpu-bundle/`` and every chunk it lists, each of the size and sha256 it names;
- SGLang's FA3 build (``flash_ops*.manifest``) is there and whole;
- a FlashInfer JIT cache (``jit-cache-*.tgz.manifest``) is there and whole, or ``--allow-cold-jit``
  says the lease may pay the compile;
- the repo and the largest chunk fit one device call (64 MiB), so no call is refused midway.

Prints the staging calls, each as the ``carry`` list to pass: the manifests (and FA3's sha256)
first, then the chunks in the order the device unpacks them (site, JIT cache, model, FA3), as many
a call as fit beside the repo (a call carrying two 16-MiB chunks beside a 49-MB tree was refused
on 2026-12-06). Exit 0 when ready, 1 naming each missing piece and its fix, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.live_h200.chunks import ChunkError, read_manifest, sha256

DEVICE_CALL_BYTES = 64 * 2**20
MARGIN_BYTES = 2 * 2**20  # untracked files and the carried manifests
CARRY_PATHS = 8  # a device call carries at most 8 named paths
# The order the device wants them: the site unpacks while the rest travels, FA3 last.
CARRY_ORDER = ("sgl-site-", "jit-cache-", "longctx-model", "flash_ops")
# live_signoff.sh: the plans that run SGLang 0.5.23 (the others 0.5.19), unless LIVE_SGLANG says.
PLANS_0523 = (
    "v23",
    "speed",
    "dependence",
    "frontier",
    "shapes",
    "full-shapes",
    "train-longctx",
    "longctx-cell",
    "longctx-frontier",
    "serving",
    "parity",
)
PLANS = ("signoff", "two-gpu", "two-gpu-fmha", *PLANS_0523)


def plan_release(plan: str, override: str | None) -> str:
    """The SGLang release a live plan runs: ``LIVE_SGLANG`` if set, else the plan's own."""
    if plan not in PLANS:
        raise ValueError(f"--plan {plan!r}: one of {', '.join(PLANS)}")
    return override or ("0.5.23" if plan in PLANS_0523 else "0.5.19")


@dataclass(frozen=True)
class Piece:
    """One archive the lease needs: its manifest glob, and what to do when it is missing."""

    what: str
    pattern: str
    fix: str


# Plans that serve the trained long-context model: its weights travel as chunks too.
PLANS_LONGCTX_WEIGHTS = ("longctx-cell", "longctx-frontier", "serving")
LONGCTX_STORE = "longctx-model-followups-0.5.23"
# live_signoff.sh's SERVING_STEPS on that model: a serving lease whose LIVE_SERVING_SKIP names
# them all runs the 8B shape only, and its staging need not carry 60 MB of weights.
SERVING_LONGCTX_STEPS = (
    "lc-on-v2",
    "lc-off-v2",
    "lc-on",
    "lc-off",
    "lc-bench",
    "lc-st-seq",
    "lc-st-pre",
)


def needs_longctx_weights(plan: str, serving_skip: str = "") -> bool:
    """Whether a lease of ``plan`` serves the trained long-context model (``LIVE_SERVING_SKIP``)."""
    if plan == "serving" and set(SERVING_LONGCTX_STEPS) <= set(serving_skip.split()):
        return False
    return plan in PLANS_LONGCTX_WEIGHTS


def pieces(
    release: str, allow_cold_jit: bool, plan: str = "", serving_skip: str = ""
) -> list[Piece]:
    """What a lease of this release (and, for some plans, their model) carries."""
    wheels = "wheels-0.5.23.txt" if release == "0.5.23" else "wheels.txt"
    build = (f"WHEELS_TXT=benchmarks/live_h200/{wheels} SITE_PACK=zstd "
             "bash benchmarks/live_h200/make_bundle.sh")  # fmt: skip
    need = [
        Piece(f"SGLang {release}'s site archive", f"sgl-site-{release}.tar.*.manifest", build),
        Piece("SGLang's FA3 build (flash_ops)", "flash_ops*.manifest", build),
    ]
    if needs_longctx_weights(plan, serving_skip):
        need.append(Piece(
            "the trained long-context model", "longctx-model.tar.manifest",
            f"python -m benchmarks.live_h200.model_store restore {LONGCTX_STORE}",
        ))  # fmt: skip
    if not allow_cold_jit:
        need.append(Piece(
            "a FlashInfer JIT cache", "jit-cache-*.tgz.manifest",
            "cut the jit-cache tarball an earlier lease brought back into .gpu-bundle/ with "
            "chunks.py split (setup_on_gpu.sh unpacks it), or pass --allow-cold-jit to accept a "
            "6-12 minute cold compile on the first call",
        ))  # fmt: skip
    return need


def piece_problems(bundle: Path, piece: Piece) -> tuple[list[str], list[int]]:
    """What is wrong with one piece (empty: whole), and its chunks' sizes."""
    found = sorted(bundle.glob(piece.pattern))
    if not found:
        return [f"{piece.what}: no {bundle.name}/{piece.pattern}; {piece.fix}"], []
    try:
        chunks, _ = read_manifest(found[-1])
    except ChunkError as exc:
        return [f"{piece.what}: {exc}; {piece.fix}"], []
    problems = []
    for digest, size, name in chunks:
        part = bundle / name
        if not part.is_file():
            problems.append(f"{piece.what}: chunk {name} is missing; {piece.fix}")
        elif part.stat().st_size != size or sha256(part) != digest:
            problems.append(f"{piece.what}: chunk {name} differs from {found[-1].name}; rebuild it")
    return problems, [size for _, size, _ in chunks]


def repo_bytes(repo: Path) -> int:
    """Bytes of the tracked files: what every device call carries besides its chunk."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True)
    names = [n for n in listed.stdout.decode().split("\0") if n]
    return sum((repo / n).stat().st_size for n in names if (repo / n).is_file())


def staging_calls(
    firsts: Sequence[str],
    chunks: Sequence[tuple[str, int]],
    room: int,
    every: Sequence[str] = (),
) -> list[list[str]]:
    """The carry list of each staging call: ``every`` (the code tarball each tick unpacks) in
    all of them, ``firsts`` (small) in the first, then ``chunks`` (name, bytes) in their order,
    as many a call as ``room`` bytes (``every``'s already taken out) and CARRY_PATHS allow."""
    calls: list[list[str]] = [[*every, *firsts]]
    used, packed = 0, 0  # the call's chunk bytes and chunks (one always goes: fit_problem's)
    for name, size in chunks:
        if (packed and used + size > room) or len(calls[-1]) >= CARRY_PATHS:
            calls.append(list(every))
            used, packed = 0, 0
        calls[-1].append(name)
        used, packed = used + size, packed + 1
    return calls


def _carry_rank(name: str) -> int:
    return next((i for i, p in enumerate(CARRY_ORDER) if name.startswith(p)), len(CARRY_ORDER))


def _carry_plan(
    bundle: Path, manifests: list[Path], room: int, code_tar: Path | None
) -> list[list[str]]:
    chunks = []
    for manifest in sorted(manifests, key=lambda m: _carry_rank(m.name)):
        chunks += [(f"{bundle.name}/{n}", size) for _, size, n in read_manifest(manifest)[0]]
    firsts = [f"{bundle.name}/{m.name}" for m in manifests]
    firsts += [f"{bundle.name}/{p.name}" for p in sorted(bundle.glob("flash_ops*.sha256"))]
    if code_tar is None:
        return staging_calls(firsts, chunks, room)
    every = [str(code_tar.relative_to(bundle.parent))]
    return staging_calls(firsts, chunks, room - code_tar.stat().st_size, every)


def code_tar_problem(code_tar: Path, commit: str | None) -> str | None:
    """Why the code tarball ``LIVE_CODE_TAR`` names cannot run as ``MTP_EVAL_COMMIT`` (None: it
    can): every tick unpacks it, and cells record that commit, so both must name the same one.
    ``git archive`` writes the commit into the tarball's pax header, which is what is read."""
    fix = (f"git archive --format=tar.gz -o {code_tar} <sha> pipeline evals backends conf "
           "benchmarks/live_h200 benchmarks/__init__.py pyproject.toml")  # fmt: skip
    if not code_tar.is_file():
        return f"LIVE_CODE_TAR={code_tar} is not here: make it with `{fix}`"
    try:
        with tarfile.open(code_tar) as archive:
            archived = archive.pax_headers.get("comment", "")
    except (tarfile.TarError, OSError) as exc:
        return f"LIVE_CODE_TAR={code_tar} is not a readable tarball ({exc}): remake it with `{fix}`"
    if commit and not (archived.startswith(commit) or commit.startswith(archived or "-")):
        return (f"LIVE_CODE_TAR={code_tar} holds commit {archived[:12] or '?'} but "
                f"MTP_EVAL_COMMIT={commit[:12]}: the cells would record the wrong code; remake "
                f"it from {commit[:12]} or name its commit")  # fmt: skip
    return None


def fit_problem(repo_size: int, largest_chunk: int) -> str | None:
    """Why one call cannot carry the repo and the largest chunk (None: it can)."""
    total = repo_size + largest_chunk + MARGIN_BYTES
    if total <= DEVICE_CALL_BYTES:
        return None
    return (f"the repo ({repo_size / 2**20:.1f} MiB) and the largest chunk "
            f"({largest_chunk / 2**20:.1f} MiB) exceed one device call (64 MiB): rebuild with a "
            "smaller CHUNK_MIB")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Check the bundle for a plan; print the staging calls or what is missing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--plan", default=os.environ.get("LIVE_PLAN", "signoff"))
    parser.add_argument("--sglang", default=os.environ.get("LIVE_SGLANG"))
    parser.add_argument("--allow-cold-jit", action="store_true")
    parser.add_argument(
        "--serving-skip",
        default=os.environ.get("LIVE_SERVING_SKIP", ""),
        help="LIVE_SERVING_SKIP: a serving lease skipping every lc-* step carries no weights",
    )
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument(
        "--code-tar",
        default=os.environ.get("LIVE_CODE_TAR"),
        help="LIVE_CODE_TAR: carried in every call, checked against the commit",
    )
    parser.add_argument("--commit", default=os.environ.get("MTP_EVAL_COMMIT"))
    args = parser.parse_args(argv)
    try:
        release = plan_release(args.plan, args.sglang)
    except ValueError as exc:
        parser.error(str(exc))
    bundle = args.repo / ".gpu-bundle"
    problems, sizes, manifests = [], [], []
    for piece in pieces(release, args.allow_cold_jit, args.plan, args.serving_skip):
        found, chunk_sizes = piece_problems(bundle, piece)
        problems += found
        sizes += chunk_sizes
        manifests += sorted(bundle.glob(piece.pattern))[-1:]
    repo_size = repo_bytes(args.repo)
    code_tar = args.repo / args.code_tar if args.code_tar else None
    code = code_tar_problem(code_tar, args.commit) if code_tar else None
    every_size = code_tar.stat().st_size if code_tar and not code else 0
    fit = fit_problem(repo_size + every_size, max(sizes, default=0))
    problems += [p for p in (code, fit) if p]
    if problems:
        print(
            f"lease_ready: LIVE_PLAN={args.plan} (SGLang {release}) is not ready:", file=sys.stderr
        )
        print("\n".join(f"  - {p}" for p in problems), file=sys.stderr)
        return 1
    room = DEVICE_CALL_BYTES - repo_size - MARGIN_BYTES
    calls = _carry_plan(bundle, manifests, room, code_tar)
    print(f"lease_ready: LIVE_PLAN={args.plan} (SGLang {release}): {len(sizes)} chunks, "
          f"{sum(sizes) / 2**20:.0f} MiB beside a {repo_size / 2**20:.1f}-MiB repo: "
          f"{len(calls)} staging calls, each call's carry:")  # fmt: skip
    for number, carry in enumerate(calls, 1):
        print(f"  {number:2d}: {json.dumps(carry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
