"""What the measuring part of a cell reads: the evals, the client, the sequential design.

The cell job builds it once (``pipeline.cell.cell_plan.CellPlan.of``) from the composed config;
measuring never sees the rest of the config (the launch, the cluster, the GPU).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from evals.eval_conf import ClientConf, EvalConf, SamplingConf
from pipeline.config.schema import SequentialConf


@dataclass(frozen=True)
class MeasurePlan:
    """The parts of a cell's config that measuring reads.

    Attributes:
        evals: each eval's settings by name (its own ``sampling`` when set).
        sampling: the model's sampling, for every eval without its own.
        chat_template_kwargs: sent with every request (``model.chat_template_kwargs``).
        reasoning_parser: ``model.reasoning_parser``; set means a reasoning model.
        model_name: the name requests carry (``served_model_name``, else the model path).
        speculative: whether the cell asks for speculative decoding (accept statistics expected).
        client: the HTTP client's settings (concurrency, retries, keys).
        sequential: the sequential design (``enabled: false`` runs every repeat at once).
        idle_timeout_s: how long ``/flush_cache`` waits for the server to be idle.
        on_mismatch: ``server.on_mismatch``, applied when the server's settings change mid-cell.
        on_foreign_traffic: ``server.on_foreign_traffic``, for requests not sent by this cell.
    """

    evals: dict[str, EvalConf]
    sampling: SamplingConf
    chat_template_kwargs: dict[str, Any]
    reasoning_parser: str | None
    model_name: str
    speculative: bool
    client: ClientConf
    sequential: SequentialConf
    idle_timeout_s: float
    on_mismatch: str
    on_foreign_traffic: str

    @property
    def api_key(self) -> str | None:
        """The key every request to the server carries."""
        return self.client.api_key

    @property
    def thinking(self) -> bool:
        """Whether the model reasons before it answers (its reasoning counts in ``max_tokens``)."""
        kwargs = self.chat_template_kwargs or {}
        flags = any(bool(kwargs.get(k)) for k in ("thinking", "enable_thinking"))
        return bool(self.reasoning_parser) or flags

    def with_concurrency(self, concurrency: int) -> MeasurePlan:
        """The plan with the client sending ``concurrency`` requests at once."""
        client = dataclasses.replace(self.client, concurrency=concurrency)
        return dataclasses.replace(self, client=client)

    def repeats_of(self, ec: EvalConf) -> EvalConf:
        """``ec`` with the repeats its design plans (sequential: all, sent in rounds)."""
        if self.sequential.enabled:
            return dataclasses.replace(ec, repeats=self.sequential.max_repeats)
        return ec

    def planned_repeats(self) -> dict[str, int]:
        """Each eval's repeats as its design runs them (sequential: at most)."""
        return {name: self.repeats_of(ec).repeats for name, ec in self.evals.items()}
