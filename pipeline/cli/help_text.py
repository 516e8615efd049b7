"""The ``--help`` pages of ``mtp-eval`` and ``mtp-eval-probe`` (Hydra's own: ``--hydra-help``).

Hydra's default page lists its own flags and a config dump; a user's first question is what the
command does, how it is usually called and where its results land. The config groups are read
from the config folders, so a new ``conf/backend/*.yaml`` shows up without editing this text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from pipeline.config.group_choices import config_dirs, group_options

_WIDTH = 96
MTP_EVAL = """\
mtp-eval: measure one cell (or, with -m, a sweep of cells) of an SGLang attention backend:
launch the server (SGLang, or the simulated one), check it runs what was asked, run the evals
with per-request speculative statistics, and write result.json and samples/ per cell. Then
mtp-eval-report pairs variants with their baselines and says GO / NO-GO / INCONCLUSIVE.

Usage: mtp-eval [-m] [GROUP=CHOICE ...] [key=value ...]

Common commands:
  mtp-eval                                        one cell: simulated server, bundled sample
  mtp-eval server=sglang model=llama3_1_8b_eagle3 backend=fmha_v2 evals=[gpqa_diamond]
  mtp-eval -m backend=fmha_v2,fa3 kv_dtype=auto,fp8_e4m3       a sweep: one cell per combination
  mtp-eval -m backend=fmha_v2,fa3 dry_run=true     each cell's argv, env and pre-flight only
  mtp-eval experiment=demo                          the 4-cell demo sweep (no GPU)
  mtp-eval-report outputs/multirun/<time>           judge a sweep (exit 0 GO, 1 NO-GO, 2 undecided)
  mtp-eval-signoff model=qwen3_next_80b_a3b         the release sign-off: sweep + report

Where results go:
  one cell   outputs/runs/<time>_<model>_<backend>_<kv dtype>/      (hydra.run.dir=DIR)
  a sweep    outputs/multirun/<time>/<n>_<model>_<backend>_<kv dtype>_<skip-softmax>/
             (hydra.sweep.dir=DIR; the same folder again resumes it)
  each cell folder holds result.json, samples/<eval>.jsonl and server.log

Exit codes: 0 every cell produced its result; 1 a cell failed (the others' results are kept);
2 a value, key, group choice or pre-flight problem stopped it before any cell; 130 Ctrl-C.
Config groups pick a file of conf/<group>/ (evals takes a list: evals=[gpqa_diamond,mmlu]).

Other help: --cfg job prints the composed config; --hydra-help lists Hydra's own flags;
README.md is the user's guide.
"""

PROBE = """\
mtp-eval-probe: the kernel parity probe (GPU only). Calls FlashInfer's fmha_v2 prefill (SGLang's
trtllm_mha on SM90) and FA3 on the attention geometry of the composed model, checks both against
an fp32 reference and times them; exit 0 every kernel within tolerance, 1 a kernel failed, 2 it
cannot run here (no GPU, no FlashInfer, a bad value).

Usage: mtp-eval-probe [GROUP=CHOICE ...] [key=value ...]

Common commands:
  mtp-eval-probe model=llama3_1_8b_eagle3 probe=quick probe.budget_s=420
  mtp-eval-probe kv_dtype=fp8_e4m3 probe=full skip_softmax.prefill=0.5
  mtp-eval-probe probe=quick --cfg job          the composed config; nothing runs

Where results go: probe.json, probe.md and the plots, in probe.out_dir (default Hydra's run
folder, outputs/<date>/<time>/; hydra.run.dir=DIR to choose it).

Other help: --hydra-help lists Hydra's own flags; conf/probe.yaml documents every probe.* key.
"""


def wants_help(argv: Sequence[str]) -> bool:
    """Whether the command line asks for the help page (``--help`` or ``-h``)."""
    return any(arg in ("--help", "-h") for arg in argv)


def help_page(text: str, groups: Sequence[str], argv: Sequence[str] = ()) -> str:
    """``text`` followed by each config group and its choices (from the config folders)."""
    dirs = config_dirs(argv)
    lines = [
        textwrap.fill(
            ", ".join(group_options(group, dirs)),
            width=_WIDTH,
            initial_indent=f"  {group:<15} ",
            subsequent_indent=" " * 18,
        )
        for group in groups
    ]
    return text + "\nConfig groups and their choices:\n" + "\n".join(lines)
