"""``parity.sequences_from=auto``: the baseline's sequences found by the report's own rule.

A candidate must re-score the baseline's own token ids, so it finds them at run time: among
the finished cells of its sweep (or ``sequential.baseline_dir``), the cell
``pipeline.results.baseline_choice`` picks for it with the policy's match list
(``sequential.tolerance``, the one ``mtp-eval-report`` judges with), as sequential stopping does.
A cell of the baseline variant (``sequential.baseline``) generates them instead. In a multirun
on the basic launcher the jobs run in order: list the baseline first.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.config.schema import ParityConf, SequentialConf
from pipeline.measuring.baseline_lookup import find_baseline
from pipeline.measuring.eval_window import MeasureError
from pipeline.measuring.parity_client import PHASE
from pipeline.results.baseline_choice import key_of_result
from pipeline.results.cell_paths import parity_dir
from pipeline.results.result_draft import ResultDraft

AUTO = "auto"


def resolve_source(
    conf: ParityConf, seq: SequentialConf, cell_dir: Path, result: ResultDraft
) -> ParityConf:
    """``conf`` with ``sequences_from`` resolved when it is ``auto`` (None: this cell generates).

    Raises:
        MeasureError: when no finished baseline cell with parity sequences is found.
    """
    if conf.sequences_from != AUTO:
        return conf
    me = key_of_result(result.as_result(), cell_dir)
    if me.variant == seq.baseline:
        return replace(conf, sequences_from=None)
    choice = find_baseline(cell_dir, me, seq)
    chosen = Path(choice.chosen.folder) if choice.chosen is not None else None
    if chosen is None or not (parity_dir(chosen) / "sequences.jsonl").is_file():
        why = choice.note if chosen is None else f"{chosen} kept no parity sequences"
        raise MeasureError(
            PHASE,
            f"{PHASE}: parity.sequences_from=auto found no {seq.baseline} cell to re-score "
            f"({why}); run the {seq.baseline} cell with parity.enabled=true first (list it "
            "first in the sweep) or name its folder in parity.sequences_from",
        )
    return replace(conf, sequences_from=str(chosen))
