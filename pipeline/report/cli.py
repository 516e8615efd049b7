"""``mtp-eval-report DIR... [--out DIR] [--baseline fa3] [--tolerance NAME] [--mlflow URI]``.

Reads cell folders (a multirun folder, several, single cells, or a folder above them), writes
report.md, report.html, junit.xml, summary.json and cells.csv, prints the verdict and exits
0 (all GO / PASS), 1 (any NO-GO / FAIL) or 2 (anything undecided, failed or missing; nothing
judged at all, e.g. speed-only cells without a speed band; also bad input). Cells of a
``--baseline-dir`` outside the DIRs are baselines only: never judged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.report.load.references import ReferenceFileError
from pipeline.report.load.tolerance import ToleranceError, load_tolerance

if TYPE_CHECKING:  # imported when used: --help stays fast
    from pipeline.report.speed.skip_fractions import FrontierInputs

INPUT_ERROR = 2


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line arguments."""
    parser = argparse.ArgumentParser(
        prog="mtp-eval-report",
        description=" ".join(__doc__.split("\n\n", 1)[1].split()),  # what it reads and writes
        epilog="Exit codes: 0 all GO/PASS, 1 any NO-GO/FAIL, 2 "
        "anything undecided, failed or missing, or nothing judged at all.",
    )
    parser.add_argument(
        "dirs",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="multirun folder(s), cell folder(s), or a folder above them",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where to write (default: DIR/report for one DIR, else ./mtp-eval-report)",
    )
    parser.add_argument("--baseline", help="baseline variant (default: the policy's, fa3)")
    parser.add_argument(
        "--baseline-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="take baselines only from this sweep or cell folder (repeatable). Its cells "
        "outside the DIRs are baselines only: not judged, not in the verdict. Default: any "
        "input, each candidate's own sweep first, with a warning when one comes from another "
        "sweep",
    )
    parser.add_argument(
        "--tolerance",
        default="default",
        help="policy name in conf/tolerance/ or a YAML path (default: default)",
    )
    parser.add_argument(
        "--references", type=Path, help="folder of reference files (default: the policy's)"
    )
    parser.add_argument(
        "--skip-fractions",
        type=Path,
        metavar="FILE",
        help="the share of key tiles skip-softmax skips per factor, as benchmarks/live_h200/"
        "skip_fraction.py measured it (JSON): shown in the Skip-softmax frontier",
    )
    parser.add_argument(
        "--frontier-per-eval",
        action="store_true",
        help="a verdict column per eval in the Skip-softmax frontier (summary.json: always)",
    )
    parser.add_argument(
        "--no-html",
        action="store_true",
        help="do not write report.html (its plots and questions view take most of a large "
        "report's time); every other file is the same",
    )
    parser.add_argument(
        "--mlflow",
        metavar="TRACKING_URI",
        help="also write the report to this MLflow tracking store (http://host:5000, "
        "sqlite:///mlflow.db): a run per cell under a parent run for the sweep; a second export "
        "of the same sweep updates those runs. Needs the mlflow extra",
    )
    parser.add_argument(
        "--mlflow-experiment", default="mtp-eval", help="MLflow experiment (default: mtp-eval)"
    )
    return parser.parse_args(argv)


def write_outputs(report: object, out: Path, html: bool = True) -> list[Path]:
    """Write the report's files; returns their paths.

    Five (six: speed.csv, when a cell ran a speed phase), one fewer without ``html``.
    """
    from pipeline.report.assemble.build import Report
    from pipeline.report.write.junit import render_junit
    from pipeline.report.write.render_html import render_html
    from pipeline.report.write.render_md import render_md
    from pipeline.report.write.serving_tables import render_serving_csv
    from pipeline.report.write.speed_tables import render_speed_csv
    from pipeline.report.write.summary_json import render_csv, render_summary

    assert isinstance(report, Report)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "report.md": render_md(report),
        "report.html": render_html(report) if html else None,
        "summary.json": render_summary(report),
        "cells.csv": render_csv(report),
        "speed.csv": render_speed_csv(report),
        "serving.csv": render_serving_csv(report),
    }
    paths = []
    for name, text in files.items():
        if text is None:
            continue
        (out / name).write_text(text, encoding="utf-8")
        paths.append(out / name)
    (out / "junit.xml").write_bytes(render_junit(report))
    return [*paths, out / "junit.xml"]


