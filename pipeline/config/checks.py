"""Values that type-check but make no sense, refused when the config is composed.

Hydra's schema catches a wrong key or type; these rules catch a right type with a value that
would start a server for nothing or be silently ignored (``skip_softmax.prefill=-1``, ``nan``,
``evals=[]``, ``client.concurrency=0``, ``repeats: 0``). Each problem is one line that names the
key, the value and the allowed range. A sweep checks every job's values before its first cell
(``pipeline.config.sweep_checks``), so a bad value in the last cell does not cost the first ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from omegaconf import DictConfig, OmegaConf

from backends.launch import LOAD_FORMATS
from evals.eval_conf import EvalConf
from evals.longctx import overlong
from pipeline.config.prestart_checks import prestart_problems
from pipeline.config.prompt_source import source_problems as prompt_source_problems
from pipeline.config.schema import RootConf, gpus_per_node
from pipeline.config.serving_checks import serving_problems


class ConfigError(ValueError):
    """The composed config holds values outside their allowed range (one line per problem)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Rule:
    """One key's allowed range: ``ok(value)`` decides, ``allowed`` says it in words."""

    key: str  # dotted path into the config, e.g. client.concurrency
    ok: Callable[[Any], bool]
    allowed: str

    def value(self, conf: RootConf) -> Any:
        """The key's value in ``conf``."""
        return attrgetter(self.key)(conf)


def _factor(value: Any) -> bool:
    return value is None or (math.isfinite(value) and value >= 0)


def _at_least(low: float) -> Callable[[Any], bool]:
    return lambda value: value is not None and math.isfinite(value) and value >= low


def _above(low: float) -> Callable[[Any], bool]:
    return lambda value: value is not None and math.isfinite(value) and value > low


def _share(value: Any) -> bool:
    return math.isfinite(value) and 0 <= value <= 1


