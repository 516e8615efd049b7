"""How long the simulated server takes to prefill and decode: a latency table per backend and KV.

Off by default (``timing_model: null``: prefill takes ``prefill_s_per_1k_tokens``, decode takes no
time, as before). A named table gives each (attention backend, KV dtype) a cost: a fixed part per
forward pass, a part per prompt token and a quadratic part (attention over the prompt), and a
decode step's cost. The numbers are made up (no GPU here), shaped like the H200's: fmha_v2
(``trtllm_mha``) pays a larger fixed cost than fa3, so it is slower at 1k tokens and closer at
long prompts; fp8 KV makes long attention cheaper. On a release whose fmha_v2 copies the layer's
whole KV pool on every prefill (0.5.19-0.5.22: ``SimSurface.fmha_v2_copies_pool``), the
``h200_8b_shape`` table's fmha_v2 rows pay that copy per prefill pass in proportion to the pool
(``max_total_num_tokens``); 0.5.23 reads the pages in place, so its fixed cost is fa3's.
Reported times carry a small deterministic jitter per request, so repeats spread as a real
server's do and the report's intervals are real. The jitter follows the prompt, so two servers
of one configuration (an A/A pair) report the same prefill times (ratio 1 exactly); their decode
spans, really slept, differ.

Concurrency and speculation: a decode step's cost grows with the requests running on the
server (``running``: the simulated server's in-flight count when the request's decode starts),
and with speculation on a step is a verify step: it adds the draft's own steps (``draft_s``) and
verifies ``draft_tokens`` positions per request, so each request's per-step share grows that many
times. At batch 1 the fewer steps win (speculation pays by about the accept length over the
draft's overhead); with many requests running the wider verify outweighs them and speculation
stops paying, as users report on GPUs. A server without speculation decodes one token per step
at the plain step's cost.

Skip-softmax (``SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR``) is modelled only by the
``h200_synth_llama`` table, on its fmha_v2 (``trtllm_mha``) prefill rows: the share of key tiles
skipped grows with the factor along a logistic curve in log(factor) shaped like the one measured
with HF on the trained model (``benchmarks/results/live-h200/signoff/checks/skip_fraction.json``:
35% at 1e4, 65% at 3e4 with bf16 KV), and a skipped tile saves part of its attention cost (its
softmax and P.V; its Q.K^T still runs). So the gain grows with the factor and with the prompt
length (the quadratic part's share); the other tables ignore the factor, as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The variable SGLang's fmha_v2 (trtllm_mha) prefill reads its skip-softmax factor from.
PREFILL_SKIP_ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"


@dataclass(frozen=True)
class SkipCurve:
    """How a kernel's skip-softmax answers its factor: the tiles it skips, what a skip saves."""

    half_factor: float  # the factor at which half the key tiles are skipped
    slope: float  # how steeply the share grows with log(factor)
    saving: float  # the share of a skipped tile's attention cost saved (softmax, P.V)


def skipped_share(curve: SkipCurve, factor: float) -> float:
    """The share of key tiles skipped at ``factor`` (0 at exact softmax, towards 1 above)."""
    if factor <= 0:
        return 0.0
    odds = float((factor / curve.half_factor) ** curve.slope)
    return odds / (1.0 + odds)


@dataclass(frozen=True)
class Cost:
    """What one variant's forward passes cost, in seconds."""

    fixed_s: float  # per prefill pass (launch, a whole-pool copy)
    per_token_s: float  # per prompt token (the MLPs, projections)
    per_token2_s: float  # per prompt token squared (attention over the prompt)
    step_s: float  # one decode (or speculative verify) step of a batch
    step_per_request_s: float  # added to a step per request decoded in it
    skip: SkipCurve | None = None  # skip-softmax's effect on the quadratic part (None: none)
    pool_copy_s: float = 0.0  # per prefill pass and million KV-pool tokens, where it copies
    draft_s: float = 0.0006  # the draft model's steps of one speculative verify step


_FA3 = Cost(0.002, 1.0e-6, 2.0e-12, 0.0010, 0.00002)
# fmha_v2's whole-pool copy: 3 ms at the simulated server's default pool (10.9M tokens), so with
# it fmha_v2's fixed cost is 5 ms to fa3's 2 ms, without it (0.5.23) fa3's.
_COPY = 0.003 / 10.897984
_FMHA_V2 = Cost(0.002, 1.1e-6, 1.8e-12, 0.0011, 0.00002, pool_copy_s=_COPY)
_FA3_FP8 = Cost(0.002, 1.0e-6, 1.4e-12, 0.0010, 0.00002)
_FMHA_V2_FP8 = Cost(0.002, 1.05e-6, 1.1e-12, 0.0011, 0.00002, pool_copy_s=_COPY)
_OTHER = Cost(0.003, 1.2e-6, 2.5e-12, 0.0012, 0.00003)

# The trained 9M model (benchmarks/results/live-h200/trained-model): 6 layers of width 384, so
# attention over the prompt outweighs the rest from a few thousand tokens on, where skipping can
# show. Made up like the rest; the curve's half point sits between the measured 1e4 and 3e4.
_SKIP = SkipCurve(half_factor=1.8e4, slope=1.0, saving=0.5)
_SYNTH_FA3 = Cost(0.002, 2.0e-7, 1.2e-10, 0.0010, 0.00002)
_SYNTH_FMHA_V2 = Cost(0.0025, 2.0e-7, 1.1e-10, 0.0011, 0.00002, skip=_SKIP)
_SYNTH_FA3_FP8 = Cost(0.002, 2.0e-7, 0.9e-10, 0.0010, 0.00002)
_SYNTH_FMHA_V2_FP8 = Cost(0.0025, 2.0e-7, 0.8e-10, 0.0011, 0.00002, skip=_SKIP)

