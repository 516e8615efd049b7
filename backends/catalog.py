"""Read ``conf/backend/*.yaml`` and ``conf/model/*.yaml`` without Hydra (for the matrix, tests).

The pipeline composes these files through Hydra; ``mtp-eval-matrix`` only needs the variants' flags
and a model's speculative recipe, so it reads the YAML directly into the same dataclasses, with the
same strictness: an unknown key is an error naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

from backends.config import BackendConf, ModelConf

T = TypeVar("T")
# Keys of a model file that belong to other schema nodes (the pipeline's CellModelConf).
MODEL_KEYS_OUTSIDE_BACKENDS = frozenset({"sampling"})


class CatalogError(ValueError):
    """A config file that cannot be read into its dataclass."""


def default_conf_dir() -> Path:
    """The repository's ``conf/`` folder (beside the ``backends`` package)."""
    return Path(__file__).resolve().parent.parent / "conf"


def from_mapping(cls: type[T], data: object, where: str) -> T:
    """Build a config dataclass from a YAML mapping, recursing into nested dataclass fields.

    Args:
        cls: The dataclass type.
        data: The parsed YAML node.
        where: File and key path, for error messages.

    Returns:
        The dataclass instance.

    Raises:
        CatalogError: On a non-mapping node or an unknown key.
    """
    if not isinstance(data, dict):
        raise CatalogError(f"{where}: expected a mapping of {cls.__name__} fields, got {data!r}")
    assert dataclasses.is_dataclass(cls), cls
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {unknown}; {cls.__name__} has {sorted(names)}")
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        hint = hints[key]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            value = from_mapping(hint, value, f"{where}.{key}")
        kwargs[key] = value
    return cls(**kwargs)


def _read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: cannot read YAML: {exc}") from exc


def load_backends(conf_dir: Path | None = None) -> dict[str, BackendConf]:
    """All backend variants of ``conf/backend/``, by file stem (the name users sweep over).

    Raises:
        CatalogError: If the folder is missing or a file does not fit ``BackendConf``.
    """
    folder = (conf_dir or default_conf_dir()) / "backend"
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise CatalogError(f"{folder}: no backend YAML files; pass --conf-dir to the conf/ folder")
    return {f.stem: from_mapping(BackendConf, _read_yaml(f), str(f)) for f in files}


def load_model(path: Path) -> ModelConf:
    """A model file of ``conf/model/`` as ``ModelConf`` (its ``sampling`` node is skipped).

    Raises:
        CatalogError: If the file is missing or does not fit ``ModelConf``.
    """
    data = _read_yaml(path)
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in MODEL_KEYS_OUTSIDE_BACKENDS}
    return from_mapping(ModelConf, data, str(path))
