"""The cells a multirun should have produced, from Hydra's ``multirun.yaml``.

Hydra's basic sweeper runs the cartesian product of ``hydra.sweeper.params`` followed by the
command-line task overrides (``hydra.overrides.task``); ``pipeline.results.sweep_jobs`` splits
them with Hydra's own parser, so job ``i`` below is Hydra's job number ``i``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pipeline.results.json_values import EMPTY
from pipeline.results.result_blocks import CellIdentity
from pipeline.results.skip_factor import parse_factor
from pipeline.results.sweep_jobs import sweep_jobs


@dataclass(frozen=True)
class ExpectedJob:
    """One job of the sweep: its number, overrides and the cell identity they imply."""

    num: int
    overrides: tuple[str, ...]
    identity: CellIdentity  # what its overrides and the sweep's config make it


def read_yaml(path: Path) -> Any:
    """YAML file contents; a clear error naming the file when it does not parse."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: cannot read it as YAML: {err}") from err


def expected_jobs(multirun_yaml: Path) -> tuple[list[ExpectedJob], str | None]:
    """The jobs of a multirun, or ``([], warning)`` when they cannot be worked out.

    Args:
        multirun_yaml: Hydra's ``multirun.yaml`` at the top of a sweep folder.
    """
    conf = read_yaml(multirun_yaml)
    hydra = (conf or {}).get("hydra") or {}
    jobs = sweep_jobs(hydra)
    if jobs is None:
        sweeper = hydra.get("sweeper") or {}
        return [], (
            f"{multirun_yaml}: sweeper {sweeper.get('_target_')} is not Hydra's basic "
            "sweeper; expected cells (and so MISSING ones) cannot be worked out"
        )
    base = base_identity(conf, (hydra.get("runtime") or {}).get("choices") or {})
    where = f"{multirun_yaml} job"
    return [
        ExpectedJob(i, tuple(job), _identity(apply_overrides(base, job), f"{where} {i}"))
        for i, job in enumerate(jobs)
    ], None


def identity_of_config(conf: dict[str, Any], path: Path) -> CellIdentity:
    """The identity a composed config (a cell's ``.hydra/config.yaml``) gives its cell."""
    return _identity(base_identity(conf, {}), str(path))


def _identity(fields: dict[str, Any], where: str) -> CellIdentity:
    """The fields ``base_identity`` / ``apply_overrides`` hold, as the one identity type.

    Raises:
        ValueError: naming ``where`` and the key, for a skip-softmax factor that is no number.
    """

    def text(key: str) -> str | None:
        value = fields.get(key)
        return None if value is None else str(value)

    return CellIdentity(
        model=text("model"), model_path=text("model_path"), variant=text("variant"),
        kv_dtype=text("kv_dtype"),
        skip_prefill=parse_factor(fields.get("skip_prefill"), f"{where}: skip_softmax.prefill"),
        skip_decode=parse_factor(fields.get("skip_decode"), f"{where}: skip_softmax.decode"),
        speculative=fields.get("speculative") or EMPTY,
    )  # fmt: skip


def base_identity(conf: dict[str, Any], choices: dict[str, Any]) -> dict[str, Any]:
    """Model, variant, KV dtype and skip-softmax factors of a composed config."""
    model, backend = conf.get("model") or {}, conf.get("backend") or {}
    skip = conf.get("skip_softmax") or {}
    spec = model.get("speculative") or {}
    return {
        "model": model.get("name"),
        "model_path": model.get("path"),
        "variant": backend.get("name"),
        "kv_dtype": (conf.get("kv_dtype") or {}).get("name"),
        "skip_prefill": skip.get("prefill"),
        "skip_decode": skip.get("decode"),
        "speculative": spec if spec.get("algorithm") else None,
        "_choices": {k: choices.get(k) for k in ("model", "backend", "kv_dtype")},
    }


_GROUP_FIELD = {"backend": "variant", "kv_dtype": "kv_dtype", "model": "model"}
_DOTTED = {
    "backend.name": "variant",
    "kv_dtype.name": "kv_dtype",
    "model.name": "model",
    "model.path": "model_path",
    "skip_softmax.prefill": "skip_prefill",
    "skip_softmax.decode": "skip_decode",
}


def apply_overrides(base: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """The identity after a job's overrides (group choices name the option they select)."""
    out = {k: v for k, v in base.items() if k != "_choices"}
    choices = base.get("_choices") or {}
    for item in overrides:
        key, _, raw = item.lstrip("+~").partition("=")
        if key not in _GROUP_FIELD and key not in _DOTTED:
            continue  # read only the identity's keys: another value may be Hydra, not YAML
        value = yaml.safe_load(raw) if raw else None
        if key in _GROUP_FIELD and value != choices.get(key):
            out[_GROUP_FIELD[key]] = str(value)
        elif key in _DOTTED:
            out[_DOTTED[key]] = value
    return out
