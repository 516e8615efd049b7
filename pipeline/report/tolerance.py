"""The sign-off policy (``conf/tolerance/<name>.yaml``) and its reference values, validated.

A reference file (``references/<model>.yaml``) holds ``model``, optional ``aliases`` and
``entries``; each entry keys on ``eval``, ``kv_dtype`` and ``speculative`` (optionally
``variant`` and ``gpu``), carries ``accuracy`` and / or ``accept_length`` (with optional
``*_stderr``) and a ``provenance`` with ``source``, ``date`` and ``setup``. Top-level keys starting
with ``_`` are YAML anchors and ignored. The first matching entry wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from pipeline.report.references import Reference, load_references

REPO_CONF = Path(__file__).resolve().parents[2] / "conf" / "tolerance"
MULTIPLICITY = ("holm", "none")
REFERENCE_VARIANCE = ("within", "clustered")
MATCH_KEYS = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


class ToleranceError(ValueError):
    """A tolerance or reference file is wrong; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class EvalTolerance:
    """Margins of one eval (fractions; accept bands are relative)."""

    max_drop: float = 0.02
    reference_max_drop: float = 0.02
    accept_band: float = 0.05
    reference_accept_band: float = 0.05
    # Share of the baseline's questions a candidate may lack (never asked) and still be GO.
    max_absent_questions: float = 0.0


@dataclass(frozen=True)
class Tolerance:
    """A validated policy plus the reference values it points at."""

    name: str
    path: Path
    alpha: float = 0.05
    power: float = 0.8
    multiplicity: str = "holm"
    baseline: str = "fa3"
    match: tuple[str, ...] = MATCH_KEYS
    reference_variance: str = "within"
    defaults: EvalTolerance = EvalTolerance()
    evals: dict[str, EvalTolerance] = field(default_factory=dict)
    references: tuple[Reference, ...] = ()

    def for_eval(self, name: str) -> EvalTolerance:
        """The margins of eval ``name`` (its own block, else the defaults)."""
        return self.evals.get(name, self.defaults)


def resolve_path(name: str) -> Path:
    """``NAME`` -> ``./conf/tolerance/NAME.yaml`` or the repository's; a path is taken as is."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        if not candidate.is_file():
            raise ToleranceError(f"{candidate}: no such tolerance file")
        return candidate
    for folder in (Path.cwd() / "conf" / "tolerance", REPO_CONF):
        path = folder / f"{name}.yaml"
        if path.is_file():
            return path
    raise ToleranceError(
        f"tolerance {name!r}: no conf/tolerance/{name}.yaml here or in "
        f"{REPO_CONF}; pass a name from there or a path to a YAML file"
    )


def load_tolerance(
    name: str, baseline: str | None = None, references_dir: Path | None = None
) -> Tolerance:
    """Read and validate a policy and its references.

    Args:
        name: policy name or path (see ``resolve_path``).
        baseline: overrides the policy's baseline variant when given.
        references_dir: overrides the policy's reference folder when given.

    Raises:
        ToleranceError: on any invalid value, naming file and key.
    """
    path = resolve_path(name)
    raw = _read_mapping(path)
    _known(
        raw,
        path,
        "",
        {
            "alpha",
            "power",
            "multiplicity",
            "baseline",
            "match",
            "reference_variance",
            "references",
            "defaults",
            "evals",
        },
    )
    defaults = _eval_tolerance(raw.get("defaults") or {}, path, "defaults", EvalTolerance())
    evals = {
        str(k): _eval_tolerance(v or {}, path, f"evals.{k}", defaults)
        for k, v in (raw.get("evals") or {}).items()
    }
    ref_dir = references_dir or path.parent / str(raw.get("references", "references"))
    return Tolerance(
        name=path.stem,
        path=path,
        alpha=_fraction(raw, "alpha", 0.05, path, upper=0.5),
        power=_fraction(raw, "power", 0.8, path, lower=0.5),
        multiplicity=_choice(raw, "multiplicity", "holm", MULTIPLICITY, path),
        baseline=str(baseline or raw.get("baseline", "fa3")),
        match=_match(raw.get("match", list(MATCH_KEYS)), path),
        reference_variance=_choice(raw, "reference_variance", "within", REFERENCE_VARIANCE, path),
        defaults=defaults,
        evals=evals,
        references=tuple(load_references(ref_dir)) if ref_dir.is_dir() else (),
    )


def _read_mapping(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ToleranceError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, dict):
        raise ToleranceError(f"{path}: expected a mapping at the top level")
    return data


def _known(raw: dict[str, Any], path: Path, where: str, allowed: set[str]) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise ToleranceError(
            f"{path}: unknown key {where}{unknown[0]}; allowed: {', '.join(sorted(allowed))}"
        )


def _number(value: Any, path: Path, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToleranceError(f"{path}: {key} = {value!r} must be a number")
    return float(value)


def _fraction(
    raw: dict[str, Any],
    key: str,
    default: float,
    path: Path,
    lower: float = 0.0,
    upper: float = 1.0,
) -> float:
    value = _number(raw.get(key, default), path, key)
    if not lower < value < upper:
        raise ToleranceError(f"{path}: {key} = {value} must be in ({lower}, {upper})")
    return value


def _choice(
    raw: dict[str, Any], key: str, default: str, allowed: tuple[str, ...], path: Path
) -> str:
    value = str(raw.get(key, default))
    if value not in allowed:
        raise ToleranceError(f"{path}: {key} = {value!r}; use one of {', '.join(allowed)}")
    return value


def _match(value: Any, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or any(v not in MATCH_KEYS for v in value):
        raise ToleranceError(f"{path}: match = {value!r} must be a list of {', '.join(MATCH_KEYS)}")
    return tuple(value)


def _eval_tolerance(raw: Any, path: Path, where: str, base: EvalTolerance) -> EvalTolerance:
    if not isinstance(raw, dict):
        raise ToleranceError(f"{path}: {where} must be a mapping of margins")
    names = {f.name for f in fields(EvalTolerance)}
    _known(raw, path, f"{where}.", names)
    values = {}
    for key, value in raw.items():
        number = _number(value, path, f"{where}.{key}")
        if not 0 <= number < 1:
            raise ToleranceError(
                f"{path}: {where}.{key} = {number} must be a fraction in [0, 1) (0.02 = 2 points)"
            )
        values[key] = number
    return EvalTolerance(**{**{f.name: getattr(base, f.name) for f in fields(base)}, **values})
