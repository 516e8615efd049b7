"""What every kind of check has: ``CheckKind``, and ``CheckReading``, how a kind reads a check.

A kind knows its name (as ``summary.json`` writes it), its title in tables and JUnit, how its
numbers read in one line, the ``cells.csv`` columns it fills, and why a number of it can be
missing (``null`` in ``summary.json``). A kind reads a check through ``CheckReading`` (its
verdict, message, numbers and adjusted p-values), so the kinds do not import ``verdicts``, whose
``Check`` holds a kind. The kinds themselves are in ``check_kinds`` (the registry) and the
modules it gathers them from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from pipeline.report.judge.check_numbers import Adjusted, Numbers

# Why a number is missing, when it is missing by design (the rest get ``UNDEFINED``).
UNDEFINED = "not a finite number: these samples do not define it"
NO_GO_TEST = "an alarm only: there is no GO test, so no GO p-value"


CsvValue = str | float | None  # a cells.csv field (ints are floats to the type checker)
CsvFields = dict[str, CsvValue]


class CheckReading(Protocol):
    """What a kind reads of a check (``verdicts.Check`` is one)."""

    verdict: str
    message: str
    numbers: Numbers
    adjusted: Adjusted | None


@dataclass(frozen=True)
class CheckKind:
    """A kind of check: status, accept metric and the kinds below without numbers of their own."""

    name: str
    title_template: str
    null_reasons: ClassVar[dict[str, str]] = {}

    def title(self, baseline: str) -> str:
        """The check's name in tables and JUnit (``{baseline}`` filled in)."""
        return self.title_template.format(baseline=baseline)

    def describe(self, check: CheckReading) -> str:
        """The check's numbers in one line; a kind without numbers shows its message."""
        return check.message

    @property
    def columns(self) -> tuple[str, ...]:
        """The ``cells.csv`` columns this kind fills (none for a kind without numbers)."""
        return ()

    def csv_fields(self, check: CheckReading) -> CsvFields:
        """The values of ``columns`` for ``check``."""
        return {}

    def null_reason(self, key: str) -> str:
        """Why the number ``key`` is not a finite one (``summary.json`` writes it beside)."""
        return self.null_reasons.get(key, UNDEFINED)
