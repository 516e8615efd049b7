"""Park the committed live results outside what a device call carries, for the staging calls.

Every device call carries the checkout's tracked files beside its chunks (64 MiB a call). Since the
live runs and the trained model's weights were committed, ``benchmarks/results`` is about 40 of the
tree's 46 MiB, and a staging call had room for one 16-MiB chunk: the serving plan took 21 calls.
The device reads only a few of those files (the tokenizers and checks the configs and
``live_signoff.sh`` name), so ``park`` moves the folder into ``.gpu-bundle-cache/`` (git-ignored:
it does not travel) and puts those few back; ``lease_ready`` then sees the smaller tree and packs
three chunks a call. ``restore`` undoes it exactly; run it before copying a lease's results in.

    python -m benchmarks.live_h200.park_results park [--weights]  # --weights: synth_llama's plans
    python -m benchmarks.live_h200.park_results restore
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

RESULTS = Path("benchmarks/results")
PARKED = Path(".gpu-bundle-cache/parked-results")
LIVE = "benchmarks/results/live-h200"
# What the device reads there: the tokenizers conf/model/synth_longctx.yaml and the shape
# experiments name, and the skipped shares the report phases of live_signoff.sh pass on.
KEEP = (
    f"{LIVE}/longctx-model-worked-0.5.23/tokenizer",
    f"{LIVE}/signoff/checks",
    f"{LIVE}/trained-model/recipe.json",
)
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json",
    "special_tokens_map.json", "chat_template.jinja",
)  # fmt: skip
# synth_llama's weights (20 MiB): only its plans (signoff, frontier, parity) read them.
WEIGHTS = (f"{LIVE}/trained-model/target", f"{LIVE}/trained-model/draft")


def kept_paths(repo: Path, weights: bool) -> list[Path]:
    """The paths under the parked folder to put back (relative to the repo), those that exist."""
    names = list(KEEP) + (list(WEIGHTS) if weights else [])
    if not weights:  # the shape experiments read their tokenizer from synth_llama's target
        names += [f"{LIVE}/trained-model/target/{f}" for f in TOKENIZER_FILES]
    return [Path(n) for n in names if (repo / PARKED / Path(n).relative_to(RESULTS)).exists()]


def park(repo: Path, weights: bool) -> str:
    """Move benchmarks/results aside and put back what the device reads; a summary line."""
    if (repo / PARKED).exists():
        raise SystemExit(f"park_results: {PARKED} exists already: run `restore` first")
    dirty = _git(repo, "status", "--porcelain", "--", str(RESULTS))
    if dirty:
        raise SystemExit(f"park_results: {RESULTS} has uncommitted changes; commit them first:\n"
                         f"{dirty}")  # fmt: skip
    (repo / PARKED).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(repo / RESULTS, repo / PARKED)
    for rel in kept_paths(repo, weights):
        src, dst = repo / PARKED / rel.relative_to(RESULTS), repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)
    return f"parked {RESULTS} in {PARKED}; tracked tree now {_tree_mib(repo):.1f} MiB"


def restore(repo: Path) -> str:
    """Put the parked folder back as it was (the kept copies are dropped first)."""
    if not (repo / PARKED).is_dir():
        raise SystemExit(f"park_results: nothing parked ({PARKED} is missing)")
    new = written_while_parked(repo)
    if new:  # a lease's results copied in too early would be deleted with the kept copies
        raise SystemExit("park_results: written under the parked folder since `park`, and not in "
                         "the parked copy; move them out, restore, then copy them back:\n  "
                         + "\n  ".join(map(str, new)))  # fmt: skip
    shutil.rmtree(repo / RESULTS, ignore_errors=True)
    shutil.move(repo / PARKED, repo / RESULTS)
    left = _git(repo, "status", "--porcelain", "--", str(RESULTS))
    return f"restored {RESULTS}" + (f"; git status shows:\n{left}" if left else "")


def written_while_parked(repo: Path) -> list[Path]:
    """Files under benchmarks/results that are not byte for byte the parked copy's (new or
    changed since ``park``): what ``restore`` would otherwise delete."""
    found = []
    for path in sorted(p for p in (repo / RESULTS).rglob("*") if p.is_file()):
        parked = repo / PARKED / path.relative_to(repo / RESULTS)
        if not parked.is_file() or parked.read_bytes() != path.read_bytes():
            found.append(path.relative_to(repo))
    return found


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def _tree_mib(repo: Path) -> float:
    names = [n for n in _git(repo, "ls-files", "-z").split("\0") if n]
    return sum((repo / n).stat().st_size for n in names if (repo / n).is_file()) / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("park", "restore"))
    parser.add_argument("--weights", action="store_true", help="keep synth_llama's weights")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args(argv)
    print(park(args.repo, args.weights) if args.action == "park" else restore(args.repo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
