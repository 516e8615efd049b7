"""The config schema: dataclasses registered in Hydra's ConfigStore under the YAML in ``conf/``.

A wrong key or type in any YAML file or override fails when Hydra composes the config, before a
server starts. ``pipeline.config.cell_config.to_cell_config`` turns the composed DictConfig into
these typed objects once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from backends.backend_conf import BackendConf, GpuConf, KvDtypeConf, ModelConf, SkipSoftmaxConf
from evals.eval_conf import ClientConf, EvalConf, SamplingConf

# The config folder as an absolute path, for every Hydra app of the project: a relative one is
# read as a Python module when the app runs from an installed console script or `python -m`
# ("Primary config module 'conf' not found").
CONF_DIR = str(Path(__file__).resolve().parents[2] / "conf")


@dataclass
class CellModelConf(ModelConf):
    """A model plus the sampling settings its evals use (the same for every variant)."""

    sampling: SamplingConf = field(default_factory=SamplingConf)


@dataclass
class SimulatedConf:
    """The simulated model behind ``server=simulated`` (see ``pipeline.simserver``)."""

    sglang_version: str = "0.5.19"  # which SGLang's key names to imitate: 0.5.19 or 0.5.23
    accuracy: float = 0.72  # chance of answering a question correctly
    accept_length: float = 2.6  # mean tokens per verify step (bonus token included)
    # Rules that move accuracy / accept length for some cells, e.g.
    # {match: {attention_backend: trtllm_mha}, accuracy_delta: -0.06}.
    effects: list[dict[str, Any]] = field(default_factory=list)
    mean_completion_tokens: int = 160
    latency_s: float = 0.0  # added per request
    # Prefill time per 1,000 prompt tokens, waited per request and reported in meta_info's
    # forward_entry_time / prefill_finished_time with --enable-metrics (made up: no GPU here).
    prefill_s_per_1k_tokens: float = 0.002
    # A latency table of pipeline/simserver/timing.py (h200_8b_shape): prefill and decode cost
    # per attention backend and KV dtype, for the speed phase. null: prefill_s_per_1k_tokens
    # alone and instant decode.
    timing_model: str | None = None
    timing_jitter: float = 0.0  # with timing_model: each reported time +- this share of it
    startup_delay_s: float = 0.5  # time spent answering 503 before ready
    shutdown_s: float = 0.0  # from SIGTERM to exit, after draining (live SGLang 0.5.19: ~7 s)
    seed: int = 0
    # Repeat-to-repeat noise: 1 - the intraclass correlation of a question's repeats, drawn
    # afresh at every server start as SGLang at temperature > 0 (live H200: 0.71 mcq, 0.36
    # arith, 0.40 retrieval). 0: an identical prompt is always answered alike (pipeline.simserver
    # .sampling).
    sampling_spread: float = 0.0
    # How a chat prompt's usage.prompt_tokens is counted: words (whitespace words + 4 a message),
    # or bytes (the byte-level synth models' chat template: one token a UTF-8 byte, its specials),
    # so the long-context evals' byte lengths are the lengths the server reports (synth_longctx).
    prompt_tokens: str = "words"
    faults: dict[str, Any] = field(default_factory=dict)  # fault-injection flags (see --help)
    # The distributions return_logprob reads (pipeline/simserver/logprobs.py): vocab, candidates,
    # logit_scale, rest_mass, restart_sigma (logit noise per start: an A/A that differs); an
    # effect's logit_sigma perturbs them per backend, KV dtype or skip factor. {}: the defaults.
    logprobs: dict[str, Any] = field(default_factory=dict)
    # The GPU it pretends to run on when none is detected (gpu=auto on a CPU machine).
    gpu_name: str = "NVIDIA H200 (simulated)"
    gpu_compute_capability: str = "9.0"


@dataclass
class ServerConf:
    """How the server of a cell is started, reached and stopped."""

    kind: str = "simulated"  # simulated | sglang | external | docker
    command: list[str] = field(
        default_factory=list
    )  # launcher argv prefix; [] = the kind's default
    host: str = "127.0.0.1"
    port: int | None = None  # None: a free loopback port
    base_url: str | None = None  # server=external: where the running server is
    sglang_version: str | None = None  # None: read it from the server; used by the pre-flight
    startup_timeout_s: float = 900.0
    # server=external: how long to wait for the URL to answer at all (its health and version)
    external_timeout_s: float = 60.0
    progress_every_s: float = 30.0  # a line while the server starts: elapsed, last log line
    health_poll_initial_s: float = 0.2  # first back-off of the health poll
    health_poll_max_s: float = 5.0
    stop_grace_s: float = 30.0  # SIGTERM -> SIGKILL
    random_seed: int = 0  # --random-seed: SGLang picks a random one otherwise
    mem_fraction_static: float | None = None
    # A sweep on Hydra's basic launcher: start the next cell's server during this cell's evals,
    # on the same GPU (pipeline/cell/prestart.py; rules in pipeline/config/prestart_checks.py)
    prestart_next: bool = False
    max_running_requests: int | None = None
    enable_metrics: bool = True
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    gpus: str | None = None  # CUDA_VISIBLE_DEVICES of the server: None inherit, auto, "0,1"
    # Where the server's JIT caches go (FlashInfer, Triton, TorchInductor, SGLang's own), shared
    # by every cell: auto = SGLANG_CACHE_DIR or ~/.cache/sglang; a path (on SLURM one every node
    # sees); null = the server's own defaults (pipeline/serving/jit_cache.py).
    jit_cache_dir: str | None = None
    docker_image: str | None = None  # server=docker
    docker_args: list[str] = field(default_factory=list)
    # fail | warn, on every server kind: the server runs another backend, KV dtype, speculative
    # shape or model than asked (warn: measured, and the report marks the cell MISCONFIGURED).
    on_mismatch: str = "fail"
    on_unverified: str = "warn"  # fail | warn: a setting the server does not report (listed)
    # warn | fail: the server counted requests the pipeline did not send (another client).
    on_foreign_traffic: str = "warn"
    idle_timeout_s: float = 120.0  # /flush_cache waits this long for the server to be idle
    simulated: SimulatedConf = field(default_factory=SimulatedConf)


@dataclass
class ClusterConf:
    """Resources per cell for the submitit launchers (``hydra/launcher=slurm`` or ``local``)."""

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    time_min: int = 240  # a cell: server start-up (minutes on big models) plus every eval
    nodes: int = 1  # >1: --nnodes/--node-rank/--dist-init-addr per task; node 0 runs the evals
    dist_init_port: int = 20000  # node 0's rendezvous port (--dist-init-addr HOST:PORT)
    cpus_per_task: int = 16
    mem_gb: int = 256
    max_parallel_cells: int = 8
    local_gpus_per_cell: int = 0  # every local job gets GPUs 0..N-1: keep 0, use server.gpus=auto


@dataclass
class SequentialConf:
    """``sequential:`` in the config: off unless ``enabled``."""

    enabled: bool = False
    max_repeats: int = 16  # repeats at the last look (the baseline runs all of them)
    repeats_per_round: int = 2  # repeats added before each look
    alpha: float = 0.05  # one-sided error rate of each decision over all looks
    margin: float = 0.02  # the largest acceptable accuracy drop (0.02 = 2 points)
    spending: str = "obrien_fleming"  # obrien_fleming | pocock (group-sequential only)
    # eprocess: anytime-valid betting e-processes (pipeline/stats/anytime.py; a run may stop
    # anywhere or be extended past max_repeats); group_sequential: the design before it (alpha
    # spending, written to result.json as statistic "null").
    statistic: str = "eprocess"
    baseline: str = "fa3"  # the variant a candidate is paired with
    # A cell folder or a sweep folder to take the baseline from; None: the cell's own sweep.
    # Either way the report's rule picks it (pipeline/results/baseline_choice.py).
    baseline_dir: str | None = None
    # The conf/tolerance policy whose `match` list the looks pair by: the one mtp-eval-report
    # will judge with (--tolerance), so a cell never stops against another baseline than that.
    tolerance: str = "default"
    # first: a baseline runs every repeat and candidates pair with it once it has finished.
    # beside: cells run at once (hydra/launcher=local or slurm); a candidate pairs with its running
    # baseline round by round, and the baseline stops once every candidate paired with it has
    # (pipeline/measuring/sequential_beside.py). With the basic launcher it runs as `first` does.
    baseline_runs: str = "first"
    baseline_wait_s: float = 1800.0  # the longest a candidate waits for its baseline's round


@dataclass
class SpeedConf:
    """``speed:`` in the config: a speed phase on the cell's own server, off unless ``enabled``.

    It runs after the evals, alone on the server; with ``evals=[]`` it runs instead of them.
    Times are the server's own (``meta_info`` with ``--enable-metrics``): see
    ``pipeline/measuring/speed/run.py``.
    """

    enabled: bool = False
    # Prompt lengths prefilled at batch 1 (one new token each); a length the server's context
    # cannot hold is skipped with a note.
    prefill_tokens: list[int] = field(default_factory=lambda: [1024, 4096, 16384, 65536, 131072])
    prefill_batches: list[int] = field(default_factory=lambda: [8])  # prompts sent together
    prefill_batch_tokens: int = 1024  # the length of each prompt of a batched prefill
    # Decode throughput (speculation as the cell runs it): requests decoded together, each
    # with a prompt of decode_prompt_tokens and decode_new_tokens new tokens (EOS ignored).
    decode_batches: list[int] = field(default_factory=lambda: [1, 8, 32])
    decode_prompt_tokens: int = 512
    decode_new_tokens: int = 256
    warmup: int = 1  # runs of each shape before the measured ones, discarded
    repeats: int = 5  # measured runs of each shape (median, min and max reported)
    # Token ids are drawn from [first_token_id, vocab_size); null: the model's config.json
    # (model.path, when it is a local folder), else 32000.
    vocab_size: int | None = None
    first_token_id: int = 1000  # below it: the special tokens of most vocabularies
    seed: int = 0  # the token ids' random seed (every variant gets the same prompts)
    # What the prompts are: random (token ids from the range above: not real text) or
    # eval:NAME, the prompts of the cell's eval NAME as it sends them (chat template, the
    # model's tokenizer from model.tokenizer_path or model.path), cut to each shape's length:
    # real attention, as skip-softmax sees it (pipeline/measuring/speed/prompts.py).
    prompts: str = "random"
    gpu_sample_ms: int = 500  # nvidia-smi clocks, power and temperature sampling interval
    request_timeout_s: float = 600.0  # one /generate call (a 128k prefill on a slow variant)


@dataclass
class ServingConf:
    """``serving:`` in the config: a serving phase on the cell's server, off unless ``enabled``.

    After the evals and the speed phase, a concurrency sweep per input-length bucket through the
    eval client, streaming: throughput per GPU and per user, TTFT and inter-token latency, accept
    length under load, the server's /metrics beside (``pipeline/measuring/speed/serving/``).
    ``speculation: false`` declares a serving-only cell (``evals=[]``) launched without the
    model's speculative settings: speculation's own speed-up is its pair's figures over it.
    """

    enabled: bool = False
    speculation: bool = True  # false: this cell runs the model without speculation (evals=[])
    concurrency: list[int] = field(default_factory=lambda: [1, 4, 16, 64])
    # Input-length buckets (nominal prompt tokens); a bucket the context cannot hold is skipped.
    buckets: list[int] = field(default_factory=lambda: [1024, 8192, 32768])
    output_tokens: int = 256  # per request, EOS ignored
    # Per level and bucket at most, and at least twice its concurrency: 16 keeps batch 1 near
    # 30 s at 256 tokens on an 8B model; a phase of 4 levels x 3 buckets stays a few minutes.
    requests: int = 16
    max_seconds: float = 30.0  # per level and bucket: no new request after this
    warmup: int = 2  # requests per bucket before its first level, discarded
    # random: random words through chat (no shared prefix); eval:NAME: eval NAME's prompts as
    # token ids through /generate, cut to each bucket (measuring/speed/serving/eval_prompts.py);
    # eval:PATTERN (fnmatch): each bucket from one matched eval (serving/bucket_sources.py)
    prompts: str = "random"
    seed: int = 0
    request_timeout_s: float = 600.0


@dataclass
class ParityConf:
    """``parity:`` in the config: teacher-forced logprob parity, off unless ``enabled`` (issue 39).

    A cell without ``sequences_from`` generates ``sequences`` sequences from random-id prompts
    (the baseline) and re-scores them by prefill; a cell with it re-scores that cell's sequences
    and writes its divergence from that cell's own re-score (``pipeline/measuring/parity_run.py``;
    docs/sglang-logprobs.md says which SGLang keys it uses).
    """

    enabled: bool = False
    # a cell folder that generated them (None: generate here); auto: the baseline cell the
    # report's rule picks among finished cells (measuring/parity_source.py)
    sequences_from: str | None = None
    sequences: int = 64  # prompts, one sequence each; each is its own cluster (question)
    # random (ids drawn as below, prompt_tokens long) or eval:NAME: the first ``sequences``
    # distinct prompts of the cell's eval NAME as it sends them (chat template, the model's
    # tokenizer), whole: a divergence that bites at long context shows in the position bins.
    prompts: str = "random"
    prompt_tokens: int = 256
    new_tokens: int = 128
    # 1: the baseline's ids are samples of the distribution its re-score reports, so the mean of
    # logp_base - logp_cand over them estimates KL(base || cand); input logprobs are unscaled.
    temperature: float = 1.0
    top_k: int = 10  # top ids per position: the top-k KL and top-1 agreement (0: neither)
    # The decode/verify path (issue 39 item 2): each cell also compares what it reported while
    # decoding with its own prefill re-score of those tokens (parity/decode.json); a cell with
    # sequences_from generates its own sequences for it (one more generation per sequence).
    decode_path: bool = True
    # The losslessness arm (issue 39 item 3): greedy outputs of the first N prompts kept in
    # parity/greedy.jsonl; the report compares a speculative cell's with those of the same
    # variant with speculation off (model.speculative.algorithm=null ...). 0: none.
    greedy_sequences: int = 0
    # The release sign-off's order (issue 39 item 4; experiment=release_signoff sets it): the
    # phase runs before the evals, and a candidate whose parity is NO-GO against the A/A band
    # of the cells finished before it skips its evals (pipeline/cell/parity_step.py).
    gate: bool = False
    position_bins: list[int] = field(default_factory=lambda: [0, 1024, 4096, 16384])
    vocab_size: int = 32000  # random prompt ids are drawn from [first_token_id, vocab_size)
    first_token_id: int = 1000
    seed: int = 0  # the prompts' seed (every variant re-scores the same sequences anyway)
    request_timeout_s: float = 600.0


@dataclass
class RootConf:
    """The whole config of one cell."""

    model: CellModelConf = field(default_factory=CellModelConf)
    backend: BackendConf = field(default_factory=BackendConf)
    kv_dtype: KvDtypeConf = field(default_factory=KvDtypeConf)
    skip_softmax: SkipSoftmaxConf = field(default_factory=SkipSoftmaxConf)
    gpu: GpuConf = field(default_factory=GpuConf)
    evals: dict[str, EvalConf] = field(default_factory=dict)
    server: ServerConf = field(default_factory=ServerConf)
    client: ClientConf = field(default_factory=ClientConf)
    cluster: ClusterConf = field(default_factory=ClusterConf)
    sequential: SequentialConf = field(default_factory=SequentialConf)  # early stopping
    speed: SpeedConf = field(default_factory=SpeedConf)  # the speed phase (off by default)
    parity: ParityConf = field(default_factory=ParityConf)  # logprob parity (off by default)
    serving: ServingConf = field(default_factory=ServingConf)  # concurrency sweep (off by default)
    dry_run: bool = False  # print argv, env and pre-flight for the cell; start nothing
    output_dir: str | None = None  # None: Hydra's job output dir
    tags: list[str] = field(default_factory=list)


def skip_softmax_name(prefill: float | None, decode: float | None) -> str:
    """The skip-softmax part of a cell folder's name: ``exact``, ``skip-p0.5``, ``skip-p0.5-d0.3``.

    None and 0 both leave the kernel exact, so neither shows up (``spNone_sdNone`` before).
    """
    parts = [f"{tag}{factor:g}" for tag, factor in (("p", prefill), ("d", decode)) if factor]
    return "skip-" + "-".join(parts) if parts else "exact"


def gpus_per_node(tp: int, nodes: int) -> int:
    """The GPUs each node of a cell holds: ``model.tp`` split evenly over ``cluster.nodes``.

    Raises:
        ValueError: the nodes do not divide the tensor-parallel size.
    """
    if nodes < 1 or tp % nodes:
        raise ValueError(
            f"cluster.nodes={nodes} must divide model.tp={tp}: SGLang puts tp/nnodes GPUs on "
            f"each node (e.g. model.tp={2 * max(nodes, 1)} cluster.nodes={max(nodes, 1)})"
        )
    return tp // nodes


def run_dir(output_dir: str | None, default: str) -> str:
    """Hydra's run folder: ``output_dir`` when the user set one, else ``default``.

    Without it ``output_dir=X`` wrote the cell to X and Hydra's own ``.hydra/`` and ``cli.log`` to
    a second, timestamped folder under ``outputs/runs`` that a later report read as a job that
    started and never finished.
    """
    return output_dir or default


def register_configs() -> None:
    """Register the schema so that ``conf/config.yaml`` can build on it, and its resolver."""
    ConfigStore.instance().store(name="mtp_eval_schema", node=RootConf)
    OmegaConf.register_new_resolver("skip_softmax_name", skip_softmax_name, replace=True)
    # The launchers' GPUs per node: hydra/launcher=slurm asks each node for tp / nodes GPUs.
    OmegaConf.register_new_resolver("gpus_per_node", gpus_per_node, replace=True)
    OmegaConf.register_new_resolver("run_dir", run_dir, replace=True)
