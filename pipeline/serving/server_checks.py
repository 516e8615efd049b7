"""Does the server run what the cell asked for? Checked before the first eval request.

What is compared (``backends.verify``): the attention backends, KV dtype, speculative shape and
skip-softmax variables of the launch plan; the model (``model_path``, ``served_model_name``,
``speculative_draft_model_path``, ``GET /v1/models``); and the kernels that run against the ones the
variant's name stands for. A difference is a *mismatch*: the cell fails (``server.on_mismatch=
fail``, the default on every server kind) or, with ``warn``, is measured, warned about and marked
MISCONFIGURED by the report. A setting the server does not report is *unverified*: listed on the
result and shown, and fatal only with ``server.on_unverified=fail``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from backends.backend_conf import GpuConf, ModelConf
from backends.gpu import GpuInfo, detect_gpu
from backends.gpu_confirmation import (
    detected_here,
    held_to_host,
    unconfirmed_gpu,
    unconfirmed_reason,
)
from backends.launch import LaunchPlan
from backends.server_info import ServerInfo
from backends.verify import (
    Mismatch,
    compare_models_list,
    compare_runs,
    compare_server_info,
    exact_softmax_requested,
    model_requested,
    observed_runs,
    observed_settings,
    speculation_off,
    unverified_reason,
)
from pipeline.config.checks import POLICIES
from pipeline.results.cell_error import CellError
from pipeline.results.result_draft import ResultDraft
from pipeline.results.result_types import Unverified, asked_text
from pipeline.serving import server_api
from pipeline.serving.server import RunningServer
from pipeline.serving.server_kind import ServerPlan

MISCONFIGURED = "MISCONFIGURED"


@dataclass(frozen=True)
class CheckPlan:
    """What the server checks read of a cell: its server plan and what it asks the server to run."""

    server: ServerPlan
    backend: str  # the variant's name (``backend.name``), the label the report gives the cell
    model: ModelConf
    gpu: GpuConf  # as asked (``gpu=auto`` detects)
    api_key: str | None
    dry_run: bool


def plan_gpu(
    asked: GpuConf, server: ServerPlan, api_key: str | None, dry_run: bool = False
) -> GpuInfo:
    """The GPU to plan the cell for: this host's, the simulated one, or the one set in ``gpu``.

    A ``gpu=...`` set by hand for a server this host starts is held to the GPU found here (a dry
    run plans for any GPU: it starts nothing).

    Raises:
        CellError: ``gpu=auto`` where this host's GPU is not the server's (``server=external``),
            where no NVIDIA GPU is found for a server this host starts, or where the one found
            is of another family than ``gpu=...`` names.
    """
    gpu = detect_gpu(asked)
    kind = server.kind
    if kind.simulated and gpu.source == "none":
        sim = server.conf.simulated
        override = dataclasses.replace(
            asked, detect=False, name=sim.gpu_name, compute_capability=sim.gpu_compute_capability
        )
        return detect_gpu(override)
    if kind.external and asked.detect:
        raise CellError("config", _external_gpu_message(server, api_key))
    if kind.gpu_here and gpu.source == "none":
        raise CellError(
            "no_gpu",
            "no NVIDIA GPU detected here; set gpu=... to plan for one (e.g. gpu=h200; conf/gpu/ "
            "lists the parts)",
        )
    if kind.gpu_here and not asked.detect and not dry_run:
        try:
            return held_to_host(gpu, detect_gpu(dataclasses.replace(asked, detect=True)))
        except ValueError as err:
            raise CellError("config", str(err)) from err
    return gpu


def _external_gpu_message(server: ServerPlan, api_key: str | None) -> str:
    device = None
    if server.conf.base_url:
        try:
            base_url, timeout_s = server.conf.base_url.rstrip("/"), server.conf.external_timeout_s
            info = server_api.server_info(base_url, api_key, timeout_s)
            device = info.setting("device")[1]
        except server_api.ServerApiError:
            device = "(no answer)"
    return (
        f"server=external with gpu=auto: the server reports device={device!r} but no GPU name or "
        "compute capability (/server_info has none), and this host's GPU need not be the "
        "server's; set gpu=... to the server's GPU, e.g. gpu=h200 (conf/gpu/ lists the parts)"
    )


def check_label_before_launch(checks: CheckPlan, plan: LaunchPlan, result: ResultDraft) -> None:
    """Fail before starting anything when SGLang will not run what the variant's name says.

    A dry run only warns (it starts nothing); ``server.on_mismatch=warn`` checks again, against
    what the server reports, once it runs.
    """
    _check_policy(checks.server)
    wrong = compare_runs(plan.label_runs, plan.runs)
    name = checks.backend
    if wrong and checks.dry_run:
        result.warnings.append(f"{MISCONFIGURED} (planned): {_lines(wrong)}")
    elif wrong and checks.server.conf.on_mismatch == "fail":
        notes = "; ".join(plan.notes)
        raise CellError(
            "mismatch",
            f"backend={name} would not run {name}: {_lines(wrong)} "
            f"({notes}); the report would label it {name}. Set "
            "server.on_mismatch=warn to measure it anyway (the report then marks it "
            f"{MISCONFIGURED})",
        )


def verify_server(
    checks: CheckPlan,
    plan: LaunchPlan,
    server: RunningServer,
    gpu: GpuInfo,
    result: ResultDraft,
) -> None:
    """Compare what the server reports with the cell; record, warn or fail per the policies."""
    key = checks.api_key
    info = server_api.server_info(server.base_url, key)
    result.set_observed(observed_settings(info))
    result.set_server_version(info.version)
    result.warnings.extend(_version_differs(result.identity().sglang_version, info.version))
    _check_speculation(checks.model, info)
    launched = checks.server.kind.launched
    requested = {**plan.requested, **model_requested(checks.model, launched)}
    requested.update(exact_softmax_requested(requested))
    result.set_requested(requested)
    found = compare_server_info(requested, info)
    served = requested.get("served_model_name")
    if isinstance(served, str):
        listed = compare_models_list(served, _models(server.base_url, key))
        found += [listed] if listed is not None else []
    speculative = checks.model.speculative.algorithm is not None
    runs = observed_runs(info, gpu.family, speculative) or dict(plan.runs)
    result.set_runs(runs, dict(plan.label_runs))
    if not any(m.verifiable and "attention" in m.key for m in found):  # else it says it already
        found += compare_runs(plan.label_runs, runs)
    if not gpu_confirmed(checks.gpu, checks.server, gpu):
        found += unconfirmed_gpu(gpu, runs, lambda family: observed_runs(info, family, speculative))
    _apply(checks.server, found, result)


def gpu_confirmed(asked: GpuConf, server: ServerPlan, gpu: GpuInfo) -> bool:
    """Whether the cell's GPU is known to be the server's, not only what the config says.

    So it is where this host detected it and starts the server on it, and for the simulated
    server planned with ``gpu=auto`` (it simulates the GPU its own settings name).
    """
    kind = server.kind
    if kind.simulated:
        return asked.detect
    return kind.gpu_here and detected_here(gpu)


def _apply(server: ServerPlan, found: list[Mismatch], result: ResultDraft) -> None:
    result.set_mismatches(found)
    wrong = [m for m in found if m.verifiable]
    unchecked = [m for m in found if not m.verifiable]
    unverified = [Unverified(m.key, m.requested, _reason(m)) for m in unchecked]
    result.set_unverified(unverified)
    if wrong and server.conf.on_mismatch == "fail":
        raise CellError(
            "mismatch",
            f"the server does not run what was asked: {_lines(wrong)} ({_renamed(wrong)}set "
            f"server.on_mismatch=warn to measure it anyway; the report marks it {MISCONFIGURED})",
        )
    if unchecked and server.conf.on_unverified == "fail":
        raise CellError(
            "unverified",
            f"cannot verify {_unverified_lines(unverified)} (set "
            "server.on_unverified=warn to go on with them listed as unverified)",
        )
    result.warnings.extend(f"{MISCONFIGURED}: {_lines([m])}" for m in wrong)
    result.warnings.extend(f"unverified: {_unverified_lines([u])}" for u in unverified)


def _reason(mismatch: Mismatch) -> str:
    return unconfirmed_reason(mismatch) or unverified_reason(mismatch)


# The config key that names each model setting: the same weights under another name or path
# (a local copy of a hub model) are fixed there, not by measuring a MISCONFIGURED cell.
_MODEL_KEYS = {
    "model_path": "model.path",
    "served_model_name": "model.served_model_name",
    "speculative_draft_model_path": "model.speculative.draft_model_path",
}


def _renamed(wrong: list[Mismatch]) -> str:
    fixes = [f"{_MODEL_KEYS[m.key]}={m.observed}" for m in wrong if m.key in _MODEL_KEYS]
    if not fixes:
        return ""
    return f"if the server serves the same weights under that name, set {' '.join(fixes)}; else "


def _version_differs(planned: object, served: object) -> list[str]:
    if not isinstance(served, str) or not planned or served == planned:
        return []
    return [
        f"the cell was planned with SGLang {planned}'s rules (server.sglang_version) but the "
        f"server reports {served}: set server.sglang_version={served}, or null to read it from "
        "the server"
    ]


def _check_speculation(model: ModelConf, info: ServerInfo) -> None:
    spec = model.speculative
    if spec.algorithm is None or not speculation_off(info):
        return
    served = info.setting("speculative_algorithm")[1]
    shape = f"{spec.num_steps}/{spec.eagle_topk}/{spec.num_draft_tokens}"
    raise CellError(
        "no_speculation",
        f"the server runs without speculative decoding (/server_info speculative_algorithm="
        f"{served!r}) but the cell asks for {spec.algorithm} {shape} "
        "(steps/topk/draft tokens); start it with --speculative-algorithm, or use a model "
        "config without speculative settings. Nothing was sent.",
    )


def _models(base_url: str, api_key: str | None) -> dict[str, Any] | None:
    try:
        return server_api.get_json(base_url, "/v1/models", api_key)
    except server_api.ServerApiError:
        return None


def _check_policy(server: ServerPlan) -> None:
    for name in ("on_mismatch", "on_unverified", "on_foreign_traffic"):
        value = getattr(server.conf, name)
        if value not in POLICIES:
            raise CellError("config", f"server.{name}={value!r}: use one of {', '.join(POLICIES)}")


def _lines(found: list[Mismatch]) -> str:
    return "; ".join(f"{m.key}: asked {m.requested!r}, server runs {m.observed!r}" for m in found)


def _unverified_lines(unverified: list[Unverified]) -> str:
    return "; ".join(f"{u.key}={asked_text(u.requested)} ({u.reason})" for u in unverified)
