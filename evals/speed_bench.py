"""SPEED-Bench (NVIDIA, 2026): prompts for speculative acceptance, by category and input length.

Two kinds of split, both read through ``datasets`` from the hub id ``nvidia/SPEED-Bench`` or a
local folder with the data (``dataset.source: hf``, ``dataset.path``: the id or the folder):

- ``qualitative``: 11 semantic categories x 80 prompts; each sample's ``meta.category`` is its
  category, so acceptance can be read per category.
- ``throughput_1k`` ... ``throughput_32k``: prompts of one input-length bucket each (entropy tiers
  as categories); one eval per bucket (``conf/evals/speed_bench.yaml``), so each bucket has its
  own accept window and result block, and ``meta.bucket`` names it.

Nothing is graded (SPEED-Bench has no reference answers): accuracy is n/a, and the requests,
tokens and speculative statistics count, as for MT-Bench. The first user turn of each row is
sent. Rows whose text is SPEED-Bench's placeholder (sources it may not redistribute) are refused
with the step that resolves them. ``evals/data/speed_bench_sample.jsonl`` is a sample in the same
columns written by this project for CPU tests: not SPEED-Bench.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from evals.base import AnswerKeyEntry, AnswerKind, Eval, EvalPrompt, QuestionText, RowsEval
from evals.base import question_id as hash_id
from evals.datasets import DatasetError
from evals.eval_conf import EvalConf, SpeedBenchConf
from evals.rows import describe_source, row_error, skip_duplicate

# How SPEED-Bench marks a prompt it does not ship (its loaders test for this prefix).
PLACEHOLDER = "FULL BENCHMARK DATA SHOULD BE FETCHED"
RESOLVE_FIX = (
    "SPEED-Bench ships placeholders for prompts whose sources may not be redistributed: resolve "
    "them with NVIDIA's prepare step (github.com/NVIDIA/Model-Optimizer, examples/specdec_bench), "
    "save the resolved split to a folder and set dataset.path=<that folder>"
)


def first_turn(value: object) -> str | None:
    """The first user turn of a ``turns`` cell: a list of strings or of {role, content}."""
    items = value.tolist() if hasattr(value, "tolist") else value
    if not isinstance(items, list | tuple) or not items:
        return None
    first = items[0]
    if isinstance(first, dict):
        first = first.get("content")
    return first.strip() if isinstance(first, str) and first.strip() else None


class SpeedBenchEval(RowsEval):
    """SPEED-Bench prompts, sent for acceptance; ungraded."""

    graded = False
    answer_kinds: tuple[AnswerKind, ...] = ()
    columns: ClassVar[tuple[str, ...]] = ()  # the column names are settings: checked below

    def __init__(self, name: str, conf: EvalConf, rows: Sequence[dict[str, Any]]) -> None:
        """Keep each row's first turn, id and category (``conf.speed_bench`` names the columns).

        Raises:
            DatasetError: a column is missing, a row holds a placeholder or no turn, or the
                category filter matches no row.
        """
        super().__init__(name, conf)
        self.node = conf.speed_bench or SpeedBenchConf()
        self.prompts_of = self._rows(rows)

    def _rows(self, rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, str]]:
        node, where = self.node, describe_source(self.conf.dataset)
        missing = [c for c in (node.turns_column, node.category_column) if c not in rows[0]]
        if missing:
            raise DatasetError(
                f"{where}: no column {missing} (found {sorted(rows[0])}): set "
                f"evals.{self.name}.speed_bench.turns_column / category_column to this split's"
            )
        out: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for number, row in enumerate(rows, start=1):
            category = str(row.get(node.category_column) or "")
            if node.category is not None and category != node.category:
                continue
            text = first_turn(row[node.turns_column])
            if text is None or text.startswith(PLACEHOLDER):
                problem = "holds a placeholder" if text else "has no user turn"
                raise row_error(self.conf.dataset, number, node.turns_column, problem, RESOLVE_FIX)
            qid = str(row.get(node.id_column) or hash_id(text))
            if not skip_duplicate(seen, qid, self.name, number):
                out.append((qid, category, text))
        if not out:
            raise DatasetError(f"{where}: no row of category {node.category!r}")
        return out

    def prompts(self) -> list[EvalPrompt]:
        """Every row's first turn at every repeat; ``meta`` holds its category and bucket."""
        return [
            EvalPrompt(
                question_id=qid,
                repeat=repeat,
                messages=[{"role": "user", "content": text}],
                answer="",
                meta={"category": category, "bucket": self.node.bucket},
                question=QuestionText(text),
            )
            for repeat in range(self.conf.repeats)
            for qid, category, text in self.prompts_of
        ]

    def grade(self, prompt: EvalPrompt, content: str | None) -> tuple[str | None, bool]:
        """Not graded: nothing is extracted."""
        return None, False

    def answer_key(self) -> list[AnswerKeyEntry]:
        """None: the simulated server answers every prompt with filler."""
        return []


_CHECKED: type[Eval] = SpeedBenchEval