def _unset_or(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or ok(value)


def _policy(value: Any) -> bool:
    return value in POLICIES


FACTOR = "null (exact softmax) or a finite factor >= 0"
COUNT, SECONDS = "an integer >= 1", "seconds > 0"
POLICIES = ("fail", "warn")  # what a server.on_* setting may say
# sequential.baseline_runs: baselines run all their repeats first, or beside their candidates.
BASELINE_RUNS = ("first", "beside")
SPEC_COUNT = "null (SGLang chooses) or an integer >= 1"
RULES = (
    Rule("skip_softmax.prefill", _factor, FACTOR),
    Rule("skip_softmax.decode", _factor, FACTOR),
    Rule("client.concurrency", _at_least(1), COUNT),
    Rule("client.max_concurrency", _at_least(1), COUNT),
    Rule("client.request_timeout_s", _above(0), SECONDS),
    Rule("client.max_retries", _at_least(0), "an integer >= 0"),
    Rule("client.rate_limit_retries", _at_least(0), "an integer >= 0"),
    Rule("client.rate_limit_wait_s", _at_least(0), "seconds >= 0"),
    Rule("client.max_error_rate", _share, "0 to 1"),
    Rule("client.progress_every_s", _above(0), SECONDS),
    Rule("server.startup_timeout_s", _above(0), SECONDS),
    Rule("server.external_timeout_s", _above(0), SECONDS),
    Rule("server.progress_every_s", _above(0), SECONDS),
    Rule("sequential.max_repeats", _at_least(1), COUNT),
    Rule("sequential.baseline_runs", lambda v: v in BASELINE_RUNS, " or ".join(BASELINE_RUNS)),
    Rule("sequential.baseline_wait_s", _above(0), SECONDS),
    *(Rule(f"server.{name}", _policy, " or ".join(POLICIES))
      for name in ("on_mismatch", "on_unverified", "on_foreign_traffic")),
    # A speculative shape or sampling setting SGLang refuses or that measures nothing (-1 steps
    # gave accept length 1.006 and accept rate -0.000 from the simulated server).
    Rule("model.tp", _at_least(1), COUNT),
    Rule("model.load_format", lambda v: v is None or v in LOAD_FORMATS,
         "null (SGLang's auto) or one of " + ", ".join(LOAD_FORMATS)),
    *(Rule(f"model.speculative.{name}", _unset_or(_at_least(1)), SPEC_COUNT)
      for name in ("num_steps", "eagle_topk", "num_draft_tokens")),
    Rule("model.sampling.max_tokens", _at_least(1), COUNT),
    Rule("model.sampling.temperature", _at_least(0), "a finite number >= 0 (0: greedy)"),
    *(Rule(f"speed.{name}", _at_least(1), COUNT)
      for name in ("repeats", "prefill_batch_tokens", "decode_prompt_tokens",
                   "decode_new_tokens", "first_token_id", "gpu_sample_ms")),
    Rule("speed.warmup", _at_least(0), "an integer >= 0"),
    Rule("speed.request_timeout_s", _above(0), SECONDS),
    Rule("speed.vocab_size", _unset_or(_at_least(2)), "null (the model's) or an integer >= 2"),
    *(Rule(f"parity.{name}", _at_least(1), COUNT)
      for name in ("sequences", "prompt_tokens", "new_tokens", "first_token_id")),
    Rule("parity.top_k", _at_least(0), "an integer >= 0 (0: no top ids)"),
    Rule("parity.greedy_sequences", _at_least(0), "an integer >= 0 (0: no greedy outputs)"),
    Rule("parity.temperature", _above(0), "a number > 0 (1: the KL estimate is unbiased)"),
    Rule("parity.request_timeout_s", _above(0), SECONDS),
)  # fmt: skip


def config_problems(conf: RootConf) -> list[str]:
    """Every out-of-range value of ``conf``, one line each (empty when all make sense)."""
    problems = [
        f"{rule.key}={rule.value(conf)!r} is out of range: use {rule.allowed}"
        for rule in RULES
        if not rule.ok(rule.value(conf))
    ]
    alone = conf.speed.enabled or conf.parity.enabled or conf.serving.enabled
    if not conf.evals and not alone:  # a phase alone
        problems.append(
            "evals=[] selects no eval: name at least one, e.g. evals=[mcq_sample] "
            "(the options are the files in conf/evals/)"
        )
    problems += [
        f"evals.{name}.repeats={ev.repeats!r} is out of range: use {COUNT}"
        for name, ev in conf.evals.items()
        if ev.repeats < 1
    ]
    if conf.parity.enabled:
        problems += prompt_source_problems(conf.parity, list(conf.evals), "parity.prompts")
    problems += serving_problems(conf) + prestart_problems(conf)
    return problems + _speed_problems(conf) + _node_problems(conf) + _longctx_problems(conf)


def _longctx_problems(conf: RootConf) -> list[str]:
    """Long-context lengths that ``model.context_length`` cannot hold.

    Unset, the cell asks the server before its first request (``pipeline.measuring.measure``).
    """
    context = conf.model.context_length
    if context is None:
        return []
    lines = [
        overlong(name, list(ev.longctx.lengths), context, _max_tokens(conf, ev))
        for name, ev in conf.evals.items()
        if ev.longctx is not None
    ]
    return [line for line in lines if line is not None]


def _max_tokens(conf: RootConf, ev: EvalConf) -> int:
    return (ev.sampling or conf.model.sampling).max_tokens


def _speed_problems(conf: RootConf) -> list[str]:
    speed = conf.speed
    lists = {"prefill_tokens": speed.prefill_tokens, "prefill_batches": speed.prefill_batches,
             "decode_batches": speed.decode_batches}  # fmt: skip
    problems = [
        f"speed.{key}={list(values)!r}: every entry must be an integer >= 1"
        for key, values in lists.items()
        if any(value < 1 for value in values)
    ]
    if speed.enabled and not conf.server.enable_metrics:
        problems.append(
            "speed.enabled=true needs server.enable_metrics=true: the speed phase reads the "
            "server's own timestamps, which SGLang reports only with --enable-metrics"
        )
    if speed.vocab_size is not None and speed.vocab_size <= speed.first_token_id:
        problems.append(
            f"speed.vocab_size={speed.vocab_size} leaves no token ids above "
            f"speed.first_token_id={speed.first_token_id}: lower first_token_id"
        )
    if speed.enabled:
        problems += prompt_source_problems(speed, list(conf.evals))
    return problems


def phantom_evals(cfg: DictConfig) -> list[str]:
    """One line per eval no ``conf/evals/`` file defined: settings for it, but no dataset.

    ``evals.gpqa_diamond.repeats=4`` with ``evals=[mcq_sample]`` would otherwise fill in the
    schema's defaults and run an eval named gpqa_diamond on whatever those point at.
    """
    evals = cfg.get("evals") or {}
    lacking = [str(n) for n in evals if OmegaConf.is_missing(evals[n].dataset, "path")]
    chosen = [str(n) for n in evals if str(n) not in lacking]
    return [
        f"evals.{name} has no dataset (evals.{name}.dataset.path is unset): no file of "
        f"conf/evals/ defines it, yet a preset or an override sets evals.{name}.*; the evals "
        f"chosen are [{','.join(chosen)}]. Choose it too "
        f"(evals=[{','.join([*chosen, name])}]) or drop the evals.{name}.* setting"
        for name in lacking
    ]


def _node_problems(conf: RootConf) -> list[str]:
    try:
        gpus_per_node(conf.model.tp, conf.cluster.nodes)
    except ValueError as err:
        return [str(err)]
    return []


def check_config(conf: RootConf) -> RootConf:
    """``conf`` itself when every value makes sense.

    Raises:
        ConfigError: one line per value out of range.
    """
    problems = config_problems(conf)
    if problems:
        raise ConfigError(problems)
    return conf
