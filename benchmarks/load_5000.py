"""A cell of 5,000 requests at concurrency 256 against the simulated server.

Prints wall time, request rate, the pipeline process's peak memory and the number of samples on
disk. Run: `python -m benchmarks.load_5000 [--out DIR]`; tests/slow/test_load.py asserts on it.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import sys
import time
from pathlib import Path

N_QUESTIONS, REPEATS = 100, 50  # 5,000 requests


def write_questions(path: Path) -> None:
    """100 made-up four-choice questions in GPQA's columns (the simulated model answers them)."""
    cols = [
        "Question",
        "Correct Answer",
        "Incorrect Answer 1",
        "Incorrect Answer 2",
        "Incorrect Answer 3",
    ]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(cols)
        for i in range(N_QUESTIONS):
            writer.writerow(
                [
                    f"Load question {i}: which value is {i * 7}?",
                    f"{i * 7}",
                    f"{i * 7 + 1}",
                    f"{i * 7 + 2}",
                    f"{i * 7 + 3}",
                ]
            )


def peak_rss_mib() -> float:
    """This process's peak resident memory (VmHWM).

    Not ``getrusage``: its ``ru_maxrss`` survives exec, so a process started by a big parent (the
    test runner) reports the parent's size at fork time.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def run(out: Path) -> dict[str, float]:
    """Run the cell in this process and return its figures."""
    sys.argv = ["mtp-eval"]
    from hydra import compose, initialize_config_dir

    from pipeline.cell.job import run_cell
    from pipeline.config.cell_config import to_cell_config
    from pipeline.config.schema import register_configs

    out.mkdir(parents=True, exist_ok=True)
    data = out / "load_questions.csv"
    write_questions(data)
    register_configs()
    overrides = [
        "evals.mcq_sample.dataset.source=file",
        f"evals.mcq_sample.dataset.path={data}",
        f"evals.mcq_sample.repeats={REPEATS}",
        "client.concurrency=256",
        "client.follow_server=false",
        "client.progress=false",
        "server.simulated.mean_completion_tokens=40",
    ]
    conf_dir = Path(__file__).resolve().parents[1] / "conf"
    with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
        conf = to_cell_config(compose("config", overrides=overrides))
    start = time.monotonic()
    result = run_cell(conf, out / "cell")
    wall = time.monotonic() - start
    lines = (out / "cell" / "samples" / "mcq_sample.jsonl").read_text().splitlines()
    errors = sum(json.loads(line)["error_kind"] is not None for line in lines)
    peak_mib = peak_rss_mib()
    return {
        "status_ok": float(result.status == "ok"),
        "samples": float(len(lines)),
        "errors": float(errors),
        "wall_s": wall,
        "req_per_s": len(lines) / wall,
        "peak_rss_mib": peak_mib,
    }


def main() -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("outputs/bench-load-5000"))
    print(json.dumps(run(parser.parse_args().out), indent=1))


if __name__ == "__main__":
    main()
