#!/usr/bin/env bash
# ONE command for a GPU host, from the repo root, with the wheels of make_probe_bundle.sh in
# .probe-bundle/: installs them beside the host's torch, runs mtp-eval-probe's quick grid within
# a time budget and leaves everything in $OUT (at most 8 files, none in sub-folders):
#   probe.json probe.md error_vs_factor.png speed_vs_factor.png ratio_vs_size.png jit_log.txt log.txt
# Knobs (environment): OUT (default outputs/kernel-probe), PROBE_BUDGET_S (default 400: the grid
# stops starting points then; the whole script ends within about 9 minutes), PROBE_GRID (quick),
# PROBE_MODEL (llama3_1_8b_eagle3: 32 query / 8 KV heads, head dim 128, page 64), PROBE_GPU_TESTS=1
# (also run tests/gpu/test_probe_gpu.py, into log.txt); extra arguments are passed to
# mtp-eval-probe as Hydra overrides.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/outputs/kernel-probe}
BUDGET=${PROBE_BUDGET_S:-400}
GRID=${PROBE_GRID:-quick}
MODEL=${PROBE_MODEL:-llama3_1_8b_eagle3}
SITE=${PROBE_SITE:-/tmp/probe-site}
mkdir -p "$OUT"

model_args() {
  if [ -f "conf/model/$MODEL.yaml" ]; then
    echo "model=$MODEL"
  else  # the same geometry on the always-present tiny model config
    echo "model=tiny_sim model.name=llama-3.1-8b-geometry model.attention.num_heads=32" \
         "model.attention.num_kv_heads=8 model.attention.head_dim=128 model.attention.page_size=64"
  fi
}

main() {
  echo "== $(date -u +%FT%TZ) kernel probe: grid $GRID, budget ${BUDGET}s, out $OUT"
  ls .probe-bundle/*.whl >/dev/null 2>&1 || { echo "no .probe-bundle/*.whl: run make_probe_bundle.sh and carry .probe-bundle"; return 3; }
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" .probe-bundle/*.whl || { echo "wheel install failed"; return 3; }
  export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"
  export FLASHINFER_WORKSPACE_BASE=${FLASHINFER_WORKSPACE_BASE:-/tmp/flashinfer-ws}
  export PYTHONUNBUFFERED=1
  mkdir -p "$FLASHINFER_WORKSPACE_BASE"
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
  nproc; free -g | head -2
  python3 -c "import sys, torch, flashinfer; print(sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'flashinfer', flashinfer.__version__)"
  (nvcc --version || true) | tail -1
  # shellcheck disable=SC2046
  timeout --signal=TERM --kill-after=15 $((BUDGET + 100)) \
    python3 -m pipeline.cli.probe $(model_args) "probe=$GRID" "probe.budget_s=$BUDGET" \
      "probe.out_dir=$OUT" hydra.run.dir=/tmp/probe-hydra "$@"
  local rc=$?
  echo "== mtp-eval-probe exit code $rc"
  if [ -f "$OUT/probe.json" ] && { [ "$rc" -ge 124 ] || [ ! -f "$OUT/probe.md" ]; }; then
    echo "== rebuilding the report from probe.json"
    python3 -m backends.probe.report "$OUT/probe.json" "$OUT" || true
  fi
  if [ "${PROBE_GPU_TESTS:-0}" = 1 ]; then  # the gpu-marked tests, on the modules just compiled
    echo "== tests/gpu/test_probe_gpu.py"
    MTP_EVAL_PROBE_FMHA_V2_HEAD_DIM=128 \
      FLASHINFER_WORKSPACE_BASE="$FLASHINFER_WORKSPACE_BASE/mtp-eval-probe-jit" \
      timeout 300 python3 -m pytest tests/gpu/test_probe_gpu.py -q -p no:cacheprovider -m gpu || true
  fi
  rm -f "$OUT"/*.tmp
  ls -l "$OUT"
  [ -f "$OUT/probe.md" ] && sed -n '/## Published claims/,/## fmha_v2 and FA3/p' "$OUT/probe.md"
  return "$rc"
}

main "$@" 2>&1 | tee "$OUT/log.txt"
exit "${PIPESTATUS[0]}"
