"""GPU clocks, power and temperature sampled by ``nvidia-smi`` while the speed phase runs.

``nvidia-smi --loop-ms=N`` prints one line per GPU every N ms until it is stopped. Where there is
no ``nvidia-smi`` (a CPU machine with the simulated server) the block says so: nothing is made up.
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Iterator

from pipeline.results.nested_schema import GpuSamplesJson, SampledJson

# nvidia-smi's names of what is sampled; the key each is written under in result.json.
QUERY = {
    "clocks.sm": "sm_clock_mhz",
    "clocks.mem": "memory_clock_mhz",
    "power.draw": "power_w",
    "temperature.gpu": "temperature_c",
}


def parse_samples(text: str) -> dict[str, dict[str, list[float]]]:
    """``index, sm, mem, power, temp`` CSV lines -> per GPU index, each quantity's samples.

    A field nvidia-smi cannot read (``[N/A]``, ``[Not Supported]``) is left out of its list.
    """
    found: dict[str, dict[str, list[float]]] = {}
    for line in text.splitlines():
        index, *fields = [part.strip() for part in line.split(",")]
        if not index.isdigit() or len(fields) != len(QUERY):
            continue
        gpu = found.setdefault(index, {key: [] for key in QUERY.values()})
        for key, field in zip(QUERY.values(), fields, strict=True):
            with contextlib.suppress(ValueError):
                gpu[key].append(float(field))
    return found


def summarise(samples: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, SampledJson]]:
    """Per GPU and quantity: samples taken, min, median and max (None when none was readable)."""
    return {
        index: {
            key: {
                "samples": len(values),
                "min": min(values) if values else None,
                "median": statistics.median(values) if values else None,
                "max": max(values) if values else None,
            }
            for key, values in gpu.items()
        }
        for index, gpu in samples.items()
    }


@contextlib.contextmanager
def sampled_gpus(interval_ms: int, program: str = "nvidia-smi") -> Iterator[GpuSamplesJson]:
    """Sample while the block runs; the yielded dict is filled in when it ends.

    The dict holds ``source`` (``nvidia-smi`` or ``absent``), ``interval_ms`` and ``gpus`` (from
    ``summarise``), or ``reason`` when nothing was sampled.
    """
    found: GpuSamplesJson = {"source": "absent", "interval_ms": interval_ms}
    path = shutil.which(program)
    if path is None:
        found["reason"] = f"{program} not found on PATH: clocks, power and temperature not sampled"
        yield found
        return
    query = ",".join(["index", *QUERY])
    argv = [path, f"--query-gpu={query}", "--format=csv,noheader,nounits"]
    argv.append(f"--loop-ms={interval_ms}")
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        try:
            yield found
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            out.seek(0)
            gpus = summarise(parse_samples(out.read()))
            found["source"], found["gpus"] = "nvidia-smi" if gpus else "absent", gpus
            if not gpus:
                found["reason"] = f"{program} printed no readable sample"
