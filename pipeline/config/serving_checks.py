"""The serving phase's config rules (pure), and the declared cell without speculation.

``serving.speculation=false`` is the one declared exception to "a speculative model runs with
speculation": a serving-only cell (``evals=[]``) launched without the model's speculative
settings, so that speculation's own speed-up is measured on the same variant. An accuracy cell
keeps failing when its server runs without speculation (``serving/server_checks.py``).
"""

from __future__ import annotations

import dataclasses

from backends.backend_conf import SpeculativeConf
from pipeline.config.prompt_source import RANDOM, SERVING_KEY, source_problems
from pipeline.config.schema import RootConf, ServingConf


def serving_problems(conf: RootConf) -> list[str]:
    """Every out-of-range ``serving.*`` value, one line each (empty when all make sense)."""
    s = conf.serving
    problems = [
        f"serving.{name}={value!r} is out of range: use a list of integers >= 1"
        for name, value in (("concurrency", s.concurrency), ("buckets", s.buckets))
        if not value or any(type(v) is not int or v < 1 for v in value)
    ]
    counts = {"output_tokens": s.output_tokens, "requests": s.requests}
    problems += [
        f"serving.{k}={v!r} is out of range: use an integer >= 1"
        for k, v in counts.items()
        if v < 1
    ]
    problems += [
        f"serving.{k}={v!r} is out of range: use a number of seconds > 0"
        for k, v in (("max_seconds", s.max_seconds), ("request_timeout_s", s.request_timeout_s))
        if not v > 0
    ]
    if s.warmup < 0:
        problems.append(f"serving.warmup={s.warmup!r} is out of range: use an integer >= 0")
    if s.enabled:  # eval:NAME must name one of the cell's evals, as speed.prompts must
        problems += source_problems(s, list(conf.evals), SERVING_KEY)
    return problems + _speculation_problems(conf)


def _speculation_problems(conf: RootConf) -> list[str]:
    if conf.serving.speculation:
        return []
    if not conf.serving.enabled:
        return ["serving.speculation=false needs serving.enabled=true (a serving-only cell)"]
    # Its evals are not run (job: evals_run), only read for serving.prompts=eval:NAME, so that
    # speculation off serves the very prompts its speculation-on twin served.
    if conf.parity.enabled or (conf.evals and conf.serving.prompts == RANDOM):
        return [
            "serving.speculation=false runs the model without speculation, which would change "
            "what the evals and parity measure: use evals=[] parity.enabled=false (a "
            "serving-only cell; its evals may stay as the source of serving.prompts=eval:NAME, "
            "and are then not run), or serving.speculation=true"
        ]
    return []


def evals_run(conf: ServingConf) -> bool:
    """Whether the cell runs its evals: not without speculation (they are prompts only then)."""
    return not (conf.enabled and not conf.speculation)


def without_speculation(conf: RootConf) -> RootConf:
    """``conf`` as its server is launched: no speculative settings where the cell declares so."""
    if conf.serving.speculation:
        return conf
    model = dataclasses.replace(conf.model, speculative=SpeculativeConf())
    return dataclasses.replace(conf, model=model)
