"""Check the fmha_v2 fix on a GPU in about a minute: bf16, pruned JIT, no FA3.

The probe's H200 runs 1 and 2 measured fmha_v2 errors of 4.5 to 7 because the page pool had the
right shape but strided bytes (``backends/probe/fmha_v2_call.py``). For page 32 and 64, sizes 1x128
and 4x2048 (32 query / 8 KV heads, head dim 128, gaussian inputs, shuffled pages), this calls
``trtllm_fmha_v2_prefill`` on

- the contiguous pool the probe builds now (expected: max abs error ~1e-2 or less vs fp32), and
- the strided pool it built before (expected: errors of several units vs fp32, but ~1e-2 vs fp32
  attention on the keys and values a shape-only reader takes from those bytes: that proves
  the diagnosis),

and prints one line per variant. Exit code 0 when both hold everywhere, 1 otherwise. With ``OUT``
set, the lines also go to ``$OUT/diagnose_fmha_v2.json``.

On the GPU host, from the repo root, with ``.probe-bundle/`` carried (run_on_h200.sh's install
lines; about a minute, most of it the pruned fmha_v2 compile)::

    timeout 200 bash -c 'python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --upgrade --target /tmp/probe-site .probe-bundle/*.whl && \
      PYTHONPATH=$PWD:/tmp/probe-site python3 -m benchmarks.kernel_probe.diagnose_fmha_v2'
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import torch

# None of these imports FlashInfer: it must be imported after _setup_env.
from backends.probe.fmha_v2_call import fmha_v2_kwargs, read_as_fmha_v2
from backends.probe.inputs import AttentionInputs, make_inputs
from backends.probe.kernels import WORKSPACE_BYTES, PagedBatch, kernel_inputs
from backends.probe.metrics import error_metrics
from backends.probe.probe_conf import InputProfile
from backends.probe.prune import PRIVATE_DIR, PRUNE_ENV, private_workspace
from backends.probe.reference import ReferenceResult, reference, sample_blocks

HEADS = (32, 8, 128)  # Llama-3.1-8B on one GPU
SIZES = ((1, 128), (4, 2048))
PAGES = (32, 64)
ATOL = RTOL = 1e-2  # the probe's bf16 tolerance (FlashInfer's own bf16 tests use the same)


def _setup_env() -> None:
    """Prune fmha_v2 to the two kernels called, in the probe's own cache (before the import)."""
    os.environ[PRUNE_ENV] = str(HEADS[2])
    base = os.environ.get("FLASHINFER_WORKSPACE_BASE", "/tmp/flashinfer-ws")
    os.environ["FLASHINFER_WORKSPACE_BASE"] = private_workspace(base)
    Path(os.environ["FLASHINFER_WORKSPACE_BASE"]).mkdir(parents=True, exist_ok=True)


def strided_pool(pool: torch.Tensor) -> torch.Tensor:
    """The pool as the probe built it before the fix: same shape, [pages, page, 2, ...] bytes."""
    pages, two, page, *rest = pool.shape
    old = torch.empty(pages, page, two, *rest, dtype=pool.dtype, device=pool.device)
    return old.transpose(1, 2).copy_(pool)


def misread_inputs(batch: PagedBatch, pool: torch.Tensor) -> AttentionInputs:
    """q, k, v (fp32) as a reader that ignores strides takes them from ``pool``."""
    pages = read_as_fmha_v2(pool)[batch.block_tables.long()]  # [B, P, 2, page, Hkv, D]
    kv = pages.transpose(2, 3).reshape(batch.batch, -1, 2, *pool.shape[3:])[:, : batch.seqlen]
    kv = kv.reshape(-1, 2, *pool.shape[3:]).float()
    return AttentionInputs(batch.q.float(), kv[:, 0], kv[:, 1], batch.batch, batch.seqlen)


def _errors(out: torch.Tensor, ref: ReferenceResult) -> dict:
    m = error_metrics(out[ref.rows].float(), ref.out, ATOL, RTOL)
    return {k: m[k] for k in ("max_abs", "mean_abs", "rel_fro", "rows_beyond_frac")}


