"""A table as plain rows (``Section``), and the columns and order that say which cell a row is.

Every table of the report is a ``Section``, rendered by ``render_md`` and ``render_html`` alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.report.load.cells import CellRecord
from pipeline.results.skip_factor import is_exact

WHO = "GPU|model|KV dtype|skip-softmax|variant|"


@dataclass
class Section:
    """A titled table with an optional paragraph above it.

    ``links`` maps a row's index to the anchor its ``link_column`` (the verdict) links to in
    the HTML page (the Markdown table has no links).
    """

    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    intro: str = ""
    links: dict[int, str] = field(default_factory=dict)
    link_column: str = "verdict"  # the column whose cell carries the row's link
    link_title: str = "questions that changed"


def sort_key(cell: CellRecord) -> tuple[str, ...]:
    """GPU, model, KV dtype, skip-softmax, variant: the order of every table."""
    skip = (str(cell.skip_prefill), str(cell.skip_decode))
    return (cell.gpu, cell.model, cell.kv_dtype, *skip, cell.variant, cell.id)


def skip_text(cell: CellRecord) -> str:
    """Skip-softmax factors, or 'exact'."""
    if is_exact(cell.skip_prefill) and is_exact(cell.skip_decode):
        return "exact"
    return f"p={cell.skip_prefill} d={cell.skip_decode}"


def who(cell: CellRecord) -> list[str]:
    """The columns that say which cell a row is (``WHO``)."""
    sim = " (simulated)" if cell.simulated and "simulated" not in cell.gpu else ""
    variant = f"{cell.variant} ({cell.layout})" if cell.layout else cell.variant
    return [cell.gpu + sim, cell.model, cell.kv_dtype, skip_text(cell), variant]
