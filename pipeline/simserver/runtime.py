"""What one simulated server process is, fixed at start-up, and how it answers one prompt.

``Runtime`` bundles the resolved arguments, the cell's targets and the precomputed pieces the hot
path needs (answer index, acceptance thresholds), so a request costs a couple of hashes, a short
loop of random draws and one JSON dump.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.simserver.effects import CellTargets, request_targets
from pipeline.simserver.faults import Faults
from pipeline.simserver.logprob_replies import LogprobModel
from pipeline.simserver.model import (
    AnswerIndex,
    Completion,
    hash_units,
    plan_completion,
    run_on,
    truncate,
)
from pipeline.simserver.sampling import question_difficulty
from pipeline.simserver.served import Flavour, Served
from pipeline.simserver.simconfig import SimConfig
from pipeline.simserver.spec import SpecDraw, chain_probability, draw_spec, thresholds
from pipeline.simserver.timing import TimingModel

# Keys that define a cell for the acceptance RNG: a change here redraws the accept sequence.
_CELL_KEYS = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend",
    "speculative_draft_attention_backend", "speculative_attention_mode", "kv_cache_dtype",
    "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
    "speculative_num_draft_tokens", "page_size",
)  # fmt: skip


@dataclass(frozen=True)
class Runtime:
    """Start-up facts of the server process."""

    conf: SimConfig
    faults: Faults
    args: dict[str, Any]  # server_args as /server_info reports them
    version: str
    targets: CellTargets
    index: AnswerIndex
    flavour: Flavour
    cell_id: str
    env_vars: dict[str, str] | None  # internal_states env_vars (SGLANG_EXPOSE_OWN_ENV_VARS=1)
    launch_command: str
    # SGLang's start-up durations, this start's own (a restart reports others, as SGLang does).
    startup_time: dict[str, Any] = field(default_factory=dict)
    ascending: list[float] | None = field(default=None)  # acceptance thresholds; None: no spec
    sampling_nonce: str = ""  # drawn at start-up when sampling_spread > 0: starts draw apart
    timing: TimingModel | None = None  # the latency table (timing_model); None: the linear prefill
    logprobs: LogprobModel | None = None  # what return_logprob reads (None: the defaults)

    @property
    def spec_on(self) -> bool:
        """Whether speculative decoding is configured."""
        return self.ascending is not None

    @property
    def latency_s(self) -> float:
        """Delay added to every request (top-level, the fault flag and the cell's effects)."""
        return self.conf.latency_s + self.faults.latency_s + self.targets.latency_s


def prefill_time(rt: Runtime, prompt_tokens: int) -> float:
    """Seconds the simulated prefill of ``prompt_tokens`` takes: linear in the prompt's length."""
    return rt.conf.prefill_s_per_1k_tokens * max(prompt_tokens, 0) / 1000.0


def cell_id(args: Mapping[str, Any], env: Mapping[str, str], targets: CellTargets) -> str:
    """A short stable id of the cell: the keys that change acceptance plus SGLANG_* variables."""
    sig = {k: args.get(k) for k in _CELL_KEYS}
    # Where kernels are cached (SGLANG_CACHE_DIR, SGLANG_DG_CACHE_DIR) changes no answer.
    own = (k for k in sorted(env) if k.startswith("SGLANG_") and not k.endswith("_CACHE_DIR"))
    sig["env"] = {k: env[k] for k in own}
    sig["targets"] = [targets.accuracy, targets.accept_length]
    return hashlib.blake2b(json.dumps(sig, sort_keys=True).encode(), digest_size=8).hexdigest()


def acceptance_thresholds(args: Mapping[str, Any], targets: CellTargets) -> list[float] | None:
    """Thresholds for ``spec.draw_spec``, or None when speculation is off."""
    if not args.get("speculative_algorithm"):
        return None
    steps = int(args["speculative_num_steps"])
    return thresholds(chain_probability(targets.accept_length, steps), steps)


def answer(
    rt: Runtime,
    prompt: str,
    question: str,
    cap: int | None,
    truncated: bool,
    draw: str = "0",
    ignore_eos: bool = False,
    prompt_tokens: int = 0,
) -> tuple[Completion, SpecDraw | None]:
    """The completion for ``prompt`` (and its spec statistics when speculation is on).

    Args:
        rt: the runtime.
        prompt: the full prompt text (all messages); it alone decides correctness and length.
        question: where the question is looked up (the last user message).
        cap: the request's token limit.
        truncated: the truncation fault hit: stop at half the intended length.
        draw: which request of this prompt this is (with ``sampling_spread`` > 0 it redraws
            correctness).
        ignore_eos: SGLang's ``ignore_eos``: the completion runs on to ``cap``.
        prompt_tokens: the prompt's length, which request-level effects read.
    """
    units = hash_units(str(rt.conf.seed), prompt)
    accuracy, accept_length = request_targets(rt.targets, prompt, prompt_tokens)
    if rt.conf.sampling_spread > 0:
        units, accuracy = sampled(rt, prompt, question, units, draw, accuracy)
    mean = rt.conf.mean_completion_tokens
    full = plan_completion(rt.index, question, units, accuracy, mean, None)
    if truncated:
        half = max(1, len(full.tokens) // 2)
        cap = half if cap is None else min(cap, half)
    completion = truncate(full, cap)
    if ignore_eos and not truncated:
        completion = run_on(completion, cap)
    if rt.ascending is None:
        return completion, None
    seed = hash_units(str(rt.conf.seed), prompt, rt.cell_id)[0]
    rng = random.Random(int(seed * (1 << 53)))
    ascending = rt.ascending
    if accept_length != rt.targets.accept_length:  # a request-level effect moved it
        steps = len(ascending)
        ascending = thresholds(chain_probability(accept_length, steps), steps)
    return completion, draw_spec(rng, len(completion.tokens), ascending)


def sampled(
    rt: Runtime,
    prompt: str,
    question: str,
    units: tuple[float, ...],
    draw: str,
    accuracy: float | None = None,
) -> tuple[tuple[float, float, float, float], float]:
    """The correctness uniform of this request and its question's difficulty (noise on).

    ``accuracy``: the request's own target (request-level effects), else the cell's.
    """
    found = rt.index.find(question)
    key = found[0] if found else prompt
    seed = str(rt.conf.seed)
    p = question_difficulty(
        hash_units(seed, "difficulty", key)[0],
        rt.targets.accuracy if accuracy is None else accuracy,
        rt.conf.sampling_spread,
    )
    u = hash_units(seed, rt.sampling_nonce, prompt, draw)[0]
    return (u, units[1], units[2], units[3]), p


def ledger_row(
    rt: Runtime, s: Served, endpoint: str, index: int, fault: str | None, stream: bool
) -> dict[str, Any]:
    """The ledger line of one served (or faulted) choice."""
    c, d = s.completion, s.spec
    return {
        "rid": s.rid,
        "endpoint": endpoint,
        "index": index,
        "question_key": c.question_key,
        "kind": c.kind,
        "correct": c.correct,
        "answer": c.answer,
        "completion_tokens": len(c.tokens),
        "prompt_tokens": s.prompt_tokens,
        "verify_ct": d.verify_ct if d else None,
        "num_correct_drafts": d.num_correct_drafts if d else None,
        "histogram": list(d.histogram) if d else None,
        "finish_reason": c.finish_reason,
        "fault": fault,
        "stream": stream,
        "accuracy": rt.targets.accuracy,
        "accept_length": rt.targets.accept_length if rt.spec_on else None,
        "time": s.finished,
    }