def run_variant(batch_size: int, seqlen: int, page: int, device: str = "cuda") -> list[dict]:
    """Both pools of one size and page size: fmha_v2 output against the fp32 references."""
    from flashinfer.prefill import trtllm_fmha_v2_prefill

    x = make_inputs(InputProfile(), batch_size, seqlen, HEADS, seed=7, device=device)
    batch, seen = kernel_inputs(x, "bf16", page, seed=7)
    blocks = sample_blocks(seqlen, seqlen)
    ref = reference(seen, blocks)
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=device)
    out = torch.empty(batch.q.shape, dtype=torch.bfloat16, device=device)
    kwargs = fmha_v2_kwargs(batch, workspace, out, 0.0)
    rows = []
    for name, pool in (("contiguous (fix)", batch.paged_kv), ("strided (old)", None)):
        pool = strided_pool(batch.paged_kv) if pool is None else pool
        out.fill_(float("nan"))  # an element the kernel does not write shows up
        start = time.monotonic()
        trtllm_fmha_v2_prefill(**kwargs | {"qkv": (batch.q, pool)})
        if out.is_cuda:
            torch.cuda.synchronize()
        rec = {"page": page, "size": f"{batch_size}x{seqlen}", "pool": name}
        rec |= {"call_s": round(time.monotonic() - start, 1)} | _errors(out, ref)
        if name.startswith("strided"):
            misread = _errors(out, reference(misread_inputs(batch, pool), blocks))
            rec["max_abs_vs_misread_ref"] = misread["max_abs"]
            rec["rows_beyond_vs_misread_ref"] = misread["rows_beyond_frac"]
        rows.append(rec)
    return rows


def line(rec: dict) -> str:
    """One printed line per variant."""
    head = f"page {rec['page']:>2}  {rec['size']:>6}  pool {rec['pool']:<16}"
    if "error" in rec:
        return f"{head}  ERROR {rec['error']}"
    text = (
        f"{head}  max abs err {rec['max_abs']:.3g}  mean {rec['mean_abs']:.3g}  "
        f"rel {rec['rel_fro']:.3g}  rows beyond tol {rec['rows_beyond_frac']:.3f}"
    )
    if "max_abs_vs_misread_ref" in rec:
        text += f"  | vs fp32 of what a shape-only reader sees: {rec['max_abs_vs_misread_ref']:.3g}"
    return text + f"  [{rec['call_s']} s]"


def verdict(records: list[dict]) -> tuple[bool, str]:
    """Whether the fix holds (contiguous pools pass) and the diagnosis (strided misread) holds."""
    if any("error" in r for r in records) or len(records) != 2 * len(SIZES) * len(PAGES):
        return False, "VERDICT: some variants failed to run; see the lines above"
    fixed = all(r["rows_beyond_frac"] == 0 for r in records if r["pool"].startswith("contig"))
    explained = all(
        r["rows_beyond_vs_misread_ref"] == 0 for r in records if r["pool"].startswith("strided")
    )
    return fixed and explained, (
        f"VERDICT: contiguous pool within bf16 tolerance everywhere: {fixed}; "
        f"strided pool = fp32 attention on its shape-only reading: {explained}"
    )


def main() -> int:
    """Run every variant, print one line each and a verdict; 0 when the fix is confirmed."""
    _setup_env()
    import flashinfer

    from backends.probe.prune import prune_fmha_v2

    torch.backends.cuda.matmul.allow_tf32 = False  # the reference must be true fp32
    pruned = prune_fmha_v2(HEADS[2])
    print(
        f"flashinfer {flashinfer.__version__}, {torch.cuda.get_device_name(0)}, "
        f"pruned JIT {pruned} ({PRIVATE_DIR}), heads {HEADS}",
        flush=True,
    )
    records: list[dict] = []
    for page in PAGES:
        for batch_size, seqlen in SIZES:
            try:
                new = run_variant(batch_size, seqlen, page)
            except Exception as exc:  # report and go on: one run must say as much as it can
                new = [
                    {
                        "page": page,
                        "size": f"{batch_size}x{seqlen}",
                        "pool": "-",
                        "error": f"{type(exc).__name__}: {exc}"[:400],
                    }
                ]
            for rec in new:
                print(line(rec), flush=True)
            records += new
    ok, text = verdict(records)
    print(text, flush=True)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "diagnose_fmha_v2.json").write_text(json.dumps(records, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
