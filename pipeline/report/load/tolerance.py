"""The sign-off policy (``conf/tolerance/<name>.yaml``) and its reference values, validated.

A reference file (``references/<model>.yaml``) holds ``model``, optional ``aliases`` and
``entries``; each entry keys on ``eval``, ``kv_dtype`` and ``speculative`` (optionally
``variant`` and ``gpu``), carries ``accuracy`` and / or ``accept_length`` (with optional
``*_stderr``) and a ``provenance`` with ``source``, ``date`` and ``setup``. Top-level keys starting
with ``_`` are YAML anchors and ignored. The first matching entry wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.config_file import Check, ConfigFileError, checked, load_structured, read_mapping
from pipeline.report.load.parity_policy import ParityPolicy
from pipeline.report.load.references import Reference, load_references

REPO_CONF = Path(__file__).resolve().parents[3] / "conf" / "tolerance"
MULTIPLICITY = ("holm", "none")
REFERENCE_VARIANCE = ("within", "clustered")
MATCH_KEYS = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


class ToleranceError(ConfigFileError):
    """A tolerance or reference file is wrong; the message names the file, the key and the fix."""


MARGIN = Check(0.0, 1.0, open_high=True, hint="(a fraction: 0.02 = 2 points)")
SLOWDOWN = Check(0.0, open_low=True, hint="(a ratio of times: 1.05 = at most 5% slower)")
SPEED_PHASES = ("prefill", "decode")
SHAPE_FORMAT = "'PHASE BATCHxTOKENS', e.g. 'prefill 1x4096' or 'decode 8x512'"


@dataclass(frozen=True)
class EvalTolerance:
    """Margins of one eval (fractions; accept bands are relative)."""

    max_drop: float = checked(0.02, MARGIN)
    reference_max_drop: float = checked(0.02, MARGIN)
    accept_band: float = checked(0.05, MARGIN)
    reference_accept_band: float = checked(0.05, MARGIN)
    # Share of the baseline's questions a candidate may lack (never asked) and still be GO.
    max_absent_questions: float = checked(0.0, MARGIN)
    # Share of a speculative eval's answered requests that may lack accept statistics (a 200
    # without meta_info / sglext) and still PASS its accept check.
    accept_max_unmeasured: float = checked(0.05, MARGIN)


@dataclass(frozen=True)
class SpeedTolerance:
    """Speed bands: the largest slowdown (candidate time / baseline time) a shape may show.

    The most specific that is set applies: ``shapes`` (``prefill 1x4096``), then ``phases``
    (``prefill``, ``decode``), then ``max_slowdown``; none set: speed is not judged.
    """

    max_slowdown: float | None = checked(None, SLOWDOWN)
    phases: dict[str, float] = field(default_factory=dict)
    shapes: dict[str, float] = field(default_factory=dict)

    def band(self, phase: str, batch: int, tokens: int) -> float | None:
        """The largest slowdown allowed at a shape (None: speed is not judged there)."""
        found = self.shapes.get(f"{phase} {batch}x{tokens}")
        return found if found is not None else self.phases.get(phase, self.max_slowdown)

    @property
    def judged(self) -> bool:
        """Whether any band is set."""
        return self.max_slowdown is not None or bool(self.phases) or bool(self.shapes)


@dataclass(frozen=True)
class ServingTolerance:
    """Serving bands (issue 42): the largest throughput slowdown a serving level may show.

    The slowdown is the baseline's output tokens/s over the candidate's.

    The most specific that is set applies: ``levels`` keyed ``CONCURRENCYxBUCKET`` (``16x8192``),
    then ``CONCURRENCY`` (``16``), then ``max_slowdown``; none set: serving is not judged.
    """

    max_slowdown: float | None = checked(None, SLOWDOWN)
    levels: dict[str, float] = field(default_factory=dict)

    def band(self, concurrency: int, bucket: int) -> float | None:
        """The largest slowdown allowed at a level (None: not judged there)."""
        found = self.levels.get(f"{concurrency}x{bucket}")
        return found if found is not None else self.levels.get(str(concurrency), self.max_slowdown)


@dataclass(frozen=True)
class PolicyFile:
    """The schema of ``conf/tolerance/<name>.yaml``, as written."""

    alpha: float = checked(0.05, Check(0.0, 0.5, open_low=True, open_high=True))
    power: float = checked(0.8, Check(0.5, 1.0, open_low=True, open_high=True))
    multiplicity: str = checked("holm", Check(choices=MULTIPLICITY))
    baseline: str = "fa3"  # the variant every other is compared with
    match: list[str] = checked(list(MATCH_KEYS), Check(choices=MATCH_KEYS))
    reference_variance: str = checked("within", Check(choices=REFERENCE_VARIANCE))
    references: str = "references"  # folder of reference files, beside the policy
    defaults: EvalTolerance = field(default_factory=EvalTolerance)
    # Per-eval margins over ``defaults`` (each block is an EvalTolerance; unset keys inherit).
    evals: dict[str, Any] = field(default_factory=dict)
    speed: SpeedTolerance = field(default_factory=SpeedTolerance)  # unset: speed informational
    serving: ServingTolerance = field(default_factory=ServingTolerance)  # unset: informational
    parity: ParityPolicy = field(default_factory=ParityPolicy)  # logprob parity (issue 39)


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
    speed: SpeedTolerance = SpeedTolerance()
    serving: ServingTolerance = ServingTolerance()
    parity: ParityPolicy = field(default_factory=ParityPolicy)

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
    raw = read_mapping(path, ToleranceError)
    policy = load_structured(PolicyFile, raw, str(path), error=ToleranceError)
    evals = {
        str(k): load_structured(
            EvalTolerance, v, str(path), at=f"evals.{k}", base=policy.defaults, error=ToleranceError
        )
        for k, v in policy.evals.items()
    }
    ref_dir = references_dir or path.parent / policy.references
    _check_speed(policy.speed, str(path))
    _check_serving(policy.serving, str(path))
    if (problem := policy.parity.problem()) is not None:
        raise ToleranceError(f"{path}: {problem}: the floor is the band's least width")
    return Tolerance(
        name=path.stem,
        path=path,
        alpha=policy.alpha,
        power=policy.power,
        multiplicity=policy.multiplicity,
        baseline=baseline or policy.baseline,
        match=tuple(policy.match),
        reference_variance=policy.reference_variance,
        defaults=policy.defaults,
        evals=evals,
        references=tuple(load_references(ref_dir)) if ref_dir.is_dir() else (),
        speed=policy.speed,
        serving=policy.serving,
        parity=policy.parity,
    )


def _check_speed(speed: SpeedTolerance, source: str) -> None:
    """Phases and shapes the report knows, each band above 0 (raises ``ToleranceError``)."""
    for key, value in [*speed.phases.items(), *speed.shapes.items()]:
        if not SLOWDOWN.within(value):
            problem = SLOWDOWN.problem(value)
            raise ToleranceError(f"{source}: speed band {key!r} = {value} {problem}")
    for phase in speed.phases:
        if phase not in SPEED_PHASES:
            raise ToleranceError(f"{source}: speed.phases.{phase}: use one of "
                                 f"{', '.join(SPEED_PHASES)}")  # fmt: skip
    for shape in speed.shapes:
        if not re.fullmatch(r"(prefill|decode) [1-9][0-9]*x[1-9][0-9]*", shape):
            raise ToleranceError(f"{source}: speed.shapes key {shape!r}: write {SHAPE_FORMAT}")


def _check_serving(serving: ServingTolerance, source: str) -> None:
    """Levels written ``16`` or ``16x8192``, each band above 0 (raises ``ToleranceError``)."""
    for key, value in serving.levels.items():
        if not SLOWDOWN.within(value):
            raise ToleranceError(f"{source}: serving band {key!r} = {value} "
                                 f"{SLOWDOWN.problem(value)}")  # fmt: skip
        if not re.fullmatch(r"[1-9][0-9]*(x[1-9][0-9]*)?", str(key)):
            raise ToleranceError(f"{source}: serving.levels key {key!r}: write CONCURRENCY "
                                 "or CONCURRENCYxBUCKET, e.g. '16' or '16x8192'")  # fmt: skip
