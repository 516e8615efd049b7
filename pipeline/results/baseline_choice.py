"""The one rule that picks a candidate cell's baseline, for sequential stopping and the report.

A cell job that stops early (``pipeline.measuring.sequential_run``) and ``mtp-eval-report``
(``pipeline.report.judge.pairing``) both call ``choose_baseline`` on ``CellKey`` values, so a run
never stops against one baseline and is judged against another. The rule, in order:

1. the baseline variant with equal values of ``match`` (the tolerance policy's list: model, KV
   dtype, skip-softmax factors, GPU, speculative recipe); a skip-softmax cell without a baseline
   at its factors takes the one at exact softmax;
2. the same layout (tp, nodes) when there is one, else any, said in the note;
3. only a baseline that is judged itself (``ok``; a MISCONFIGURED one never);
4. one that ran the most of the candidate's evals (a speed-only baseline, ``evals=[]``, has none
   of the questions an accuracy check pairs on: it is left aside where another ran them);
5. one from the candidate's own sweep when there is one; one from another sweep is marked
   ``elsewhere`` (the report warns);
6. of several, the one that ended last, named in the note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.results.result_types import CellIdentity, CellResult
from pipeline.results.skip_factor import is_exact

EXACT = "exact"
UNKNOWN = "unknown"  # an identity field neither the result nor the sweep says


def skip_part(factor: float | None) -> str:
    """A skip-softmax factor as the rule compares it: ``exact`` for None / 0, else the number."""
    return EXACT if is_exact(factor) else str(factor)


def speculative_part(spec: Mapping[str, Any] | None) -> str:
    """A speculative recipe as the rule compares it (``[]`` for none)."""
    return repr(sorted(spec.items())) if spec and spec.get("algorithm") else "[]"


def layout_of(tp: int, nodes: int) -> str:
    """How a model was spread: ``""`` on one GPU, ``tp=2``, ``tp=2 over 2 nodes``."""
    if (tp, nodes) == (1, 1):
        return ""
    return f"tp={tp}" + (f" over {nodes} nodes" if nodes > 1 else "")


@dataclass(frozen=True)
class CellKey:
    """What the rule reads of a cell: what it is, where it ran, and whether it is judged."""

    folder: str
    sweep: str  # the sweep folder it belongs to (a lone cell: the folder above it)
    status: str  # ok | misconfigured | failed | missing | unsupported | planned
    variant: str
    model: str
    kv_dtype: str
    skip: tuple[str, str]  # (prefill, decode) as ``skip_part`` writes them
    speculative: str
    gpu: str
    layout: str
    ended_at: str = ""
    label: str = ""  # how messages name the cell (its folder when empty)
    evals: tuple[str, ...] = ()  # the evals it ran or is set to run

    def part(self, name: str, exact_skip: bool = False) -> Any:
        """The value of one ``match`` entry (``skip_softmax`` at exact softmax if asked)."""
        if name == "skip_softmax":
            return (EXACT, EXACT) if exact_skip else self.skip
        return getattr(self, name, None)

    @property
    def name(self) -> str:
        """How messages name the cell."""
        return self.label or self.folder


def evals_of(result: CellResult) -> tuple[str, ...]:
    """The evals a cell ran or is set to run: its recorded blocks and its config's ``evals``."""
    config = result.raw.get("config")
    planned = config.get("evals") if isinstance(config, Mapping) else None
    return tuple(sorted({*result.evals, *(planned if isinstance(planned, Mapping) else ())}))


@dataclass(frozen=True)
class Where:
    """What the rule reads of a cell besides its identity: where it ran, how it ended."""

    folder: str
    sweep: str  # the sweep folder it belongs to (a lone cell: the folder above it)
    status: str
    layout: str
    ended_at: str = ""
    label: str = ""
    evals: tuple[str, ...] = ()


