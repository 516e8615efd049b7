"""Kernel time with CUDA events: warm-up, an L2 flush and a GPU spin before every timed call.

The spin (``torch.cuda._sleep``) keeps the GPU busy while the host queues the start event, the
call and the end event, so the events bracket only the GPU work, not Python's call overhead (which
dominated the README's small sizes). The flush writes a buffer larger than the H200's 60 MB L2,
so no call finds its inputs cached by the previous one. Only the median is reported as "the"
time; p10 and p90 show the spread.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import TypedDict

import torch

from backends.probe.probe_conf import TimingConf

_SPIN_CYCLES_PER_US = 2000  # ~2 GHz SM clock; the spin only has to outlast the host's queuing


class KernelTiming(TypedDict):
    """A kernel's timing keys in its probe record (milliseconds; ``reps`` repeats timed)."""

    median_ms: float
    p10_ms: float
    p90_ms: float
    reps: int


def time_call(fn: Callable[[], object], conf: TimingConf) -> KernelTiming:
    """Median GPU time of ``fn`` in milliseconds (CUDA must be available).

    Args:
        fn: The call to time; it must only queue GPU work (no host synchronisation).
        conf: Warm-up and repeat counts, the time cap, L2 flush size and spin length.

    Returns:
        ``median_ms``, ``p10_ms``, ``p90_ms`` and ``reps`` (repeats actually timed).
    """
    flush = _flush_buffer(conf.flush_l2_mib)
    for _ in range(conf.warmup):
        fn()
    first = _timed(fn, flush, conf.spin_us)
    torch.cuda.synchronize()
    one_ms = max(first[0].elapsed_time(first[1]), 1e-3)
    reps = max(3, min(conf.repeats, int(conf.max_seconds * 1e3 / one_ms)))
    events = [_timed(fn, flush, conf.spin_us) for _ in range(reps)]
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(end) for start, end in events)
    return {
        "median_ms": statistics.median(times),
        "p10_ms": times[int(0.1 * (len(times) - 1))],
        "p90_ms": times[round(0.9 * (len(times) - 1))],
        "reps": len(times),
    }


def _flush_buffer(mib: int) -> torch.Tensor | None:
    return torch.empty(mib * 2**20, dtype=torch.uint8, device="cuda") if mib > 0 else None


def _timed(
    fn: Callable[[], object], flush: torch.Tensor | None, spin_us: float
) -> tuple[torch.cuda.Event, torch.cuda.Event]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if flush is not None:
        flush.zero_()
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is not None and spin_us > 0:
        sleep(int(spin_us * _SPIN_CYCLES_PER_US))
    start.record()
    fn()
    end.record()
    return start, end
