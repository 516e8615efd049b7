"""Read each compatibility rule's message and the code facts under them from the released wheels.

    python -m benchmarks.sglang_rules.read_wheels [--cache .wheels-cache] [--download] [--write]

The wheels are zip files: nothing is installed or imported from them. Each rule of
``backends.compat_rules.RULES`` names the wheel file its message comes from (``Rule.source``);
the message is looked for among that file's string literals (adjacent literals joined as Python
joins them, f-string fields as gaps) in every SGLang release, or in the FlashInfer release that
SGLang release pins. ``--write`` writes ``benchmarks/results/sglang-rules.md`` and ``.json``
(the JSON is what ``tests/unit/test_sglang_wheel_rules.py`` holds the rules to), so that a new
release is a diff of those files. ``--download`` fetches missing wheels with ``pip download
--no-deps`` (about 170 MB for SGLang, 250 MB for FlashInfer).
"""

from __future__ import annotations

import argparse
import ast
import json
import platform
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from backends.compat_rules import RULES
from backends.rule import Rule
from backends.server_info import LATEST

SGLANG = ("0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")
FLASHINFER = ("0.6.18", "0.7.1", "0.7.2", "0.7.4")
RESULTS = Path(__file__).resolve().parents[1] / "results"
# Messages SGLang builds from a variable where the rule has the value written out: the fragments
# that are literal in the source.
NEEDLES = {
    "ragged_verify_mode_invalid": ("invalid SGLANG_RAGGED_VERIFY_MODE=", "; expected one of "),
    "page_tree_spec_backends": (
        "speculative_eagle_topk > 1 with page_size > 1 is only supported on ",
        "; got attention_backend=",
    ),
    "deterministic_backend": (
        "Currently only ",
        " attention backends are supported for deterministic inference, but you explicitly "
        "specified '",
    ),
}
NO_TEXT = frozenset({"", "AssertionError"})  # a bare assert or a silent rule: nothing to look for
_PIN = re.compile(
    r"^Requires-Dist: (flashinfer[-_]python|sglang[-_]kernel|torch)"
    r"(?:\[[^\]]*\])?\s*([=<>!~]=?[^;\s]+)"  # an extra such as [cu13] may sit before the pin
)


class Wheel:
    """One wheel, read as a zip archive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        self.names = set(self.zip.namelist())

    @cache  # noqa: B019 (a few wheels per run, each kept for the run)
    def text(self, name: str) -> str | None:
        """The file's text, None when the wheel has no such file."""
        return self.zip.read(name).decode() if name in self.names else None

    @cache  # noqa: B019
    def tree(self, name: str) -> ast.Module | None:
        """The file parsed, None when absent."""
        text = self.text(name)
        return None if text is None else ast.parse(text)

    @cache  # noqa: B019
    def literals(self, name: str) -> tuple[str, ...]:
        """Every string literal of the file; an f-string's fields become NUL gaps."""
        tree = self.tree(name)
        return () if tree is None else tuple(_strings(tree))

    @cache  # noqa: B019
    def sources(self, prefix: str) -> str:
        """Every .py file under ``prefix``, concatenated."""
        names = sorted(n for n in self.names if n.startswith(prefix) and n.endswith(".py"))
        return "\n".join(self.text(n) or "" for n in names)

    def pins(self) -> dict[str, str]:
        """``Requires-Dist`` pins of flashinfer-python, sglang-kernel and torch."""
        meta = next(n for n in self.names if n.endswith(".dist-info/METADATA"))
        found: dict[str, str] = {}
        for line in (self.text(meta) or "").splitlines():
            if match := _PIN.match(line):
                found[match.group(1).replace("_", "-")] = match.group(2)
        return found


def _strings(tree: ast.AST) -> list[str]:
    inside_fstring = {
        id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values
    }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            out.append(
                "".join(v.value if isinstance(v, ast.Constant) else "\0" for v in node.values)
            )
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside_fstring
        ):
            out.append(node.value)
    return out


def needles(rule_id: str, message: str) -> tuple[str, ...]:
    """The fragments of a rule message that must each sit inside one literal of its source."""
    if rule_id in NEEDLES:
        return NEEDLES[rule_id]
    return tuple(p for p in re.split(r"\{[^}]*\}", message) if len(p.strip()) >= 6)