def key_of(identity: CellIdentity, where: Where) -> CellKey:
    """The rule's key of a cell: its identity (the one type) and where it ran.

    A field the identity does not say reads ``unknown``, on the job's side and the report's alike.
    """
    return CellKey(
        folder=where.folder,
        sweep=where.sweep,
        status=where.status,
        variant=identity.variant or UNKNOWN,
        model=identity.model or UNKNOWN,
        kv_dtype=identity.kv_dtype or UNKNOWN,
        skip=(skip_part(identity.skip_prefill), skip_part(identity.skip_decode)),
        speculative=speculative_part(identity.spec_recipe),
        gpu=identity.gpu_name or UNKNOWN,
        layout=where.layout,
        ended_at=where.ended_at,
        label=where.label,
        evals=where.evals,
    )


def key_of_result(result: CellResult, folder: Path) -> CellKey:
    """The key of a cell from its ``result.json`` (the cell job's view of itself and siblings)."""
    status = "misconfigured" if result.status == "ok" and result.misconfigured() else result.status
    where = Where(
        str(folder), str(folder.parent), status, layout_of(*result.parallel),
        ended_at=result.ended_at or "", evals=evals_of(result),
    )  # fmt: skip
    return key_of(result.cell, where)


@dataclass(frozen=True)
class BaselineChoice:
    """The baseline chosen (None: there is none), how or why not, and whether from elsewhere."""

    chosen: CellKey | None
    note: str
    elsewhere: bool = False  # from another sweep than the candidate's


def _matching(
    cell: CellKey, pool: Sequence[CellKey], match: Sequence[str]
) -> tuple[list[CellKey], str]:
    same = [c for c in pool if all(c.part(m) == cell.part(m) for m in match)]
    if same or "skip_softmax" not in match or cell.skip == (EXACT, EXACT):
        return same, ""
    exact = [
        c for c in pool if all(c.part(m, True) == cell.part(m, True) for m in match)
    ]  # fmt: skip
    return exact, "baseline at exact softmax (none at the same skip-softmax factors)"


def _same_layout(cell: CellKey, same: list[CellKey]) -> tuple[list[CellKey], str]:
    alike = [c for c in same if c.layout == cell.layout]
    if alike or not same:
        return alike, ""
    theirs = sorted({c.layout or "one GPU" for c in same})
    return same, f"baseline at {' / '.join(theirs)} (none at {cell.layout or 'one GPU'})"


def _sharing_evals(cell: CellKey, judged: list[CellKey]) -> tuple[list[CellKey], str]:
    shared = {c: len(set(c.evals) & set(cell.evals)) for c in judged}
    most = max(shared.values(), default=0)
    if most == 0:
        return judged, ""
    kept = [c for c in judged if shared[c] == most]
    aside = len(judged) - len(kept)
    return kept, (f"{aside} baseline cell(s) with fewer of its evals left aside" if aside else "")


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def choose_baseline(
    cell: CellKey, pool: Sequence[CellKey], baseline: str, match: Sequence[str]
) -> BaselineChoice:
    """The baseline cell of ``cell`` among ``pool`` by the rule of this module's docstring."""
    others = [c for c in pool if c.variant == baseline and c.folder != cell.folder]
    same, note = _matching(cell, others, match)
    same, how = _same_layout(cell, same)
    note = _joined(note, how)
    judged = [c for c in same if c.status == "ok"]
    if not judged:
        if same:
            return BaselineChoice(None, f"baseline {same[0].name} is {same[0].status.upper()}")
        return BaselineChoice(
            None, f"no {baseline} cell with the same {', '.join(match)} among the inputs"
        )
    judged, fewer = _sharing_evals(cell, judged)
    note = _joined(note, fewer)
    own = [c for c in judged if c.sweep == cell.sweep]
    where = ""
    if not own:
        sweeps = sorted({c.sweep for c in judged})
        where = f"baseline from another sweep ({', '.join(sweeps)}): none in {cell.sweep}"
    pick = sorted(own or judged, key=lambda c: c.ended_at)
    latest = pick[-1]
    if len(pick) > 1:
        ended = f"ended {latest.ended_at}" if latest.ended_at else "none says when it ended"
        how = f"{len(pick)} baseline cells match; used the one that ended last: {latest.folder}"
        note = _joined(note, f"{how} ({ended})")
    return BaselineChoice(latest, _joined(note, where), elsewhere=not own)
