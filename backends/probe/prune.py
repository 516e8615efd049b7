"""Compile only the fmha_v2 kernels the probe calls, in a FlashInfer cache of the probe's own.

FlashInfer 0.6.18 builds every SM90 fmha_v2 variant of a dtype into one JIT module on first use:
11 head sizes x logit soft-capping x softmax stats x skip-softmax x ALiBi (132 sources for bf16,
about 2 minutes on a 16-core H200 host, and again for fp8). The probe calls one head size, without
soft-capping, stats or ALiBi, with and without skip-softmax: two kernels. ``prune_fmha_v2``
filters the variant product that ``fmha_library.generate_jit_sources`` walks, so the module holds
just those. The kernels' code and FlashInfer's runtime dispatch (an exact match on dtype, head
size and flags) are unchanged.

The pruned module has the same name as the full one, so the probe keeps it in a cache of its own
(``private_workspace``), never in one that SGLang or another program shares. The setting travels
to the compile children in the environment (``PRUNE_ENV``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

PRUNE_ENV = "MTP_EVAL_PROBE_FMHA_V2_HEAD_DIM"  # set: prune to this head dim
PRUNED_FOR = "0.6.18"  # the FlashInfer whose variant tuple layout this filter reads
PRIVATE_DIR = "mtp-eval-probe-jit"


class _Itertools:
    """Stands in for ``itertools`` inside ``fmha_library``: only ``product`` is filtered."""

    def __init__(self, head_dim: int) -> None:
        self.head_dim = head_dim

    def __getattr__(self, name: str) -> Any:
        return getattr(itertools, name)

    def product(self, *lists: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
        combos = itertools.product(*lists)
        if len(lists) != 11:  # not a kernel-variant product: leave it alone
            return combos
        return (c for c in combos if wanted_variant(c, self.head_dim))


def wanted_variant(combo: tuple[Any, ...], head_dim: int) -> bool:
    """Whether a variant tuple of ``generate_jit_sources`` is one the probe calls.

    The tuple is (sm, dtype, head size, head size v, soft-capping, softmax stats, skip-softmax,
    ALiBi, MLA, input layout, output dtype).
    """
    _sm, _dtype, head, _head_v, softcap, stats, _skip, alibi, mla, *_ = combo
    return head == head_dim and not (softcap or stats or alibi or mla)


def prune_fmha_v2(head_dim: int) -> bool:
    """Make FlashInfer generate only the probe's fmha_v2 kernels.

    Returns False, and prunes nothing, for another FlashInfer version or when FlashInfer's cache
    is not the probe's own (it was imported before the probe could point it elsewhere).
    """
    import flashinfer
    from flashinfer.jit import env as jit_env
    from flashinfer.jit.attention.fmha_v2 import fmha_library

    if getattr(flashinfer, "__version__", "") != PRUNED_FOR:
        return False
    if Path(jit_env.FLASHINFER_BASE_DIR).name != PRIVATE_DIR:
        return False
    fmha_library.itertools = _Itertools(head_dim)
    return True


def prune_from_env() -> bool:
    """Apply ``prune_fmha_v2`` when the probe asked for it through ``PRUNE_ENV``."""
    value = os.environ.get(PRUNE_ENV)
    return prune_fmha_v2(int(value)) if value else False


def private_workspace(base: str | None) -> str:
    """The probe's own FlashInfer workspace below ``base`` (FlashInfer's default is home)."""
    if base and Path(base).name == PRIVATE_DIR:
        return base
    return str(Path(base or Path.home()) / PRIVATE_DIR)