def has_message(wheel: Wheel, name: str, parts: tuple[str, ...]) -> bool:
    """Whether every fragment occurs inside some string literal of ``name``."""
    literals = wheel.literals(name)
    return bool(literals) and all(any(p in lit for lit in literals) for p in parts)


def where(wheel: Wheel, parts: tuple[str, ...]) -> list[str]:
    """Every .py file of the wheel whose literals hold all fragments (slow: for --discover)."""
    head = parts[0][:20]
    return sorted(
        n for n in wheel.names
        if n.endswith(".py") and head in (wheel.text(n) or "").replace('"\n', "")
        and has_message(wheel, n, parts)
    )  # fmt: skip


# Code facts the rules stand on, each read per wheel.
def xqa_mask(wheel: Wheel) -> str:
    """When SGLang's trtllm_mha passes XQA its speculative-decoding mask."""
    tree = wheel.tree("sglang/srt/layers/attention/trtllm_mha_backend.py")
    for node in ast.walk(tree) if tree else ():
        body = node.body if isinstance(node, ast.IfExp) else None
        if isinstance(body, ast.Attribute) and body.attr == "_xqa_spec_dec_mask":
            test = ast.unparse(node.test)
            return "target-verify only" if "is_target_verify" in test else "every q_len > 1"
    return "never"


def draft_extend_backend(wheel: Wheel) -> str:
    """What the draft worker's draft-extend backend is (DraftBackendFactory._create_backend)."""
    text = wheel.text("sglang/srt/speculative/draft_utils.py") or ""
    flag = "self.draft_attn_backend or configured" in text
    mode = 'speculative_attention_mode == "decode"' in text
    return "draft flag, else by attention mode" if flag and mode else "not found"


def spec_aliases(wheel: Wheel) -> str:
    """Whether meta_info still carries spec_accepted_drafts / spec_accept_histogram."""
    literals = wheel.literals("sglang/srt/managers/tokenizer_manager.py")
    keys = ("spec_accepted_drafts", "spec_proposed_drafts", "spec_accept_histogram")
    return "present" if all(k in literals for k in keys) else "absent"


def ragged_verify_algorithms(wheel: Wheel) -> str:
    """``SpeculativeAlgorithm.supports_ragged_verify``'s return expression."""
    tree = wheel.tree("sglang/srt/speculative/spec_info.py")
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.FunctionDef) and node.name == "supports_ragged_verify":
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
            return "; ".join(ast.unparse(r.value) for r in returns if r.value)
    return "not found"


def fp8_checkpoint_auto(wheel: Wheel) -> str:
    """Whether ``--kv-cache-dtype auto`` reads the checkpoint's kv_cache_quant_algo."""
    text = wheel.text("sglang/srt/mem_cache/kv_cache_dtype.py") or ""
    return "reads kv_cache_quant_algo" if "kv_cache_quant_algo" in text else "not found"


def fmha_v2_input(wheel: Wheel) -> str:
    """How fmha_v2 prefill gets its K/V: a whole-pool copy or the zero-copy HND input."""
    text = wheel.text("sglang/srt/layers/attention/trtllm_mha_backend.py") or ""
    if "Q_PAGED_KV_HND" in text:
        return "zero-copy Q_PAGED_KV_HND (copies the batch's pages when it must)"
    return "whole-pool torch.stack" if "torch.stack([k_cache, v_cache], dim=1)" in text else "?"


def server_info_keys(wheel: Wheel) -> str:
    """Whether the ``/server_info`` keys and ``/metrics`` names this project reads are in srt/."""
    metrics = LATEST.metrics
    names = [LATEST.version, LATEST.dp_size, LATEST.states, LATEST.accept_length,
             LATEST.running_limit, LATEST.env_vars, metrics.rank_label]  # fmt: skip
    names += [metrics.generation_tokens, metrics.verify_calls, metrics.requests, metrics.running]
    text = wheel.sources("sglang/srt/")
    missing = [n for n in names if f'"{n}"' not in text and f"'{n}'" not in text]
    return "all present" if not missing else "missing: " + ", ".join(missing)


