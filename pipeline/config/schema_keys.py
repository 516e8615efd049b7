"""Keys the schema knows: a key outside it is refused, with or without ``+``, naming the closest.

Hydra's ``+key=value`` adds a key the config lacks, and on the schema's dataclasses it does so
silently (``+skip_softmax.prefil=1e6`` ran exact-softmax cells); without ``+`` Hydra refuses a
typo but suggests the ``+`` form. ``+`` is only meaningful inside the open maps of the schema
(``server.env``, ``server.simulated.faults``, ``model.chat_template_kwargs``, ``evals``): this
module walks the dataclasses of ``pipeline.config.schema`` to tell the two apart.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import is_dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from pipeline.config.group_choices import group_problems
from pipeline.config.schema import CONF_DIR, RootConf
from pipeline.config.value_types import schema_fields, unwrap_optional, value_problem


def unknown_key(path: Sequence[str], schema: type = RootConf) -> tuple[str, list[str]] | None:
    """The first part of ``path`` the schema lacks, with the keys it has there; None if known.

    Below an open map (``dict[str, Any]``) or a list every key is accepted.
    """
    hint: Any = schema
    for depth, part in enumerate(path):
        hint = unwrap_optional(hint)
        if isinstance(hint, type) and is_dataclass(hint):
            fields = schema_fields(hint)
            if part not in fields:
                return ".".join(path[: depth + 1]), list(fields)
            hint = fields[part]
        elif get_origin(hint) is dict:
            hint = get_args(hint)[1]
        else:
            return None
    return None


@functools.cache
def config_groups() -> frozenset[str]:
    """The config groups under ``conf/`` (``backend=fa3`` picks a file, it sets no key)."""
    return frozenset(p.name for p in Path(CONF_DIR).iterdir() if p.is_dir())


def key_message(key: str, siblings: Sequence[str]) -> str:
    """One line naming the unknown key, the closest known one and what ``+`` is for."""
    *parent, last = key.split(".")
    close = difflib.get_close_matches(last, siblings, n=1, cutoff=0.6)
    where = ".".join(parent) or "the top level"
    hint = (
        f"did you mean {'.'.join([*parent, close[0]])}?"
        if close
        else f"the keys at {where} are {', '.join(sorted(siblings))}."
    )
    return (
        f"unknown key {key!r}: not in the schema (pipeline/config/schema.py); {hint} A '+' "
        "adds keys only inside an open map (server.env, server.simulated.faults, "
        "model.chat_template_kwargs)"
    )


def override_problems(overrides: Sequence[str]) -> list[str]:
    """One line per command-line override the config lacks: a key, a group choice or a value.

    A key outside the schema is named with or without ``+``; a group choice no config folder
    has (``backend=fmha2``) with the choices there are (``pipeline.config.group_choices``); a
    value of the wrong type (``evals.mcq_sample.repeats=two``) with the type the key takes
    (``pipeline.config.value_types``).
    Nested groups (``hydra/launcher=local``), ``hydra.*`` keys and packaged overrides
    (``key@pkg=...``) are Hydra's own and left to it.
    """
    problems = group_problems(overrides, config_groups())
    for override in overrides:
        if override.startswith("-") or ("=" not in override and not override.startswith("~")):
            continue
        key = override.lstrip("+~").split("=", 1)[0]
        if "/" in key or "@" in key or key.split(".")[0] == "hydra":
            continue
        if "." not in key and key in config_groups():
            continue
        found = unknown_key(key.split("."))
        if found is not None:
            siblings = found[1] + (sorted(config_groups()) if "." not in found[0] else [])
            problems.append(key_message(found[0], sorted(set(siblings) - {"hydra"})))
        elif (wrong := value_problem(override, RootConf)) is not None:
            problems.append(wrong)
    return problems


def _leaf_paths(node: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(node, Mapping) and node:
        for key, value in node.items():
            yield from _leaf_paths(value, (*prefix, str(key)))
    else:
        yield prefix


def config_key_problems(container: Mapping[Any, Any]) -> list[str]:
    """One line per key of a composed config (a plain container) that the schema lacks."""
    unknown: dict[str, list[str]] = {}
    for path in _leaf_paths(container):
        found = unknown_key(path)
        if found is not None:
            unknown.setdefault(*found)
    return [key_message(key, siblings) for key, siblings in unknown.items()]
