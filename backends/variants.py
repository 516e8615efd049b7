"""Per-GPU-family and per-SGLang-version facts about the attention-backend variants.

The flags a variant asks for live in ``conf/backend/*.yaml`` (``BackendConf``). This module holds
what SGLang does with them (``srt/arg_groups/attention_hook.py`` of each wheel): which kernel really
runs for prefill, decode, verify and draft on each SM family, and the routing the ``fmha_v2``
variant needs where XQA cannot run speculative work: SGLang passes XQA its speculative-decoding mask
from 0.5.21 for target-verify only, from 0.5.22 for draft-extend too (``trtllm_mha_backend.py`` of
each wheel; ``benchmarks/results/sglang-rules.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from backends.backend_conf import BackendConf
from backends.version_ranges import Version, in_range

SM8X = frozenset({"SM80", "SM86", "SM89"})  # capability major 8: SGLang's fa3 assert accepts it
SM100_FAMILY = frozenset({"SM100", "SM103"})  # is_sm100: capability major 10
XQA_FAMILIES = frozenset({"SM90", "SM120"})  # trtllm_mha = fmha_v2 prefill + XQA decode
TRTLLM_MHA_FAMILIES = XQA_FAMILIES | SM100_FAMILY
UNSUPPORTED = "unsupported"


def kernel(backend: str | None, phase: str, family: str) -> str:
    """Name of the kernel that a SGLang attention backend runs for a phase on a GPU family.

    Args:
        backend: SGLang backend name (``trtllm_mha``, ``fa3``, ...); None for "none chosen".
        phase: ``prefill`` or ``decode`` (verify and draft map onto these, see ``runs_of``).
        family: SM family name, e.g. ``SM90``.

    Returns:
        The kernel name: ``fmha_v2``, ``xqa``, ``trtllm-gen``, ``fa3``, ``flashinfer``, ``triton``,
        ``unsupported`` where SGLang refuses the backend on that family, ``default`` for None.
    """
    if backend is None:
        return "default"
    if backend != "trtllm_mha":
        return backend
    if family in SM100_FAMILY:
        return "trtllm-gen"
    if family in XQA_FAMILIES:
        return "fmha_v2" if phase == "prefill" else "xqa"
    return UNSUPPORTED


@dataclass(frozen=True)
class AttentionFlags:
    """The attention flags a cell passes to SGLang (None: flag not passed)."""

    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    draft_attention_backend: str | None = None  # --speculative-draft-attention-backend
    speculative_attention_mode: str | None = None  # None: SGLang's default, prefill

    @property
    def prefill(self) -> str | None:
        """Backend of real prefill batches ("the split flags have priority")."""
        return self.prefill_attention_backend or self.attention_backend

    @property
    def decode(self) -> str | None:
        """Backend of decode batches."""
        return self.decode_attention_backend or self.attention_backend

    @property
    def verify(self) -> str | None:
        """Backend that runs target-verify and draft-extend (``--speculative-attention-mode``)."""
        return self.decode if self.speculative_attention_mode == "decode" else self.prefill

    @property
    def draft(self) -> str | None:
        """Backend of the draft worker's decode (assumed: the decode backend unless overridden)."""
        return self.draft_attention_backend or self.decode

    @property
    def draft_extend(self) -> str | None:
        """Backend of the draft worker's draft-extend (``DraftBackendFactory``, 0.5.19-0.5.23).

        The draft backend flag when given, else the backend ``--speculative-attention-mode``
        picks, as for verify.
        """
        return self.draft_attention_backend or self.verify

    def backends(self) -> set[str]:
        """Every backend SGLang instantiates for these flags."""
        return {b for b in (self.prefill, self.decode, self.draft) if b is not None}


def flags_of(backend: BackendConf, speculative: bool) -> AttentionFlags:
    """The flags a backend config asks for; speculative-only flags dropped without speculation."""
    flags = AttentionFlags(
        attention_backend=backend.attention_backend,
        prefill_attention_backend=backend.prefill_attention_backend,
        decode_attention_backend=backend.decode_attention_backend,
        draft_attention_backend=backend.draft_attention_backend,
        speculative_attention_mode=backend.speculative_attention_mode,
    )
    if speculative:
        return flags
    return replace(flags, draft_attention_backend=None, speculative_attention_mode=None)


VERIFY_AND_DRAFT = "verify-and-draft"  # decode, verify, draft and draft-extend move
DRAFT_ONLY = "draft"  # the draft worker (draft decode and draft-extend) moves, verify stays


