"""What a reply is built from: the imitated release's flavour and one served choice (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.simserver.logprob_replies import LogprobReply
from pipeline.simserver.model import Completion
from pipeline.simserver.spec import SpecDraw
from pipeline.simserver.surface import SPEC_ALIAS_RELEASES, SimSurface, surface_for

EOS_TOKEN_ID = 151645  # what "matched" reports for a natural stop (a Qwen-style EOS id)


@dataclass(frozen=True)
class Flavour:
    """What the imitated server version and its flags put into responses."""

    version: str
    num_draft_tokens: int  # 0 without speculation
    timing_fields: bool  # --enable-metrics adds per-request timestamps to meta_info
    spec_keys: bool = True  # False under the missing_spec_keys fault

    @property
    def surface(self) -> SimSurface:
        """The imitated release's table entry (which response keys it has)."""
        return surface_for(self.version)

    @property
    def aliases(self) -> bool:
        """Whether this version still emits the spec aliases (0.5.20 and before)."""
        return self.version in SPEC_ALIAS_RELEASES


@dataclass(frozen=True)
class Served:
    """One generated choice with everything its response parts need."""

    rid: str
    completion: Completion
    prompt_tokens: int
    spec: SpecDraw | None  # None without speculation
    received: float  # time.time() when the request arrived
    forward_entry: float  # time.time() when its prefill began (after the configured latency)
    prefill_finished: float  # forward_entry + its prompt's simulated prefill time
    finished: float  # time.time() when generation ended
    dp_rank: int | None = None  # the DP rank that served it (None with one rank)
    logprobs: LogprobReply | None = None  # with return_logprob: the ids and meta_info keys

    @property
    def completion_tokens(self) -> int:
        """Tokens in the (possibly cut) completion."""
        return len(self.completion.tokens)

    @property
    def text(self) -> str:
        """The completion's text."""
        return "".join(self.completion.tokens)