def out_problem(out: Path, given: bool) -> str | None:
    """Why ``out`` cannot hold the report (it, or a folder above it, is a file); None if it can.

    Args:
        out: the report's folder; made when it does not exist.
        given: whether ``--out`` named it (else it is the default, ``DIR/report``).
    """
    blocked = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is None:
        return None
    what = f"--out {out}" if given else f"the report folder {out}"
    where = "is a file" if blocked == out else f"is under {blocked}, a file"
    other = next(p for n in ("report", "mtp-eval-report") if (p := blocked.parent / n) != blocked)
    return (
        f"{what} {where}: --out must be a folder (made if missing), where report.md, "
        f"summary.json, junit.xml and the rest are written; name another, e.g. --out {other}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (console scripts pass it to ``sys.exit``)."""
    from pipeline.report.assemble.build import build_report
    from pipeline.report.write.render_md import headline

    args = parse_args(argv)
    out = args.out or (args.dirs[0] / "report" if len(args.dirs) == 1 else Path("mtp-eval-report"))
    if (bad := out_problem(out, given=args.out is not None)) is not None:
        print(f"mtp-eval-report: {bad}", file=sys.stderr)  # before the report's minutes
        return INPUT_ERROR
    try:
        tol = load_tolerance(args.tolerance, args.baseline, args.references)
        report = build_report(args.dirs, tol, args.baseline_dir)
        report.frontier_inputs = _frontier_inputs(args)
        paths = write_outputs(report, out, html=not args.no_html)
        exported = _export(report, paths, args)
    except (ToleranceError, ReferenceFileError, ValueError) as err:
        print(f"mtp-eval-report: {err}", file=sys.stderr)
        return INPUT_ERROR
    except Exception as err:
        print(f"mtp-eval-report: internal error ({type(err).__name__}: {err}); "
              "exit 2, not a verdict", file=sys.stderr)  # fmt: skip
        return INPUT_ERROR
    for line in headline(report)[:2]:
        print(line)
    for cell in report.cells:
        note = report.cell_note(cell)
        print(f"  {report.cell_verdict(cell):<13} {cell.label}" + (f"  ({note})" if note else ""))
    for cell in report.baselines:
        print(
            f"  {'BASELINE':<13} {cell.label}  (from --baseline-dir: a baseline only, not judged)"
        )
    for line in report.not_judged:
        print(f"  {'NOT JUDGED':<13} {line}")
    for line in report.ignored:
        print(f"  {'IGNORED':<13} {line}")
    for line in report.warnings:
        print(f"  {'WARNING':<13} {line}")
    print(f"wrote {', '.join(str(p) for p in paths)}")
    if exported:
        print(exported)
    return report.exit_code


def _frontier_inputs(args: argparse.Namespace) -> FrontierInputs:
    """What ``--skip-fractions`` and ``--frontier-per-eval`` give the frontier.

    Raises:
        ValueError: the skip-fractions file cannot be read (naming it and how to write it).
    """
    from pipeline.report.speed.skip_fractions import FrontierInputs, read_skip_fractions

    path = args.skip_fractions
    fractions = read_skip_fractions(path) if path is not None else {}
    return FrontierInputs(fractions, str(path or ""), args.frontier_per_eval)


def _export(report: object, paths: list[Path], args: argparse.Namespace) -> str:
    """Export to MLflow when ``--mlflow`` asks; returns the line to print (empty otherwise)."""
    if not args.mlflow:
        return ""
    from pipeline.report.assemble.build import Report
    from pipeline.report.write.mlflow_export import export_report

    assert isinstance(report, Report)
    done = export_report(report, paths, args.mlflow, args.mlflow_experiment)
    return (
        f"mlflow: experiment {args.mlflow_experiment!r} ({done.experiment_id}) at {args.mlflow}: "
        f"parent run {done.parent_run_id}, {len(done.cell_run_ids)} cell runs, "
        f"{done.created} created"
    )


if __name__ == "__main__":
    sys.exit(main())