def sm120_fp8_check(wheel: Wheel) -> str:
    """What SGLang's start-up check of fmha_v2 on SM120 reads (the test that raises its message)."""
    tree = wheel.tree("sglang/srt/arg_groups/attention_hook.py")
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.If) and "does not support fp8_e4m3 KV" in ast.unparse(node.body[0]):
            return ast.unparse(node.test)
    return "not found"


_XQA_DECODE = "xqa_batch_decode_with_kv_cache"


def xqa_skip_softmax(wheel: Wheel) -> str:
    """Whether trtllm_batch_decode_with_kv_cache forwards the skip-softmax factor to XQA."""
    tree = wheel.tree("flashinfer/decode.py")
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.FunctionDef) and node.name == "trtllm_batch_decode_with_kv_cache":
            calls = [
                c for c in ast.walk(node)
                if isinstance(c, ast.Call) and ast.unparse(c.func) == _XQA_DECODE
            ]  # fmt: skip
            kwargs = {k.arg for c in calls for k in c.keywords}
            if calls:
                return "forwarded" if "skip_softmax_threshold_scale_factor" in kwargs else "dropped"
    return "not found"


SGLANG_FACTS: dict[str, Callable[[Wheel], str]] = {
    "xqa_mask": xqa_mask,
    "draft_extend_backend": draft_extend_backend,
    "spec_aliases": spec_aliases,
    "ragged_verify_algorithms": ragged_verify_algorithms,
    "fp8_checkpoint_auto": fp8_checkpoint_auto,
    "fmha_v2_input": fmha_v2_input,
    "sm120_fp8_check": sm120_fp8_check,
    "server_info_keys": server_info_keys,
}
FLASHINFER_FACTS: dict[str, Callable[[Wheel], str]] = {"xqa_skip_softmax": xqa_skip_softmax}