@dataclass(frozen=True)
class VerifyRoute:
    """Where a variant sends speculative work on some families and versions, off its backend."""

    variant: str
    families: dict[str, str]  # family -> backend that takes the routed phases
    since: str | None
    until: str | None
    reason: str
    moves: str = VERIFY_AND_DRAFT  # which phases: VERIFY_AND_DRAFT or DRAFT_ONLY
    sources: tuple[str, ...] = field(default=())


# Before 0.5.21 SGLang passes XQA no mask, so verify and draft-extend assert in FlashInfer's xqa.py:
# the "fmha_v2 prefill + MTP (fa3 verify)" row of PR #23112/#32272. SM120 has no fa3, so
# flashinfer verifies there. The draft backend is pinned too, so that the draft worker cannot fall
# back to trtllm_mha (XQA) whatever SGLang's draft default is.
FMHA_V2_VERIFY_ROUTE = VerifyRoute(
    variant="fmha_v2",
    families={"SM90": "fa3", "SM120": "flashinfer"},
    since=None,
    until="0.5.21",
    reason=(
        "XQA has no speculative-verify mask before SGLang 0.5.21 (FlashInfer asserts 'Mask is "
        "required for speculative decoding'), so verify and draft-extend run on {backend}"
    ),
    sources=("sglang 0.5.19/0.5.20 trtllm_mha_backend.py", "flashinfer xqa.py", "PR #32269"),
)
# 0.5.21 builds the mask but passes it for target-verify only: the draft worker's draft-extend on
# XQA still asserts, so only the draft worker moves (--speculative-draft-attention-backend is what
# DraftBackendFactory reads for draft decode and draft-extend). Read from the wheel, not run.
FMHA_V2_DRAFT_ROUTE = VerifyRoute(
    variant="fmha_v2",
    families={"SM90": "fa3", "SM120": "flashinfer"},
    since="0.5.21",
    until="0.5.22",
    reason=(
        "SGLang 0.5.21 passes XQA its speculative-decoding mask for target-verify only, so "
        "verify stays on XQA and the draft worker (draft decode and draft-extend) runs on {backend}"
    ),
    moves=DRAFT_ONLY,
    sources=("sglang 0.5.21 trtllm_mha_backend.py", "sglang 0.5.21 speculative/draft_utils.py"),
)
VERIFY_ROUTES = (FMHA_V2_VERIFY_ROUTE, FMHA_V2_DRAFT_ROUTE)


def _routed(flags: AttentionFlags, route: VerifyRoute, target: str) -> AttentionFlags:
    if route.moves == DRAFT_ONLY:
        return replace(flags, draft_attention_backend=target)
    return AttentionFlags(
        attention_backend=None,
        prefill_attention_backend=flags.prefill,
        decode_attention_backend=target,
        draft_attention_backend=target,
        speculative_attention_mode="decode",
    )


def route_flags(
    backend: BackendConf, family: str, version: Version, speculative: bool
) -> tuple[AttentionFlags, list[str]]:
    """The flags a variant really passes on this GPU family and SGLang version, with notes.

    Args:
        backend: The variant's config.
        family: SM family name.
        version: SGLang version.
        speculative: Whether the cell runs speculative decoding.

    Returns:
        The flags, and one note per routing decision (empty when the variant runs as configured).
    """
    flags = flags_of(backend, speculative)
    if not speculative:
        return flags, []
    for route in VERIFY_ROUTES:
        target = route.families.get(family)
        if route.variant != backend.name or target is None:
            continue
        target = backend.verify_backend or target
        if not in_range(version, route.since, route.until):
            continue
        note = (
            f"{backend.name} on {family} with SGLang {version}: prefill stays {flags.prefill}; "
            + route.reason.format(backend=target)
        )
        return _routed(flags, route, target), [note]
    return flags, []


def runs_of(flags: AttentionFlags, family: str, speculative: bool) -> dict[str, str]:
    """Kernels that really run for each phase.

    trtllm_mha always verifies with its decode kernel, even when verify is routed through the
    prefill backend (``uses_decode_kernel``), so fmha_v2 never verifies.

    Args:
        flags: The flags after routing and SGLang's adjustments.
        family: SM family name.
        speculative: Whether verify and draft phases exist.

    Returns:
        ``{"prefill": ..., "decode": ...}`` plus ``"verify"`` and ``"draft"`` with speculation.
    """
    runs = {
        "prefill": kernel(flags.prefill, "prefill", family),
        "decode": kernel(flags.decode, "decode", family),
    }
    if speculative:
        runs["verify"] = kernel(flags.verify, "decode", family)
        runs["draft"] = kernel(flags.draft, "decode", family)
    return runs
