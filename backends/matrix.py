"""``mtp-eval-matrix``: which backend variants run on which GPU family, for one SGLang version.

Every cell of variants x KV dtype x skip-softmax off/on x speculation off/on x GPU family gets the
outcome of the pre-flight rules (ok, adjust, no-effect, reject, crash-at-start) and the kernels that
really run. No GPU needed: it is the same pure code the pipeline's pre-flight runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from backends.backend_conf import BackendConf, GpuConf, ModelConf, SkipSoftmaxConf, SpeculativeConf
from backends.catalog import CatalogError, default_conf_dir, load_backends, load_model
from backends.compat import Finding, evaluate, is_runnable, outcome_of
from backends.gpu import FAMILIES, GpuInfo, gpu_from_config
from backends.matrix_render import render
from backends.options import LaunchOptions
from backends.resolved import CellSpec, resolve_cell
from backends.variants import runs_of
from backends.version_ranges import VersionError, parse_version

KV_DTYPES = ("auto", "bf16", "fp8_e4m3", "fp8_e5m2")
DEFAULT_VERSION = "0.5.23"
# A generic GQA model with an MTP-style chain, for when no --model is given.
GENERIC_MODEL = ModelConf(
    name="generic-mha",
    path="generic-mha",
    speculative=SpeculativeConf(algorithm="EAGLE", num_steps=3, eagle_topk=1, num_draft_tokens=4),
)
_CAPABILITY = {"SM80": "8.0", "SM86": "8.6", "SM89": "8.9", "SM90": "9.0", "SM100": "10.0",
               "SM103": "10.3", "SM120": "12.0"}  # fmt: skip


@dataclass(frozen=True)
class MatrixCell:
    """One point of the matrix."""

    variant: str
    kv_dtype: str
    skip_softmax: bool
    speculative: bool
    family: str
    outcome: str
    runs: dict[str, str]  # empty when the server would not start
    findings: list[Finding]
    notes: list[str]

    @property
    def key(self) -> tuple[str, str, bool, bool, str]:
        """The cell's coordinates."""
        return self.variant, self.kv_dtype, self.skip_softmax, self.speculative, self.family


def family_gpu(family: str) -> GpuInfo:
    """A stand-in GPU of a family, to plan for it without one."""
    conf = GpuConf(detect=False, name=family, compute_capability=_CAPABILITY[family])
    return gpu_from_config(conf)


def _model_for(model: ModelConf, speculative: bool) -> ModelConf:
    if not speculative:
        return replace(model, speculative=SpeculativeConf())
    if model.speculative.algorithm is None:
        return replace(model, speculative=GENERIC_MODEL.speculative)
    return model


def matrix_cell(
    model: ModelConf,
    backend: BackendConf,
    kv_dtype: str,
    skip: SkipSoftmaxConf,
    family: str,
    version: str,
    options: LaunchOptions,
) -> MatrixCell:
    """Evaluate one cell (model already set for speculation on or off)."""
    routed = resolve_cell(
        CellSpec(model, backend, kv_dtype, skip, family_gpu(family), version, options)
    )
    adjusted, findings = evaluate(routed)
    # A server that does not start runs nothing.
    runs = runs_of(adjusted.flags, family, adjusted.speculative) if is_runnable(findings) else {}
    return MatrixCell(
        variant=backend.name,
        kv_dtype=kv_dtype,
        skip_softmax=skip.prefill is not None or skip.decode is not None,
        speculative=routed.speculative,
        family=family,
        outcome=outcome_of(findings),
        runs=runs,
        findings=findings,
        notes=list(routed.notes),
    )


def build_matrix(
    backends: Sequence[BackendConf],
    model: ModelConf,
    version: str,
    skip_factor: float = 1.0,
    families: Sequence[str] = FAMILIES,
    options: LaunchOptions | None = None,
) -> list[MatrixCell]:
    """Every cell of variants x KV dtype x skip-softmax x speculation x family, in that order.

    Args:
        backends: The variants.
        model: The model (its speculative recipe is used when speculation is on).
        version: SGLang version.
        skip_factor: The factor used for both skip-softmax variables when skip-softmax is on.
        families: SM families to plan for.
        options: Server options (``max_running_requests`` decides the reset-to-48 rule).

    Returns:
        The cells.
    """
    opts = options or LaunchOptions(max_running_requests=48)
    skips = (SkipSoftmaxConf(), SkipSoftmaxConf(prefill=skip_factor, decode=skip_factor))
    return [
        matrix_cell(_model_for(model, spec), backend, kv, skip, family, version, opts)
        for backend in backends
        for kv in KV_DTYPES
        for skip in skips
        for spec in (False, True)
        for family in families
    ]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mtp-eval-matrix",
        description="Which attention-backend variants run on which GPU family, as SGLang's own\n"
        "rules decide (ok, adjust, no-effect, reject, crash-at-start) for one SGLang release,\n"
        "and which kernels run in each phase; no GPU needed. Prints the table to stdout.",
        epilog="examples:\n  mtp-eval-matrix --sglang-version 0.5.19\n"
        "  mtp-eval-matrix --families SM90,SM100 --variants fa3,fmha_v2 --format markdown\n"
        "  mtp-eval-matrix --model llama3_1_8b_eagle3 --format json > matrix.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--sglang-version", default=DEFAULT_VERSION, help="default %(default)s")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.add_argument("--variants", help="comma list of conf/backend names (default: all)")
    p.add_argument("--families", help=f"comma list of {','.join(FAMILIES)} (default: all)")
    p.add_argument("--model", help="a conf/model name or YAML path (default: a generic GQA model)")
    p.add_argument("--skip-factor", type=float, default=1.0, help="factor for skip-softmax 'on'")
    p.add_argument(
        "--max-running-requests",
        default="48",
        help="'none' leaves it unset, so SGLang's reset-to-48 shows as an adjustment",
    )
    p.add_argument("--conf-dir", type=Path, default=None, help="the conf/ folder")
    return p


def _pick(names: str | None, available: Sequence[str], what: str) -> list[str]:
    if names is None:
        return list(available)
    picked = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in picked if n not in available]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; choose from {list(available)}")
    return picked


def _load_model(name: str | None, conf_dir: Path) -> ModelConf:
    if name is None:
        return GENERIC_MODEL
    path = Path(name) if name.endswith(".yaml") else conf_dir / "model" / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"--model {name!r}: no file {path}")
    return load_model(path)


def _max_running(text: str) -> int | None:
    if text.lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"--max-running-requests {text!r}: give an integer or 'none'") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Print the compatibility matrix; exit 2 on bad arguments or config files."""
    parser = _parser()
    args = parser.parse_args(argv)
    conf_dir = args.conf_dir or default_conf_dir()
    try:
        parse_version(args.sglang_version)
        catalog = load_backends(conf_dir)
        variants = _pick(args.variants, list(catalog), "variant(s)")
        families = _pick(args.families, FAMILIES, "GPU family(ies)")
        model = _load_model(args.model, conf_dir)
        options = LaunchOptions(max_running_requests=_max_running(args.max_running_requests))
    except (ValueError, VersionError, CatalogError) as exc:
        parser.error(str(exc))
    backends = [catalog[name] for name in variants]
    cells = build_matrix(backends, model, args.sglang_version, args.skip_factor, families, options)
    sys.stdout.write(render(cells, args.format, args.sglang_version, model.name, families))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
