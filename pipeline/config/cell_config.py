"""The composed config as the schema's typed objects, checked once (the app's entry to a cell).

Hydra checks keys and types when it composes; ``to_cell_config`` adds what it cannot see: a key
added with ``+`` outside an open map (``schema_keys``), an eval no ``conf/evals/`` file defines,
and values out of range (``checks``), each one line, before anything starts.
"""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from pipeline.config.checks import ConfigError, check_config, phantom_evals
from pipeline.config.schema import RootConf
from pipeline.config.schema_keys import config_key_problems
from pipeline.config.serving_checks import without_speculation


def to_cell_config(cfg: DictConfig) -> RootConf:
    """Convert the composed config into typed objects.

    Raises:
        ConfigError: a key the schema lacks (added with ``+``), an eval without a dataset, or
            a value out of its allowed range (``pipeline.config.checks``), one line per
            problem, before anything starts.
    """
    container = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(container, dict), type(container)
    problems = config_key_problems(container) + phantom_evals(cfg)
    if problems:
        raise ConfigError(problems)
    obj = OmegaConf.to_object(cfg)
    assert isinstance(obj, RootConf), type(obj)
    return without_speculation(check_config(obj))
