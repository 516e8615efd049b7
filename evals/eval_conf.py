"""Typed config nodes for the evals and the client (schema under ``conf/evals/``)."""

from __future__ import annotations

from dataclasses import dataclass, field

# OmegaConf's mark of a value that must be set (omegaconf.MISSING), spelt out: evals/ also runs
# where only the standard library is installed (the GPU bundle's checks).
MISSING = "???"


@dataclass
class SamplingConf:
    """Sampling settings sent with every eval request; identical for every variant of a sweep."""

    temperature: float = 0.0
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    max_tokens: int = 2048  # generation limit; a truncated answer is counted, never scored correct
    seed: int | None = None


@dataclass
class ClientConf:
    """How the async OpenAI-compatible client talks to the server."""

    concurrency: int = 64
    # True: in-flight requests = the server's running limit from /server_info (SGLang's
    # effective_max_running_requests_per_dp x DP ranks): a full batch, no queue; capped at
    # max_concurrency. False: exactly `concurrency`.
    follow_server: bool = True
    max_concurrency: int = 1024
    request_timeout_s: float = 3600.0
    # HTTP 5xx, connection errors, unfinished and aborted replies (evals/retry_policy.py)
    max_retries: int = 4
    retry_backoff_s: float = 0.5  # first back-off; doubles each retry
    # HTTP 429: waits the server's Retry-After (or the back-off), at most this many times and
    # this many seconds in all per request; then the request errors as rate_limited
    rate_limit_retries: int = 8
    rate_limit_wait_s: float = 120.0
    progress: bool = True
    # Off a terminal (SLURM logs, CI) the bar is hidden: a line per eval every this many seconds.
    progress_every_s: float = 30.0
    # A cell whose evals lose more than this share of requests to errors fails (its samples stay).
    max_error_rate: float = 0.05
    stream: bool = False  # True: streaming chat, spec stats from the final sglext chunk
    # The key itself comes from this environment variable at run time, so it never lands in
    # .hydra/config.yaml; it is passed to SGLang as --api-key and sent as a Bearer token.
    api_key_env: str | None = None
    api_key: str | None = None  # filled from api_key_env by the pipeline; never set it in config
    # SGLang's --admin-api-key (it guards /flush_cache, which every eval window calls): the
    # variable that holds it; passed to SGLang as --admin-api-key when the pipeline starts it.
    admin_api_key_env: str | None = None
    admin_api_key: str | None = None  # filled from admin_api_key_env; never set it in config


@dataclass
class DatasetConf:
    """Where an eval's rows come from."""

    source: str = "bundled"  # bundled | hf | url | file | generated (kind longctx: no rows)
    # Bundled name, HF dataset id, URL or local file. No default: an eval that no conf/evals/
    # file defines (only its repeats set, say) is refused at compose instead of running on
    # some default rows.
    path: str = MISSING
    subset: str | None = None  # HF config, e.g. gpqa_diamond
    split: str = "train"
    limit: int | None = None  # first N rows (after loading), None = all


LONGCTX_LENGTHS = [4096, 8192, 16384, 32768, 65536, 131072]


@dataclass
class LongCtxConf:
    """A generated long-context eval (``kind: longctx``, ``evals/longctx.py``): what it asks."""

    # niah_single | niah_multikey | niah_multivalue | niah_multiquery | vt | fwe
    task: str = MISSING
    lengths: list[int] = field(default_factory=lambda: list(LONGCTX_LENGTHS))  # prompt tokens
    samples: int = 20  # questions per length
    # How lengths are counted: auto (the simulated server's count on server.kind=simulated, else
    # hf) | sim | bytes (synth_llama's byte tokenizer) | hf (tokenizer_path's HF tokenizer).
    tokens: str = "auto"
    # What auto and hf read; conf/evals/longctx.yaml fills them from the cell's server and model.
    server_kind: str = "simulated"
    tokenizer_path: str | None = None  # model.tokenizer_path; None: model_path's tokenizer
    model_path: str | None = None


@dataclass
class SpeedBenchConf:
    """SPEED-Bench's columns and what to take of a split (``kind: speed_bench``).

    The column names are SPEED-Bench's as its loaders read them (``nvidia/SPEED-Bench``, configs
    ``qualitative`` and ``throughput_*``, split ``test``); they are settings because the upstream
    schema may move (a ``messages`` list in place of ``turns`` is read too).
    """

    bucket: str | None = None  # the split's input-length bucket (throughput_8k: "8k"); None: none
    category: str | None = None  # only this category's rows (None: all)
    id_column: str = "question_id"
    category_column: str = "category"
    turns_column: str = "turns"  # a list of user turns, or of {role, content} messages


@dataclass
class EvalConf:
    """One eval of a cell."""

    kind: str = "gpqa"  # which eval implementation runs it
    dataset: DatasetConf = field(default_factory=DatasetConf)
    repeats: int = 1
    seed: int = 0  # fixes the choice permutations, shared by every variant
    label: str = ""  # shown in reports; says "not GPQA" for the bundled sample
    sampling: SamplingConf | None = None  # None: the model's sampling settings
    longctx: LongCtxConf | None = None  # a generated long-context eval's settings (kind: longctx)
    speed_bench: SpeedBenchConf | None = None  # kind speed_bench: columns, bucket, category
