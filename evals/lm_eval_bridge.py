"""The lm-eval bridge: an lm-evaluation-harness task as an eval of a cell (``kind: lm_eval``).

The task runs through lm-eval's Python API (``lm_eval.simple_evaluate``) with its
``local-chat-completions`` model pointed at the cell's server: chat template applied, few-shot
examples as turns, the cell client's concurrency, retries and timeout, and the model's sampling
settings as ``gen_kwargs``. ``max_gen_toks`` is the model's ``sampling.max_tokens`` (lm-eval's
own default is 256, which silently cuts reasoning short), and every truncated answer is counted
from the response's finish reason. The model is lm-eval's class with a recorder added
(``evals.lm_eval_model``), so per-request speculative statistics are as complete as for our own
evals. lm-eval's per-sample log goes to ``samples/lm_eval_<task>.jsonl``, its metrics to
``evals.<name>.lm_eval`` in result.json, and one record per document to ``samples/<name>.jsonl``.

Config (``conf/evals/lm_eval_*.yaml``), on ``EvalConf``'s fields:
``dataset.source: lm_eval``; ``dataset.path``: the task (``gsm8k``, ``gsm8k_cot_llama``, or a task
of ``evals/lm_eval_tasks/``, which is always searched); ``dataset.subset``: an optional extra
folder of task YAMLs (lm-eval's ``--include_path``); ``dataset.limit``: lm-eval's ``--limit``;
``seed``: lm-eval's ``random_seed``; ``repeats`` must be 1 (set ``repeats:`` in a task YAML).
Few-shot counts are the task's own (gsm8k: 5); another count is another task YAML.
lm-eval (``lm-eval[api]``, no torch) is a dependency of mtp-eval; elsewhere
``pip install "lm-eval[api]>=0.4.13,<0.5"``.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
from pathlib import Path
from typing import Any

from evals.base import (
    ANSWER_KINDS,
    HARNESS,
    AnswerKeyEntry,
    AnswerKind,
    EvalPrompt,
    EvalRunError,
    HarnessEval,
    HarnessRun,
    RequestTarget,
    RunShape,
)
from evals.eval_conf import EvalConf
from evals.hub import cache_only, hub_unreachable
from evals.lm_eval_model import (
    GenKwargs,
    ModelArgs,
    RequestLog,
    auth_args,
    extra_body,
    gen_kwargs,
    model_args,
    recording_model_class,
)
from evals.lm_eval_records import answer_entry, build_records, json_safe
from evals.sample_line import SampleJson

TASKS_DIR = Path(__file__).parent / "lm_eval_tasks"
SOURCE = "lm_eval"


class LmEvalError(EvalRunError):
    """lm-eval could not run the task; the message says what failed and how to fix it."""


class LmEvalEval:
    """One lm-eval task (or group) run against the cell's server."""

    answer_kinds: tuple[AnswerKind, ...] = ANSWER_KINDS
    graded = True
    shape: RunShape = HARNESS

    def __init__(self, name: str, conf: EvalConf) -> None:
        """Check the config and that lm-eval knows the task; see ``evals.base.make_eval``."""
        _check_conf(name, conf)
        self.name = name
        self.label = conf.label or f"lm-eval {conf.dataset.path}"
        self.conf = conf
        self.task = conf.dataset.path
        self.include = [str(TASKS_DIR)] + ([conf.dataset.subset] if conf.dataset.subset else [])
        self._manager = self._find_task()
        self._loaded: dict[str, Any] | None = None

    def prompts(self) -> list[EvalPrompt]:
        """None: lm-eval builds the prompts itself (``run``)."""
        return []

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Not used: lm-eval grades (``run``)."""
        return None, False

    def answer_key(self) -> list[AnswerKeyEntry]:
        """Answer-key entries for the documents the run will send.

        Each is ``doc_to_text`` with the target when it is a letter or a number; other targets
        are left to the simulated server's generic answer.
        """
        entries = []
        for task in self._tasks().values():
            docs = list(task.eval_docs)[: self.conf.dataset.limit]
            for doc in docs:
                entry = answer_entry(str(task.doc_to_text(doc)), task.doc_to_target(doc))
                if entry is not None:
                    entries.append(entry)
        return entries

    def run(self, target: RequestTarget, samples_dir: Path) -> HarnessRun:
        """Run the task against ``target``; write lm-eval's per-sample log under ``samples_dir``.

        Raises:
            LmEvalError: lm-eval failed (e.g. a request still failing after the retries).
        """
        import lm_eval

        self._tasks()  # the output-type check, before any request
        log = RequestLog()
        model = recording_model_class()(
            log, extra_body(target), **model_args(target), **auth_args(target)
        )
        kwargs = gen_kwargs(target.sampling)
        try:
            results = lm_eval.simple_evaluate(
                model=model, tasks=[self.task], task_manager=self._manager,
                limit=self.conf.dataset.limit, log_samples=True, apply_chat_template=True,
                fewshot_as_multiturn=True, gen_kwargs=dict(kwargs),
                random_seed=self.conf.seed, torch_random_seed=None,
            )  # fmt: skip
        except Exception as exc:  # lm-eval aborts the whole task on one failed request
            raise LmEvalError(
                f"evals.{self.name}: lm-eval task {self.task!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not results:
            raise LmEvalError(f"evals.{self.name}: lm-eval returned no results")
        samples_file = samples_dir / f"lm_eval_{_safe(self.task)}.jsonl"
        _write_samples(samples_file, results.get("samples") or {})
        records, grading = _records(results.get("samples") or {}, log)
        block = _block(self, results, grading, kwargs, model_args(target), samples_file)
        block["requests"] = {"recorded": len(records), "not_joined": len(log.all())}
        return HarnessRun(records, block, all(g["binary"] for g in grading.values()))

    def _find_task(self) -> Any:
        # Our folders alone index in a second; lm-eval's thousands of tasks take far longer.
        manager = task_manager(tuple(self.include), False)
        if self.task in manager.all_tasks:
            return manager
        manager = task_manager(tuple(self.include), True)
        if self.task not in manager.all_tasks:
            near = difflib.get_close_matches(self.task, manager.all_tasks, n=5)
            raise LmEvalError(
                f"evals.{self.name}.dataset.path={self.task!r}: lm-eval has no such task or "
                f"group (searched its tasks and {self.include}); close names: {near}."
            )
        return manager

    def _tasks(self) -> dict[str, Any]:
        if self._loaded is None:
            loaded = self._load_offline_aware()
            for name, task in loaded.items():
                kind = task.get_config("output_type")
                if kind != "generate_until":
                    raise LmEvalError(
                        f"evals.{self.name}: lm-eval task {name!r} is {kind!r}; the "
                        "chat-completions model runs generate_until tasks only (choose the "
                        "task's generative / CoT variant)."
                    )
            self._loaded = loaded
        return self._loaded

    def _load_offline_aware(self) -> dict[str, Any]:
        """lm-eval's tasks; with the hub out of reach, from the cache alone.

        At once, instead of ~23 s of retries per file before the same failure.
        """
        why = hub_unreachable()
        try:
            with cache_only() if why is not None else contextlib.nullcontext():
                return dict(self._manager.load([self.task])["tasks"])
        except Exception as exc:  # datasets raises many types
            if why is None:
                raise
            raise LmEvalError(
                f"evals.{self.name}: lm-eval task {self.task!r}: its dataset is not in this "
                f"node's cache and the hub cannot be asked: {why}. Run this eval once on a "
                "machine with internet and copy its HF cache folder here (or point HF_HOME at "
                "a shared one)"
            ) from exc


@functools.cache
def task_manager(include: tuple[str, ...], with_lm_eval_tasks: bool) -> Any:
    """lm-eval's task index over ``include`` (and its own tasks), built once per process."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=list(include), include_defaults=with_lm_eval_tasks)


