"""A stand-in for Hugging Face ``datasets`` so SGLang 0.5.23's ``bench_serving`` imports offline.

``sglang.benchmark.datasets`` imports every dataset class at import time, and ``mmmu.py`` does
``from datasets import load_dataset`` at module level, so ``python -m sglang.bench_serving`` dies
with ModuleNotFoundError on a host without ``datasets`` for every ``--dataset-name``, ``random-ids``
included (the serving lease of 2026-12-07). The live plan only runs ``random-ids``, which never
loads a dataset: ``load_dataset`` here refuses, naming why, instead of returning anything.
``live_signoff.sh`` puts this folder on PYTHONPATH for bench_serving only, and only when the host
cannot import the real ``datasets``.
"""

from __future__ import annotations

from typing import NoReturn

__version__ = "0.0.0+mtp-eval-standin"


def load_dataset(*args: object, **kwargs: object) -> NoReturn:
    """Refuse: the offline host has no Hugging Face datasets, only this import stand-in."""
    raise RuntimeError(
        f"load_dataset{args!r}: the offline GPU host has no Hugging Face datasets (this is "
        "mtp-eval's import stand-in, benchmarks/live_h200/bench_standins); run bench_serving "
        "with --dataset-name random-ids, or carry datasets in the bundle"
    )
