"""Group choices the config folders offer: ``backend=fmha2`` is refused naming the choices.

A group choice (``backend=fa3``, ``kv_dtype=auto,fp8_e4m3`` in a sweep, ``evals=[a,b]``) picks
a file of ``conf/<group>/``; Hydra refuses a missing one with a page of search paths and exit
code 1. This module reads the same folders (``conf/`` and a ``--config-dir`` of the user's) and
names the closest choice and every choice there is, before Hydra starts.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

from pipeline.config.schema import CONF_DIR

_SWEEP_FUNCTIONS = ("(",)  # choice(...), range(...), glob(...): Hydra expands them itself
_CLOSE = 0.3  # lower than a key's cutoff: the choices are listed beside the guess anyway


def config_dirs(argv: Sequence[str]) -> list[Path]:
    """``conf/`` and the folder ``--config-dir`` / ``-cd`` adds, if the command names one."""
    extra: list[Path] = []
    for i, arg in enumerate(argv):
        if arg in ("--config-dir", "-cd") and i + 1 < len(argv):
            extra.append(Path(argv[i + 1]))
        elif arg.startswith("--config-dir="):
            extra.append(Path(arg.split("=", 1)[1]))
    return [Path(CONF_DIR), *extra]


def group_options(group: str, dirs: Iterable[Path]) -> list[str]:
    """The choices of ``group``: the YAML files of ``<dir>/<group>/`` over ``dirs``."""
    found = {
        p.stem
        for folder in dirs
        if (folder / group).is_dir()
        for p in (folder / group).iterdir()
        if p.suffix in (".yaml", ".yml")
    }
    return sorted(found)


def chosen_values(value: str) -> list[str]:
    """The options a group override's value names: ``a``, ``a,b`` (a sweep), ``[a,b]``."""
    if any(mark in value for mark in _SWEEP_FUNCTIONS):
        return []
    parts = value.replace("[", ",").replace("]", ",").split(",")
    return [p.strip().strip("'\"") for p in parts if p.strip() and p.strip() != "null"]


def closest_choices(name: str, options: Sequence[str]) -> list[str]:
    """Every choice ``name`` begins (``fp8``: fp8_e4m3 and fp8_e5m2), else the closest ones.

    Choices equally close are all named (``fp9``: both fp8 dtypes), so that none is a guess.
    """
    started = [o for o in options if o.lower().startswith(name.lower())]
    scores = {o: difflib.SequenceMatcher(None, name, o).ratio() for o in options}
    best = max(scores.values(), default=0.0)
    return started or [o for o in options if best >= _CLOSE and scores[o] == best]


def choice_problem(group: str, value: str, options: Sequence[str]) -> str | None:
    """One line naming each unknown choice, the closest ones and the choices; None if all known."""
    unknown = [v for v in chosen_values(value) if v not in options]
    if not unknown or not options:
        return None
    lines = []
    for name in unknown:
        close = [f"{group}={c}" for c in closest_choices(name, options)]
        either = ", ".join(close[:-1]) + " or " + close[-1] if len(close) > 1 else "".join(close)
        guess = f"did you mean {either}? " if close else ""
        lines.append(f"{group}={name}: conf/{group}/ has no {name}.yaml; {guess}")
    return (
        " ".join(lines) + f"The choices of {group} are: {', '.join(options)} (add a file to "
        f"conf/{group}/, or to {group}/ under --config-dir, for another)"
    )


def group_problems(argv: Sequence[str], groups: Iterable[str]) -> list[str]:
    """One line per command-line group choice that names a file no config folder has."""
    dirs, known = config_dirs(argv), frozenset(groups)
    if any(a.lstrip("+").startswith("hydra.searchpath") for a in argv):
        return []  # more folders than these: Hydra looks there itself
    problems = []
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.lstrip("+").split("=", 1)
        if key in known:
            problem = choice_problem(key, value, group_options(key, dirs))
            problems += [problem] if problem else []
    return problems