# table name -> attention backend -> KV dtype -> cost; "*" rows answer any other backend / dtype.
TABLES: dict[str, dict[str, dict[str, Cost]]] = {
    "h200_8b_shape": {
        "fa3": {"*": _FA3, "fp8_e4m3": _FA3_FP8},
        "trtllm_mha": {"*": _FMHA_V2, "fp8_e4m3": _FMHA_V2_FP8},
        "*": {"*": _OTHER},
    },
    "h200_synth_llama": {
        "fa3": {"*": _SYNTH_FA3, "fp8_e4m3": _SYNTH_FA3_FP8},
        "trtllm_mha": {"*": _SYNTH_FMHA_V2, "fp8_e4m3": _SYNTH_FMHA_V2_FP8},
        "*": {"*": _OTHER},
    },
}


@dataclass(frozen=True)
class TimingModel:
    """The costs one server runs with: its prefill backend's and its decode backend's."""

    prefill: Cost
    decode: Cost
    jitter: float  # the spread of a reported time: +-jitter of it, uniform
    skip_factor: float = 0.0  # the prefill's skip-softmax factor (0: exact softmax)
    copied_pool_tokens: int = 0  # the KV pool an fmha_v2 prefill copies per call (0: none)
    draft_tokens: int = 0  # positions a verify step checks per request (0: speculation off)


def _cost(table: Mapping[str, Mapping[str, Cost]], backend: str | None, kv: str) -> Cost:
    rows = table.get(backend or "", table["*"])
    return rows.get(kv, rows["*"])


def timing_model(
    name: str | None, args: Mapping[str, Any], jitter: float, skip_factor: float = 0.0,
    copied_pool_tokens: int = 0,
) -> TimingModel | None:  # fmt: skip
    """The model of a server started with ``args`` (None: the table is off).

    ``skip_factor`` is the server's prefill skip-softmax factor (``prefill_skip_factor``);
    ``copied_pool_tokens`` the KV pool its release's fmha_v2 copies per prefill (0: none).
    Speculation (``speculative_algorithm`` set) makes decode steps verify steps of
    ``speculative_num_draft_tokens`` positions.

    Raises:
        ValueError: ``name`` is no table here (the message lists the tables).
    """
    if name is None:
        return None
    if name not in TABLES:
        raise ValueError(f"timing_model {name!r} is not a table here: use one of {sorted(TABLES)}")
    table, kv = TABLES[name], str(args.get("kv_cache_dtype") or "auto")
    base = args.get("attention_backend")
    prefill = _cost(table, args.get("prefill_attention_backend") or base, kv)
    decode = _cost(table, args.get("decode_attention_backend") or base, kv)
    drafts = int(args.get("speculative_num_draft_tokens") or 2)
    width = drafts if args.get("speculative_algorithm") else 0
    return TimingModel(prefill, decode, jitter, skip_factor, copied_pool_tokens, width)


def prefill_skip_factor(env: Mapping[str, str]) -> float:
    """The prefill skip-softmax factor a server's environment sets (0 when unset or empty).

    The value was checked as SGLang checks it (``resolve``: a float) before this reads it.
    """
    return float(env.get(PREFILL_SKIP_ENV) or 0.0)


def attention_s(cost: Cost, tokens: int, skip_factor: float) -> float:
    """Attention over one prompt of ``tokens``: the quadratic part, less what skipping saves."""
    full = cost.per_token2_s * tokens * tokens
    if cost.skip is None:
        return full
    return full * (1.0 - cost.skip.saving * skipped_share(cost.skip, skip_factor))


def _jittered(model: TimingModel, seconds: float, key: str) -> float:
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    unit = int.from_bytes(digest, "big") / 2**64  # [0, 1), the same for the same prompt
    return seconds * (1.0 + model.jitter * (2.0 * unit - 1.0))


def batch_prefill_s(model: TimingModel, prompt_tokens: Sequence[int], key: str) -> float:
    """One prefill pass over every prompt of a batch (``key``: the batch's first prompt)."""
    cost = model.prefill
    factor = model.skip_factor
    tokens = sum(cost.per_token_s * n + attention_s(cost, n, factor) for n in prompt_tokens)
    copy = cost.pool_copy_s * model.copied_pool_tokens / 1e6
    return _jittered(model, cost.fixed_s + copy + tokens, "prefill:" + key)


def step_s(model: TimingModel, running: int) -> float:
    """One decode step (a verify step with speculation) with ``running`` requests decoding."""
    cost = model.decode
    if not model.draft_tokens:
        return cost.step_s + cost.step_per_request_s * running
    per_request = cost.step_per_request_s * model.draft_tokens
    return cost.step_s + cost.draft_s + per_request * running


def batch_decode_s(model: TimingModel, steps: Sequence[int], key: str, running: int = 0) -> float:
    """Decoding a batch whose requests take ``steps`` steps each (it ends with the longest).

    ``running``: requests decoding on the server besides this batch's own (other requests).
    """
    step = step_s(model, len(steps) + running)
    return _jittered(model, step * max(steps, default=0), "decode:" + key)
