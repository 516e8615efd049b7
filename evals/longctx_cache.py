"""Generated long-context questions kept on disk, so the cells of a sweep generate them once.

Every cell builds its evals before its server starts; a 128k-token question counted by an HF
tokenizer takes about a second to fit (``benchmarks/results/longctx_generation.md``), and a sweep's
cells all ask for the same questions. The questions are a pure function of the task, lengths,
count, seed, the counter (for ``hf``: the tokenizer's files) and the generator's version, so they
are kept under that key in ``$MTP_EVAL_CACHE/longctx/`` (gzip JSON, written atomically); an
unreadable file is generated again and replaced.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from evals.datasets import cache_dir
from evals.longctx_tasks import GENERATOR_VERSION, Sample


def cache_key(parts: dict[str, object]) -> str:
    """A file name for these generation settings (generator version included)."""
    blob = json.dumps({**parts, "version": GENERATOR_VERSION}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:24]


def _read(path: Path) -> list[Sample] | None:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            rows = json.load(handle)
        tuples = ("gold", "depths", "evidence")  # JSON lists back to the frozen Sample's tuples
        return [Sample(**{**row, **{k: tuple(row[k]) for k in tuples}}) for row in rows]
    except (OSError, ValueError, TypeError, KeyError):
        return None  # absent, partial or from another layout: generate again


def _write(path: Path, samples: list[Sample]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.part{os.getpid()}")
    try:
        with gzip.open(partial, "wt", encoding="utf-8", compresslevel=1) as handle:
            json.dump([asdict(s) for s in samples], handle)
        partial.replace(path)  # atomic: a reader never sees half a file
    except OSError:
        partial.unlink(missing_ok=True)  # a read-only cache: the questions were made anyway


def cached_samples(
    parts: dict[str, object], make: Callable[[], list[Sample]], folder: Path | None = None
) -> list[Sample]:
    """The questions for ``parts`` from the cache, or ``make()``'s, then kept.

    Args:
        parts: everything the questions depend on but the generator's version.
        make: generates them.
        folder: where the files are (default ``$MTP_EVAL_CACHE/longctx``).
    """
    path = (folder or cache_dir() / "longctx") / f"{cache_key(parts)}.json.gz"
    found = _read(path)
    if found is not None:
        return found
    made = make()
    _write(path, made)
    return made
