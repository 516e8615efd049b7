"""SGLang's speculative-parameter hooks as rules (``_handle_eagle_family``).

They run before the attention-backend checks of ``compat_rules``, and 0.5.19 and 0.5.23 agree.
"""

from __future__ import annotations

from dataclasses import replace

from backends.resolved import ResolvedCell
from backends.rule import ADJUST, REJECT, SILENT, Rule

_SPEC_HOOK = "sglang/srt/arg_groups/speculative_hook.py"
EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "FROZEN_KV_MTP"})


def _tree_too_wide(c: ResolvedCell) -> bool:
    if c.topk is None or c.topk <= 1 or c.num_steps is None or c.num_draft_tokens is None:
        return False
    return c.num_draft_tokens > c.topk * c.num_steps + 1


SPEC_RULES: tuple[Rule, ...] = (
    Rule(
        id="spec_params_without_num_steps",
        outcome=REJECT,
        message="AssertionError",
        detail="topk or num_draft_tokens set without num_steps: _handle_eagle_family's bare assert",
        when=lambda c: (
            c.algorithm in EAGLE_FAMILY
            and not c.adaptive
            and c.num_steps is None
            and (c.topk is not None or c.num_draft_tokens is not None)
        ),
        source=_SPEC_HOOK,
    ),
    Rule(
        id="spec_chain_draft_tokens",
        outcome=ADJUST,
        message="speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="a topk-1 chain of N steps verifies N+1 tokens; SGLang overrides num_draft_tokens",
        when=lambda c: (
            c.speculative
            and c.topk == 1
            and c.num_steps is not None
            and c.num_draft_tokens is not None
            and c.num_draft_tokens != c.num_steps + 1
        ),
        adjust=lambda c: replace(c, num_draft_tokens=(c.num_steps or 0) + 1),
        source=_SPEC_HOOK,
    ),
    Rule(
        id="spec_tree_draft_tokens_limit",
        outcome=REJECT,
        message=SILENT,
        detail="a topk>1 tree verifies at most topk*num_steps+1 nodes (SGLang says nothing)",
        when=_tree_too_wide,
        source=_SPEC_HOOK,
    ),
    Rule(
        id="spec_max_running_requests_48",
        outcome=ADJUST,
        message="Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting --max-running-requests.",  # noqa: E501 (SGLang text, kept whole for grep)
        detail="eval concurrency above 48 queues in the server",
        when=lambda c: c.speculative and c.max_running_requests is None,
        adjust=lambda c: replace(c, max_running_requests=48),
        source=_SPEC_HOOK,
    ),
)
