"""Values of the wrong type: ``evals.mcq_sample.repeats=two`` is refused naming the type it takes.

Hydra refuses such a value when it merges the override, with OmegaConf's message on five lines
and exit code 1. This module converts each value of a command-line override (each of a sweep's
values too: ``-m skip_softmax.prefill=0,abc``) as OmegaConf's node for the schema's type does,
before Hydra starts, and names the key, the type it takes and a value it takes.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable, Sequence
from typing import Any, Union, get_args, get_origin, get_type_hints

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import BooleanNode, FloatNode, IntegerNode, StringNode, ValueNode
from omegaconf.errors import ValidationError

_NODES: dict[Any, Callable[..., ValueNode]] = {
    int: IntegerNode,
    float: FloatNode,
    bool: BooleanNode,
    str: StringNode,
}
_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
_EXAMPLES: dict[Any, Any] = {int: 4, float: 0.5, bool: True, str: "text"}


@dataclasses.dataclass(frozen=True)
class Leaf:
    """What the schema declares at one key: its type, whether null is allowed, its default."""

    kind: Any  # int, float, bool, str, or a list of one of them
    optional: bool
    default: Any  # None when the schema has none to show


@functools.cache
def schema_fields(schema: type) -> dict[str, Any]:
    """The type hints of a schema dataclass's fields."""
    return get_type_hints(schema)


def unwrap_optional(hint: Any) -> Any:
    """``X | None`` -> ``X``; any other hint as it is."""
    if get_origin(hint) in (Union, types.UnionType):
        kept = [a for a in get_args(hint) if a is not type(None)]
        return kept[0] if len(kept) == 1 else Any
    return hint


def _default(schema: Any, name: str) -> Any:
    found = {f.name: f for f in dataclasses.fields(schema)}[name]
    if found.default_factory is not dataclasses.MISSING:
        return found.default_factory()
    return None if found.default is dataclasses.MISSING else found.default


def leaf_of(path: Sequence[str], schema: type) -> Leaf | None:
    """The scalar (or list of scalars) the schema declares at ``path``; None for anything else.

    Below an open map (``dict[str, X]``) any name leads to ``X``.
    """
    hint: Any = schema
    default = None
    for part in path:
        hint = unwrap_optional(hint)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if part not in schema_fields(hint):
                return None
            hint, default = schema_fields(hint)[part], _default(hint, part)
        elif get_origin(hint) is dict:
            hint, default = get_args(hint)[1], None
        else:
            return None
    kind = unwrap_optional(hint)
    if kind in _NODES or (get_origin(kind) is list and get_args(kind)[0] in _NODES):
        return Leaf(kind, kind is not hint, default)
    return None


def _shown(value: Any) -> str:
    """A value as it is typed on the command line (``'two'``, ``true``, ``null``, ``1.5``)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, list):
        return "[" + ",".join(_shown(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def conversion_problem(value: Any, leaf: Leaf) -> str | None:
    """Why OmegaConf refuses ``value`` at ``leaf`` (a phrase); None when it converts."""
    if isinstance(value, str) and "${" in value:
        return None  # an interpolation: resolved, and checked, when the config is read
    if value is None:
        return None if leaf.optional else "null is not allowed"
    if get_origin(leaf.kind) is list:
        if not isinstance(value, list):
            return f"{_shown(value)} is not a list"
        element = Leaf(get_args(leaf.kind)[0], False, None)
        return next((p for v in value if (p := conversion_problem(v, element))), None)
    try:
        _NODES[leaf.kind](value, is_optional=leaf.optional)
    except ValidationError:
        return f"{_shown(value)} is not {_KINDS[leaf.kind]}"
    return None


def takes(key: str, leaf: Leaf) -> str:
    """``KEY takes an integer, e.g. KEY=4``: the type and a value (the schema's default if any)."""
    if get_origin(leaf.kind) is list:
        element = get_args(leaf.kind)[0]
        kind, example = f"a list, each {_KINDS[element]}", leaf.default or [_EXAMPLES[element]] * 2
    else:
        kind = _KINDS[leaf.kind]
        example = _EXAMPLES[leaf.kind] if leaf.default in (None, "") else leaf.default
    shown = example if isinstance(example, str) else _shown(example)
    return f"{key} takes {kind}{' or null' if leaf.optional else ''}, e.g. {key}={shown}"


@functools.cache
def _parser() -> OverridesParser:
    return OverridesParser.create()


def _parsed_values(override: str) -> tuple[str, list[Any]] | None:
    """The key of ``override`` and the values it sets (a sweep's each); None: Hydra's to refuse.

    A deletion, an interval sweep (an optimizer's) or text Hydra cannot parse is left to Hydra.
    """
    try:
        parsed = _parser().parse_override(override)
        if parsed.is_delete() or parsed.is_interval_sweep():
            return None
        sweep = parsed.is_choice_sweep() or parsed.is_range_sweep()
        return parsed.key_or_group, list(parsed.sweep_iterator()) if sweep else [parsed.value()]
    except HydraException:  # a syntax error or unknown function: Hydra says which
        return None


def value_problem(override: str, schema: type) -> str | None:
    """One line when a value of ``override`` (each value of a sweep) has the wrong type."""
    found = _parsed_values(override)
    leaf = None if found is None else leaf_of(found[0].split("."), schema)
    if found is None or leaf is None:
        return None
    wrong = next((p for v in found[1] if (p := conversion_problem(v, leaf))), None)
    return None if wrong is None else f"{override}: {wrong}; {takes(found[0], leaf)}"


def value_problems(argv: Sequence[str], schema: type) -> list[str]:
    """One line per command-line override whose value (a sweep's, any) has the wrong type."""
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    return [found for a in overrides if (found := value_problem(a, schema)) is not None]
