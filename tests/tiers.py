"""The test tiers, their time budgets, and a runner that prints each tier's wall time against
its budget (issue 38 item 5).

    python -m tests.tiers unit integration slow serial   # what `make test` runs
    python -m tests.tiers services                       # `make test-services` (mlflow, browser)
    python -m tests.tiers --list                         # the tiers, what each runs, budgets

Each tier is one pytest run. The parallel ones use pytest-xdist's two workers (CI has 2 cores;
integration and slow tests mostly wait on subprocess servers) with ``--dist loadgroup``: tests
that share a module- or session-scoped fixture go to one worker (tests/conftest.py groups them),
the rest spread one by one. Tests that assert on wall time are marked ``serial`` and run alone
afterwards. A tier that collects no test fails (pytest's exit code 5 is never a pass), and the
runner's exit code is the first failing tier's.

``rehearsal`` is not in ``make test`` nor CI: each of its plans takes minutes (``make
test-rehearsals`` before a lease; ``python -m tests.tiers rehearsal -k serving``: one plan).

The budgets are what CI's 2-core machine may spend per tier so that ``.ci/run`` stays under 30
minutes: about 300 s to install and lint, then ``make test`` (unit 90 + integration 600 + slow
420 + serial 90 s), ``make test-services`` (150 s) and ``make test-slurm`` (300 s), 1,950 s in
all. CI's run of 2026-12-07 took 3,217 s (integration 1,240, slow 1,053): pytest 9.2 had
silently stopped xdist's grouping, each rehearsal tick copied the .venv, and the full plan
rehearsals ran in the slow tier. A tier over its budget is printed as such (it does not fail:
timing on a shared machine is noise); restore the budget by moving tests, or raise it here,
knowingly.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass

NO_TESTS_COLLECTED = 5  # pytest's exit code when nothing matched: a broken selection, not a pass
# What no tier of `make test` runs: each has its own tier and target (or a GPU).
OWN_TIERS = "gpu or slurm or mlflow or browser or rehearsal"


@dataclass(frozen=True)
class Tier:
    """One pytest run: its arguments, whether it uses xdist's workers, and its budget."""

    name: str
    args: tuple[str, ...]
    budget_s: int
    workers: int  # 0: in this process, one test at a time
    why: str


TIERS = (
    Tier("unit", ("tests/unit", "-m", f"not ({OWN_TIERS} or serial)"), 90, 2,
         "pure functions and files, no subprocess servers"),
    Tier("integration", ("tests/integration", "-m", f"not ({OWN_TIERS} or serial)"), 600, 2,
         "the simulated server and the console scripts as subprocesses, on loopback"),
    # The live plans' full rehearsals left this tier on 2026-12-07 (rehearsal, below): with them
    # it took 1,053 s of CI's 2-core machine, the long-context frontier's alone 430 s.
    Tier("slow", ("tests/slow", "-m", f"not ({OWN_TIERS} or serial)"), 420, 2,
         "real Hydra multiruns, two of the live script's plans, Monte Carlo error rates"),
    Tier("rehearsal", ("tests/slow", "-m", "rehearsal and not gpu"), 1500, 2,
         "every other plan of the live script rehearsed whole (before the lease that needs it)"),
    Tier("serial", ("tests/unit", "tests/integration", "tests/slow", "-m",
                    f"serial and not ({OWN_TIERS})"), 90, 0,
         "tests that assert on wall time, alone on the machine"),
    Tier("mlflow", ("tests", "-m", "mlflow and not gpu"), 120, 0,
         "a real `mlflow server` and sqlite stores (the dev extra's pinned mlflow)"),
    Tier("browser", ("tests", "-m", "browser and not gpu"), 90, 0,
         "the report in headless Chromium (Debian's chromium, .ci/run installs it)"),
    # Both in one run: their tests read the one demo sweep (demo_report), built once per run.
    Tier("services", ("tests", "-m", "(mlflow or browser) and not gpu"), 150, 0,
         "the mlflow and browser tiers in one run (what CI runs)"),
    Tier("slurm", ("tests/slurm", "-m", "slurm"), 300, 0,
         "a real single-node SLURM its session fixture brings up and down (root)"),
)  # fmt: skip
BY_NAME = {tier.name: tier for tier in TIERS}


def pytest_argv(tier: Tier, extra: list[str]) -> list[str]:
    """The command line that runs ``tier`` (with ``extra`` pytest arguments appended)."""
    argv = [sys.executable, "-m", "pytest", "-q", *tier.args]
    if tier.workers:
        argv += ["-n", str(tier.workers), "--dist", "loadgroup"]
    return [*argv, *extra]


@dataclass(frozen=True)
class Outcome:
    """How one tier's run ended and how long it took."""

    tier: Tier
    exit_code: int
    wall_s: float

    def line(self) -> str:
        """One row of the closing table: the tier, its time against its budget, its result."""
        over = self.wall_s > self.tier.budget_s
        budget = f"{self.wall_s:7.1f} s of {self.tier.budget_s:4d} s" + (" OVER" if over else "")
        result = {0: "passed", NO_TESTS_COLLECTED: "collected no tests: FAILED"}.get(
            self.exit_code, f"FAILED (pytest exit {self.exit_code})"
        )
        return f"  {self.tier.name:<12} {budget:<25} {result}"


def run_tier(tier: Tier, extra: list[str]) -> Outcome:
    """Run one tier with pytest; its output goes straight to this process's."""
    argv = pytest_argv(tier, extra)
    print(f"\n=== tier {tier.name} (budget {tier.budget_s} s): {' '.join(argv[1:])}", flush=True)
    start = time.monotonic()
    code = subprocess.run(argv, check=False).returncode
    return Outcome(tier, code, time.monotonic() - start)


def summary(outcomes: list[Outcome]) -> str:
    """The closing table: every tier's wall time against its budget, then the total."""
    total = sum(o.wall_s for o in outcomes)
    budget = sum(o.tier.budget_s for o in outcomes)
    rows = [o.line() for o in outcomes]
    return "\n".join(["tier times against their budgets:", *rows,
                      f"  {'total':<12} {total:7.1f} s of {budget:4d} s"])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the named tiers in order, every one even after a failure; exit as the first failed."""
    parser = argparse.ArgumentParser(prog="python -m tests.tiers", description=__doc__)
    parser.add_argument("tiers", nargs="*", metavar="TIER", help=", ".join(BY_NAME))
    parser.add_argument("--list", action="store_true", help="print the tiers and exit")
    opts, extra = parser.parse_known_args(argv)
    if opts.list or not opts.tiers:
        for tier in TIERS:
            print(f"{tier.name:<12} {tier.budget_s:4d} s  {' '.join(pytest_argv(tier, [])[3:])}")
            print(f"{'':<19} {tier.why}")
        return 0
    unknown = [name for name in opts.tiers if name not in BY_NAME]
    if unknown:
        parser.error(f"no tier {unknown}: the tiers are {', '.join(BY_NAME)}")
    outcomes = [run_tier(BY_NAME[name], extra) for name in opts.tiers]
    print("\n" + summary(outcomes), flush=True)
    return next((o.exit_code for o in outcomes if o.exit_code != 0), 0)


if __name__ == "__main__":
    sys.exit(main())
