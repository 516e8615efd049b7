"""``CellRecord``: what the report knows about one cell, present or MISSING, around its identity."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.results.baseline_choice import UNKNOWN, layout_of
from pipeline.results.cell_paths import cell_name
from pipeline.results.result_types import CellIdentity, CellResult, EvalSummary


@dataclass
class CellRecord:
    """What the report knows about one cell (present or MISSING).

    ``identity`` is the cell's one identity (``CellIdentity``: from its ``result.json``, or for a
    MISSING cell from what its sweep says); the fields below read it, ``unknown`` where unsaid.
    """

    id: str
    folder: Path | None
    status: str  # ok | failed | unsupported | planned | missing | misconfigured
    identity: CellIdentity
    simulated: bool = False
    result: CellResult = field(default_factory=lambda: CellResult.from_json({}))
    overrides: tuple[str, ...] = ()
    note: str = ""
    sweep: str = ""  # the sweep folder it came from (a lone cell: the folder above it)
    shown_sweep: str = ""  # set when the report holds several sweeps: the label names it

    @property
    def model(self) -> str:
        """The model's name."""
        return _text(self.identity.model)

    @property
    def model_path(self) -> str:
        """The model's path."""
        return _text(self.identity.model_path)

    @property
    def variant(self) -> str:
        """The attention-backend variant."""
        return _text(self.identity.variant)

    @property
    def kv_dtype(self) -> str:
        """The KV cache dtype."""
        return _text(self.identity.kv_dtype)

    @property
    def skip_prefill(self) -> float | None:
        """The prefill skip-softmax factor (None: unset)."""
        return self.identity.skip_prefill

    @property
    def prefill_factor(self) -> float:
        """The prefill skip-softmax factor, 0 for exact softmax (unset or 0)."""
        return self.skip_prefill or 0.0

    @property
    def skip_decode(self) -> float | None:
        """The decode skip-softmax factor (None: unset)."""
        return self.identity.skip_decode

    @property
    def speculative(self) -> dict[str, Any] | None:
        """The speculative recipe, None when the cell does not speculate."""
        spec = self.identity.spec_recipe
        return dict(spec) if spec is not None else None

    @property
    def gpu(self) -> str:
        """The GPU's name (``unknown`` when neither the cell nor its sweep says)."""
        return _text(self.identity.gpu_name)

    @property
    def name(self) -> str:
        """model/variant/kv/sp=/sd= (as the cell job names it)."""
        return cell_name(
            self.model, self.variant, self.kv_dtype, self.skip_prefill, self.skip_decode
        )

    @property
    def layout(self) -> str:
        """How the model was spread: ``""`` on one GPU, ``tp=2``, ``tp=2 over 2 nodes``."""
        return layout_of(*self.result.parallel)

    @property
    def label(self) -> str:
        """Name, layout, GPU, sweep (of several) and the simulated mark: how outputs name it."""
        spread = f" ({self.layout})" if self.layout else ""
        where = f" [sweep {self.shown_sweep}]" if self.shown_sweep else ""
        mark = " [simulated]" if self.simulated else ""
        return f"{self.name}{spread} @ {self.gpu}{where}{mark}"

    @property
    def unverified(self) -> list[str]:
        """Settings the cell asked for that its server did not report (so not checked)."""
        return self.result.unverified_lines()

    @property
    def evals(self) -> dict[str, EvalSummary]:
        """Per-eval summaries from result.json (empty when none)."""
        return dict(self.result.evals)


def _text(value: str | None) -> str:
    return UNKNOWN if value is None else value
