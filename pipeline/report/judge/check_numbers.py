"""The numbers each kind of check carries: one small frozen type per kind or family of kinds.

A check's numbers are read by attribute (tables, plots, ``cells.csv``, MLflow); only the JSON
edge (``summary.json``, ``junit.xml``, the parity list) turns them into a mapping, through
``numbers_json``: the fields in the order they are declared, which is the order ``summary.json``
has always written them in, a field still ``UNSET`` left out (a key the check never had), a
``flatten`` field's own keys written in its place. ``Adjusted`` is what ``verdicts.finalize``
adds to a statistical check after the multiplicity correction; it follows the kind's numbers.
The four comparisons' numbers are in ``drop_numbers.py``, the parity checks' in
``parity_numbers.py``; the rest here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from typing import Any, Final


class Unset(Enum):
    """A number the check never had: not written at all (``null`` would be a value)."""

    UNSET = "unset"

    def __bool__(self) -> bool:
        # Falsy like the absent key it stands for: `if n.stopped_early:` read a never-set field
        # as set (an enum member is truthy), and every reference check became INFO.
        return False


UNSET: Final = Unset.UNSET
FLAT: Final = {"flatten": True}  # field metadata: the field's own keys take its place


@dataclass(frozen=True)
class Numbers:
    """A check without numbers of its own (status, no baseline, errors)."""


NO_NUMBERS: Final = Numbers()


@dataclass(frozen=True)
class Adjusted:
    """What the multiplicity correction adds: adjusted p-values, family, repeats still needed."""

    p_go_adjusted: float
    p_nogo_adjusted: float
    family_size: int
    extra_repeats: int | Unset | None = UNSET  # None: repeats alone would not decide it


@dataclass(frozen=True)
class AcceptMetricNumbers(Numbers):
    """The accept length a speculative cell reported."""

    accept_length: float


@dataclass(frozen=True)
class McNemarNumbers(Numbers):
    """Discordant questions on each side and the exact one-sided p-value."""

    b: int
    c: int
    p: float


@dataclass(frozen=True)
class BrokenNumbers(Numbers):
    """Questions that could show a break, those that broke, the sign test's p-value."""

    testable: int
    broken_questions: list[str]
    p: float
    baseline: str
    nogo_family: int | Unset = UNSET  # a sequential candidate's NO-GO split, as its looks


@dataclass(frozen=True)
class SpeedShapeNumbers(Numbers):
    """The shape (or serving level) a speed check judges and its band."""

    phase: str
    batch: int
    tokens: int
    max_slowdown: float


@dataclass(frozen=True)
class SpeedNumbers(SpeedShapeNumbers):
    """A shape's slowdown against the baseline, its widened interval and the ratio."""

    slowdown: float
    slowdown_low: float
    slowdown_high: float
    ratio: float
    ratio_ci95: list[float]
    aa_band: float | None
    same_kernels: bool
    baseline: str
    baseline_folder: str


@dataclass(frozen=True)
class BinRow:
    """One bin of a by-length or by-category check (change: candidate minus baseline)."""

    label: str
    questions: int
    change: float
    change_low: float
    change_high: float
    p_go: float
    p_nogo: float
    verdict: str


PerPosition = dict[str, dict[str, list[float]]]  # side -> bin -> acceptance at position 1, 2, ...


@dataclass(frozen=True)
class ByBinNumbers(Numbers):
    """Paired checks per bin: a row per bin, the level and the correction over the bins."""

    bins: list[BinRow]
    alpha: float
    multiplicity: str
    baseline: str


@dataclass(frozen=True)
class AccuracyByBinNumbers(ByBinNumbers):
    """Accuracy per bin against the margin."""

    margin: float
    dimension: str


@dataclass(frozen=True)
class AcceptByBinNumbers(ByBinNumbers):
    """Accept length per bin against the band, with the per-position acceptance per bin."""

    band: float
    per_position: PerPosition
    dimension: str


@dataclass(frozen=True)
class GatedNumbers(Numbers):
    """A cell a parity NO-GO ended before its evals: the repeats per eval not spent."""

    accuracy_skipped: dict[str, int]


@dataclass(frozen=True)
class LosslessNumbers(Numbers):
    """Greedy outputs with speculation on against off: where each request first differs."""

    spec_off_cell: str
    requests: int
    exact_match_rate: float
    first_divergence: dict[str, int]
    deterministic: bool


def numbers_json(numbers: Numbers, adjusted: Adjusted | None = None) -> dict[str, Any]:
    """The mapping ``summary.json`` writes: declared order, ``UNSET`` left out, ``FLAT`` inlined."""
    return _mapping(numbers) | (_mapping(adjusted) if adjusted else {})


def _mapping(part: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(part):
        value = getattr(part, f.name)
        if value is UNSET:
            continue
        if f.metadata.get("flatten"):
            out.update(_mapping(value) if is_dataclass(value) else value)
        else:
            out[f.name] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if hasattr(value, "to_json"):  # a part that leaves its unknown fields out (worst sequences)
        return value.to_json()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return _mapping(value) if is_dataclass(value) and not isinstance(value, type) else value
