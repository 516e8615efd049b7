"""A pre-flight cell in a few words, for the rule tables of the compatibility tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from backends.backend_conf import (
    AttentionGeometry,
    BackendConf,
    GpuConf,
    ModelConf,
    SkipSoftmaxConf,
    SpeculativeConf,
)
from backends.catalog import load_backends
from backends.compat import Finding, preflight
from backends.gpu import gpu_from_config
from backends.launch import LaunchOptions, LaunchPlan, plan_launch
from backends.resolved import CellSpec

BACKENDS = load_backends()
CAPABILITY = {
    "SM80": "8.0",
    "SM86": "8.6",
    "SM89": "8.9",
    "SM90": "9.0",
    "SM100": "10.0",
    "SM103": "10.3",
    "SM120": "12.0",
}
MTP = ("EAGLE", 3, 1, 4)
GQA = (8, 2, 128, None)  # query heads, KV heads, head dim, V head dim (None: the head dim)


@dataclass
class Cell:
    """A cell in a few words; run() gives its findings, plan() its launch plan."""

    variant: str | BackendConf = "flashinfer"
    family: str = "SM90"
    version: str = "0.5.23"
    kv: str = "auto"
    skip: tuple[float | None, float | None] = (None, None)
    spec: tuple[str, int | None, int | None, int | None] | None = None
    page: int | None = None
    mla: bool = False
    extra: list[str] = field(default_factory=list)
    max_running: int | None = 64  # set so that the reset-to-48 rule stays out of the way
    geometry: tuple[int, int, int, int | None] = GQA
    tp: int = 1
    mamba: bool = False  # a hybrid model with mamba state (Qwen3-Next)
    kv_quant: str | None = None  # the checkpoint's kv_cache_quant_algo
    env: dict[str, str] = field(default_factory=dict)  # server.env

    def args(self) -> tuple:
        algo, steps, topk, draft = self.spec or (None, None, None, None)
        spec = SpeculativeConf(
            algorithm=algo, num_steps=steps, eagle_topk=topk, num_draft_tokens=draft
        )
        heads, kv_heads, head_dim, v_head_dim = self.geometry
        model = ModelConf(
            tp=self.tp,
            is_mla=self.mla,
            hybrid_mamba=self.mamba,
            kv_cache_quant_algo=self.kv_quant,
            extra_args=list(self.extra),
            speculative=spec,
            attention=AttentionGeometry(
                heads, kv_heads, head_dim, page_size=self.page, v_head_dim=v_head_dim
            ),
        )
        backend = self.variant if isinstance(self.variant, BackendConf) else BACKENDS[self.variant]
        gpu = gpu_from_config(GpuConf(detect=False, compute_capability=CAPABILITY[self.family]))
        return model, backend, self.kv, SkipSoftmaxConf(*self.skip), gpu, self.version

    def options(self) -> LaunchOptions:
        return LaunchOptions(max_running_requests=self.max_running, env=tuple(self.env.items()))

    def run(self) -> list[Finding]:
        return preflight(CellSpec(*self.args(), options=self.options()))

    def plan(self) -> LaunchPlan:
        return plan_launch(CellSpec(*self.args(), options=self.options()))
