"""The checks of one cell: status, accept metric, baseline and reference comparisons.

The comparisons live in ``versus_baseline`` and ``versus_reference``; their statistical verdicts
are set later, after Holm's correction across cells, by ``verdicts.finalize``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.report.judge.check_kinds import ACCEPT_METRIC, STATUS
from pipeline.report.judge.check_numbers import AcceptMetricNumbers, GatedNumbers
from pipeline.report.judge.pairing import SampleReader, find_baseline
from pipeline.report.judge.verdicts import (
    ERROR,
    FAIL,
    FAILED,
    INCONCLUSIVE,
    MISCONFIGURED,
    MISSING,
    OK,
    PASS,
    PLANNED,
    UNSUPPORTED,
    Check,
    make_check,
)  # fmt: skip
from pipeline.report.judge.versus_baseline import baseline_checks
from pipeline.report.judge.versus_reference import reference_checks
from pipeline.report.load.cells import CellRecord
from pipeline.report.load.parity_files import has_parity
from pipeline.report.load.tolerance import Tolerance
from pipeline.results.accept_block import AcceptBlock
from pipeline.results.cell_paths import result_path
from pipeline.results.parity_block import ParityGate
from pipeline.results.result_types import UNREADABLE

_STATUS = {"ok": OK, "failed": FAILED, "missing": MISSING, "unsupported": UNSUPPORTED,
           "planned": PLANNED, "misconfigured": MISCONFIGURED}  # fmt: skip


def cell_checks(
    cell: CellRecord, cells: Sequence[CellRecord], tol: Tolerance, read: SampleReader
) -> list[Check]:
    """All checks of ``cell`` (statistical ones still INCONCLUSIVE until ``finalize``).

    Its baseline is chosen among ``cells`` (``pipeline.report.judge.pairing.find_baseline``).

    Malformed input in this cell's result or samples makes this cell ERROR (with the reason);
    the rest of the report is still written.
    """
    try:
        return _cell_checks(cell, cells, tol, read)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as err:
        where = result_path(cell.folder) if cell.folder else cell.id
        message = f"{where}: malformed input ({type(err).__name__}: {err}); this cell is not judged"
        return [make_check(cell, None, STATUS, ERROR, message)]


def _cell_checks(
    cell: CellRecord, cells: Sequence[CellRecord], tol: Tolerance, read: SampleReader
) -> list[Check]:
    error = cell.result.error
    if error is not None and error.kind == UNREADABLE:  # malformed input: never a verdict
        return [make_check(cell, None, STATUS, ERROR, error.message)]
    out = [make_check(cell, None, STATUS, _STATUS[cell.status], cell.note or cell.status)]
    if cell.status != "ok":
        return out
    gate = cell.result.parity.gate if cell.result.parity else None
    if gate is not None and gate.stopped:  # its evals were never run: accuracy is undecided
        out.append(gated_check(cell, gate))
    if not cell.evals:  # a speed-, serving- or parity-only cell (evals=[]): read in their tables
        if (
            cell.result.speed is None
            and cell.result.serving is None
            and not has_parity(cell.folder)
        ):
            out.append(make_check(cell, None, STATUS, ERROR, "result.json: ok but no evals"))
        return out
    baseline, note = None, ""
    if cell.variant != tol.baseline:
        baseline, note = find_baseline(cell, cells, tol.baseline, tol.match)
    for name, summary in cell.evals.items():
        margins = tol.for_eval(name)
        if cell.speculative:
            out.append(accept_metric(cell, name, margins.accept_max_unmeasured))
        if cell.variant != tol.baseline:
            out += baseline_checks(cell, baseline, note, name, margins, tol.alpha, read)
        out += reference_checks(cell, name, summary, margins, tol, read)
    return out


def gated_check(cell: CellRecord, gate: ParityGate) -> Check:
    """INCONCLUSIVE: a parity NO-GO (``parity.gate``) ended the cell before its accuracy repeats.

    Its parity check carries the NO-GO; this one says what was not spent, and keeps the cell
    from GO should this report's parity policy judge it otherwise.
    """
    message = (
        f"accuracy not measured: the cell's own parity verdict ({gate.reason}) ended its "
        f"sign-off before its accuracy repeats (parity.gate); not run: {gate.skipped_text()}"
    )
    skipped = dict(gate.skipped)
    return make_check(
        cell, None, STATUS, INCONCLUSIVE, message, numbers=GatedNumbers(accuracy_skipped=skipped)
    )


def accept_metric(cell: CellRecord, name: str, max_unmeasured: float = 1.0) -> Check:
    """PASS when a speculative cell measured its accept length over enough of its requests.

    FAIL without an accept metric, or when more than ``max_unmeasured`` of the answered requests
    came back without accept statistics (they would drop out of the figure unseen).
    """
    accept = cell.evals[name].accept or cell.result.accept  # the eval's window, else the cell's
    value = accept.accept_length
    if accept.status == "ok" and value:
        requests = "?" if accept.n_with_spec is None else accept.n_with_spec
        message = f"accept length {value:.3f} over {requests} requests" + _window_note(accept)
        lacking, answered = accept.without_statistics, accept.n_requests or 0
        if lacking and answered:
            message += f"; {lacking} of {answered} answered requests without accept statistics"
            if lacking / answered > max_unmeasured:
                message += f", beyond the {max_unmeasured:.0%} accept_max_unmeasured allows"
                return make_check(
                    cell, name, ACCEPT_METRIC, FAIL, message, AcceptMetricNumbers(value)
                )
        return make_check(cell, name, ACCEPT_METRIC, PASS, message, AcceptMetricNumbers(value))
    algorithm = (cell.speculative or {}).get("algorithm")
    message = (
        f"speculative cell ({algorithm}) without an accept metric "
        f"(accept status {accept.status!r}): a missing metric is a failure, not a pass"
    )
    return make_check(cell, name, ACCEPT_METRIC, FAIL, message)


def _window_note(accept: AcceptBlock) -> str:
    # Which requests the server-side figures cover, and how they weighted the DP ranks.
    window, note = accept.window, ""
    if window.get("covers") == "resumed":
        note += (
            f" (server-side figures: the resumed window, {window.get('requests')} of "
            f"{window.get('of')} requests)"
        )
    weighting = accept.data.get("server_accept_weighting")
    if isinstance(weighting, str) and weighting.startswith("unweighted"):
        note += f"; server accept length: {weighting}"
    return note