def _check_conf(name: str, conf: EvalConf) -> None:
    where = f"evals.{name}"
    if conf.dataset.source != SOURCE:
        raise LmEvalError(
            f"{where}.dataset.source={conf.dataset.source!r}: kind lm_eval reads tasks, so use "
            f"dataset.source: {SOURCE} and dataset.path: <task name>."
        )
    if not conf.dataset.path or conf.dataset.path.endswith((".csv", ".jsonl", ".parquet")):
        raise LmEvalError(
            f"{where}.dataset.path={conf.dataset.path!r}: give an lm-eval task name; data "
            f"files belong in a task YAML (see {TASKS_DIR}/mtp_arith_sample/)."
        )
    if conf.repeats != 1:
        raise LmEvalError(
            f"{where}.repeats={conf.repeats}: lm-eval tasks repeat through their YAML "
            "(`repeats:`); leave repeats at 1."
        )
    if conf.dataset.subset and not Path(conf.dataset.subset).is_dir():
        raise LmEvalError(
            f"{where}.dataset.subset={conf.dataset.subset!r}: not a folder of task YAMLs."
        )
    if conf.dataset.limit is not None and conf.dataset.limit < 1:
        raise LmEvalError(f"{where}.dataset.limit={conf.dataset.limit}: use a positive integer.")


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _write_samples(path: Path, samples: dict[str, list[dict[str, Any]]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for task, rows in samples.items():
            for row in rows:
                fh.write(json.dumps(json_safe({"task": task, **row}), allow_nan=False) + "\n")


def _records(
    samples: dict[str, list[dict[str, Any]]], log: RequestLog
) -> tuple[list[SampleJson], dict[str, dict[str, Any]]]:
    records: list[SampleJson] = []
    grading = {}
    for task in sorted(samples):
        task_records, grading[task] = build_records(task, samples[task], log)
        records += task_records
    return records, grading


def _block(
    ev: LmEvalEval,
    results: dict[str, Any],
    grading: dict[str, dict[str, Any]],
    kwargs: GenKwargs,
    args: ModelArgs,
    samples_file: Path,
) -> dict[str, Any]:
    scores = results.get("results") or {}
    primary = {}
    for task, g in grading.items():
        key = f"{g['metric']},{g['filter']}"
        row = scores.get(task) or {}
        stderr_key = f"{g['metric']}_stderr,{g['filter']}"
        primary[task] = {**g, "value": row.get(key), "stderr": row.get(stderr_key)}
    return json_safe({
        "task": ev.task,
        "lm_eval_version": results.get("lm_eval_version"),
        "model": "local-chat-completions (with per-request SGLang statistics recorded)",
        "model_args": args,
        "gen_kwargs": kwargs,
        "limit": ev.conf.dataset.limit,
        "include_path": ev.include,
        "results": scores,
        "groups": results.get("groups") or {},
        "n_shot": results.get("n-shot"),
        "n_samples": results.get("n-samples"),
        "versions": results.get("versions"),
        "primary": primary,
        "samples_file": f"{samples_file.parent.name}/{samples_file.name}",
    })  # fmt: skip


_CHECKED: type[HarnessEval] = LmEvalEval  # mypy checks the class against the eval protocol
