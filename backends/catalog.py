"""Read ``conf/backend/*.yaml`` and ``conf/model/*.yaml`` without Hydra (for the matrix, tests).

The pipeline composes these files through Hydra; ``mtp-eval-matrix`` only needs the variants' flags
and a model's speculative recipe, so it reads the YAML directly into the same dataclasses, with the
same strictness (``backends.config_file``): an unknown key or a wrong type is an error naming
the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from backends.backend_conf import BackendConf, ModelConf
from backends.config_file import ConfigFileError, load_structured, read_mapping

# Keys of a model file that belong to other schema nodes (the pipeline's CellModelConf).
MODEL_KEYS_OUTSIDE_BACKENDS = frozenset({"sampling"})

T = TypeVar("T")


class CatalogError(ConfigFileError):
    """A config file that cannot be read into its dataclass."""


def default_conf_dir() -> Path:
    """The repository's ``conf/`` folder (beside the ``backends`` package)."""
    return Path(__file__).resolve().parent.parent / "conf"


def load_backends(conf_dir: Path | None = None) -> dict[str, BackendConf]:
    """All backend variants of ``conf/backend/``, by file stem (the name users sweep over).

    Raises:
        CatalogError: If the folder is missing or a file does not fit ``BackendConf``.
    """
    folder = (conf_dir or default_conf_dir()) / "backend"
    files = sorted(folder.glob("*.yaml"))
    if not files:
        raise CatalogError(f"{folder}: no backend YAML files; pass --conf-dir to the conf/ folder")
    return {f.stem: _load(BackendConf, f) for f in files}


def load_model(path: Path) -> ModelConf:
    """A model file of ``conf/model/`` as ``ModelConf`` (its ``sampling`` node is skipped).

    Raises:
        CatalogError: If the file is missing or does not fit ``ModelConf``.
    """
    return _load(ModelConf, path, skip=MODEL_KEYS_OUTSIDE_BACKENDS)


def _load(cls: type[T], path: Path, skip: frozenset[str] = frozenset()) -> T:
    data = read_mapping(path, CatalogError)
    kept = {k: v for k, v in data.items() if k not in skip}
    return load_structured(cls, kept, str(path), error=CatalogError)