def wheel_path(cache_dir: Path, package: str, version: str, download: bool) -> Path:
    """The cached wheel of ``package==version``, fetched first with ``download``."""
    stem = package.replace("-", "_")
    found = sorted(cache_dir.glob(f"{stem}-{version}-*.whl"))
    if not found and download:
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(cache_dir)]
        subprocess.run([*pip, f"{package}=={version}"], check=True)
        found = sorted(cache_dir.glob(f"{stem}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"{cache_dir}: no {package} {version} wheel; rerun with --download")
    return found[0]


def read_rule(group: list[Rule], sg: dict[str, Wheel], fi: dict[str, Wheel], pinned: dict) -> dict:
    """Where the message of rules of one id and text is found: per SGLang, FlashInfer ahead."""
    rule = group[0]
    parts = needles(rule.id, rule.message)
    in_flashinfer = rule.source.startswith("flashinfer/")
    found = {}
    for v in SGLANG:
        wheel = fi.get(pinned[v]) if in_flashinfer else sg[v]
        found[v] = wheel is not None and has_message(wheel, rule.source, parts)
    # FlashInfer releases no SGLang pins yet (0.7.4): read too, for the next SGLang.
    ahead = {
        v: in_flashinfer and has_message(fi[v], rule.source, parts)
        for v in FLASHINFER
        if v not in pinned.values()
    }
    # The project's ranges, since <= v < until: one rule split by version has several.
    holds = ", ".join(f"{r.since or ''}..{r.until or ''}" for r in group)
    return {"id": rule.id, "outcome": rule.outcome, "holds": holds, "message": rule.message,
            "source": rule.source, "found": found, "flashinfer_unpinned": ahead}  # fmt: skip


def read_all(cache_dir: Path, download: bool) -> dict:
    """Pins, rule presence and facts per release."""
    sg = {v: Wheel(wheel_path(cache_dir, "sglang", v, download)) for v in SGLANG}
    fi = {v: Wheel(wheel_path(cache_dir, "flashinfer-python", v, download)) for v in FLASHINFER}
    pins = {v: w.pins() for v, w in sg.items()}
    pinned = {v: pins[v].get("flashinfer-python", "").lstrip("=") for v in SGLANG}
    groups: dict[tuple[str, str], list[Rule]] = {}
    for rule in RULES:
        if rule.message not in NO_TEXT:
            groups.setdefault((rule.id, rule.message), []).append(rule)
    rules = [read_rule(group, sg, fi, pinned) for group in groups.values()]
    facts = {k: {v: f(sg[v]) for v in SGLANG} for k, f in SGLANG_FACTS.items()}
    facts |= {k: {v: f(fi[v]) for v in FLASHINFER} for k, f in FLASHINFER_FACTS.items()}
    return {"sglang": list(SGLANG), "flashinfer": list(FLASHINFER), "pins": pins,
            "rules": rules, "facts": facts}  # fmt: skip


def markdown(data: dict) -> str:
    """The tables of ``read_all``'s result."""
    rel = data["sglang"]
    lines = ["# SGLang rules read from the wheels", "",
             "Written by `python -m benchmarks.sglang_rules.read_wheels --write` (no machine or "
             "time in it, so that a new release shows as a diff). A rule's message is looked for "
             "in its `source` file's string literals (FlashInfer files: in the FlashInfer release "
             "that SGLang release pins). `yes`: found.", "",
             "## Pins (`Requires-Dist`)", "",
             "| SGLang | flashinfer-python | sglang-kernel | torch |",
             "|---|---|---|---|"]  # fmt: skip
    for v in rel:
        p = data["pins"][v]
        lines.append(f"| {v} | {p.get('flashinfer-python', '')} | {p.get('sglang-kernel', '')} "
                     f"| {p.get('torch', '')} |")  # fmt: skip
    ahead = list(data["rules"][0]["flashinfer_unpinned"]) if data["rules"] else []
    heads = [*rel, *(f"FlashInfer {v} (pinned by none)" for v in ahead)]
    lines += ["", "## Rule messages", "",
              "`holds`: the SGLang versions the project applies the rule to (`since..until`, "
              "until excluded).", "",
              "| rule | outcome | holds | source | " + " | ".join(heads) + " |",
              "|---|---|---|---|" + "---|" * len(heads)]  # fmt: skip
    for r in data["rules"]:
        marks = ["yes" if r["found"][v] else "-" for v in rel]
        fi_file = r["source"].startswith("flashinfer/")
        marks += [("yes" if r["flashinfer_unpinned"][v] else "-") if fi_file else "" for v in ahead]
        head = f"| `{r['id']}` | {r['outcome']} | {r['holds']} | `{r['source']}` |"
        lines.append(f"{head} {' | '.join(marks)} |")
    lines += ["", "## Facts the rules stand on", ""]
    for key, values in data["facts"].items():
        doc = (SGLANG_FACTS | FLASHINFER_FACTS)[key].__doc__ or ""
        same = len(set(values.values())) == 1
        cells = "; ".join(f"{v}: {val}" for v, val in values.items())
        cells = (
            f"every release read ({', '.join(values)}): {next(iter(values.values()))}"
            if same
            else cells
        )
        lines.append(f"- `{key}` ({doc.strip()}): {cells}")
    lines += ["", "## Messages", ""]
    lines += [f'- `{r["id"]}`: "{r["message"]}"' for r in data["rules"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Read the wheels, print the tables; ``--write`` stores them under benchmarks/results/."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(".wheels-cache"))
    parser.add_argument("--download", action="store_true", help="pip download missing wheels")
    parser.add_argument("--write", action="store_true", help="write results/sglang-rules.*")
    parser.add_argument("--discover", metavar="RULE", help="list every file holding RULE's message")
    args = parser.parse_args(argv)
    if args.discover:
        rule = next(r for r in RULES if r.id == args.discover)
        package = (
            "sglang" if rule.source.startswith("sglang") or not rule.source else "flashinfer-python"
        )
        for v in SGLANG if package == "sglang" else FLASHINFER:
            wheel = Wheel(wheel_path(args.cache, package, v, args.download))
            print(v, where(wheel, needles(rule.id, rule.message)))
        return 0
    start = time.perf_counter()
    data = read_all(args.cache, args.download)
    text = markdown(data)
    print(text)
    print(f"read in {time.perf_counter() - start:.0f} s on {platform.node()}", file=sys.stderr)
    if args.write:
        (RESULTS / "sglang-rules.md").write_text(text)
        (RESULTS / "sglang-rules.json").write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
