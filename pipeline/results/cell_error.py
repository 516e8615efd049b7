"""The exception that ends a cell with an error kind: ``error.kind`` of ``result.json``.

Every part of the cell (serving, measuring, the cell's own guards) raises it, or a subclass that
names the part, and ``pipeline.cell.outcomes`` records it; it lives beside the result contract so
that no part has to import the cell job to say why a cell failed.
"""

from __future__ import annotations


class CellError(RuntimeError):
    """A cell failed for a reason the user can act on; ``kind`` goes into result.json."""

    def __init__(self, kind: str, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.kind, self.log_tail = kind, log_tail
