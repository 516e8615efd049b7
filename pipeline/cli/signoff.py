"""``mtp-eval-signoff``: the release sign-off sweep, then its report, with the report's exit code.

A Hydra callback cannot set a process's exit code (its exceptions become warnings) and does not
run when a job failed, so the gate a CI system needs is this wrapper: it runs
``mtp-eval experiment=release_signoff <overrides>`` into a known folder, then ``mtp-eval-report``
on that folder, and exits 0 (all GO/PASS), 1 (a NO-GO/FAIL) or 2 (anything undecided, failed or
missing, or nothing judged; also when the sweep itself could not run).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pipeline.config.schema_keys import override_problems
from pipeline.report.cli import main as report_main

DESCRIPTION = """\
The release sign-off in one command: runs the sweep of an experiment preset (default
release_signoff: every variant x KV dtype x skip-softmax factor against a real SGLang, fa3
the baseline), then mtp-eval-report on it, and exits with the report's verdict. Every argument
that is not one of the options below is a Hydra override of the sweep, as mtp-eval takes it
(model=..., gpu=..., server=sglang, evals=[...])."""
EPILOG = """\
examples:
  mtp-eval-signoff model=qwen3_next_80b_a3b server=sglang
  mtp-eval-signoff --sweep-dir outputs/multirun/signoff-rc1 model=llama3_1_8b_eagle3
  mtp-eval-signoff --experiment compare_backends server=simulated      (no GPU)

where results go: the sweep's cells in --sweep-dir (default outputs/multirun/signoff-<time>),
the report (report.md, report.html, summary.json, cells.csv, junit.xml) in its report/ folder.
The same --sweep-dir again resumes an interrupted sign-off.

exit codes: 0 every check GO / PASS; 1 a NO-GO / FAIL; 2 anything undecided, failed or missing,
or the sweep could not run; 130 Ctrl-C."""


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """Own options, then every other argument is a Hydra override for the sweep."""
    parser = argparse.ArgumentParser(
        prog="mtp-eval-signoff",
        usage="mtp-eval-signoff [--sweep-dir DIR] [--experiment NAME] [--tolerance NAME] "
        "[OVERRIDE ...]",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--sweep-dir",
        help="where the sweep goes (default outputs/multirun/"
        "signoff-<time>); reuse it to resume an interrupted sign-off",
    )
    parser.add_argument(
        "--experiment",
        default="release_signoff",
        help="the conf/experiment preset (default release_signoff)",
    )
    parser.add_argument("--tolerance", help="conf/tolerance policy for the report")
    return parser.parse_known_args(argv)


def sweep_command(args: argparse.Namespace, overrides: list[str], sweep_dir: str) -> list[str]:
    """The ``mtp-eval`` command line of the sweep (an argv list, never a shell string)."""
    return [
        sys.executable,
        "-m",
        "pipeline",
        f"experiment={args.experiment}",
        *overrides,
        f"hydra.sweep.dir={sweep_dir}",
    ]


INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


def run_sweep(command: list[str]) -> int:
    """Run the sweep; on Ctrl-C wait for it to stop its server and keep its results, then raise.

    Ctrl-C reaches the sweep too (same process group); ``subprocess.run`` would SIGKILL it a
    quarter second later, in the middle of stopping its server.
    """
    with subprocess.Popen(command) as sweep:
        try:
            return sweep.wait()
        except KeyboardInterrupt:
            sweep.wait()
            raise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep, then the report; return the report's exit code (130 after Ctrl-C)."""
    args, overrides = parse_args(argv)
    unknown = override_problems(overrides)  # the sweep would refuse them too, then no report
    for line in unknown:
        print(f"mtp-eval-signoff: {line}", file=sys.stderr)
    if unknown:
        return 2
    sweep_dir = args.sweep_dir or time.strftime("outputs/multirun/signoff-%Y%m%d-%H%M%S")
    try:
        returncode = run_sweep(sweep_command(args, overrides, sweep_dir))
    except KeyboardInterrupt:
        print(
            f"mtp-eval-signoff: interrupted (Ctrl-C); the sweep stopped its server and kept what "
            f"it measured: run again with --sweep-dir {sweep_dir} to resume",
            file=sys.stderr,
        )
        return INTERRUPTED
    if returncode != 0 and not Path(sweep_dir).is_dir():  # refused before its first cell
        print(
            f"mtp-eval-signoff: the sweep exited {returncode} before its first cell (the lines "
            "above say why); nothing to judge: exit code 2",
            file=sys.stderr,
        )
        return 2
    if returncode != 0:
        print(
            f"mtp-eval-signoff: the sweep exited {returncode}; judging what it left",
            file=sys.stderr,
        )
    report_args = [sweep_dir] + (["--tolerance", args.tolerance] if args.tolerance else [])
    code = report_main(report_args)
    print(f"mtp-eval-signoff: {sweep_dir}: exit code {code}")
    return 2 if returncode != 0 and code == 0 else code


if __name__ == "__main__":
    sys.exit(main())
