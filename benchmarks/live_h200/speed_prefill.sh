#!/usr/bin/env bash
# speed_prefill.sh: prefill speed of attention-backend variants on a production shape (Llama-3.1-8B,
# dummy weights), measured with SGLang's own offline benchmark, `sglang.benchmark.one_batch` (what
# `python -m sglang.bench_one_batch` runs): the model runner's real prefill path, CUDA graphs at
# SGLang's default, no HTTP or scheduler noise. Run on the GPU host after setup_on_gpu.sh, alone on
# the GPU:
#
#   bash benchmarks/live_h200/speed_prefill.sh OUTDIR
#
# Per block (one process: weights load once): batch 1 at SPEED_LENS tokens, SPEED_REPEATS each
# (3 above 16k), after one_batch's own warm-up. Blocks: fa3 and trtllm_mha (fmha_v2 prefill on
# SM90) at each KV dtype, fa3 again at auto last (the A/A block: it shows drift and the noise
# floor), batch 8 x 1k per variant, and trtllm_mha at 1k with a smaller --mem-fraction-static (a
# per-prefill copy of the whole KV pool, as 0.5.19-0.5.22 do, grows with the pool). GPU clocks,
# power and temperature are sampled every second beside each block. Writes OUTDIR/speed.jsonl
# (one_batch's records, run_name = block), OUTDIR/gpu-<block>.csv, OUTDIR/log-<block>.txt.
set -u
OUT_DIR=${1:?usage: speed_prefill.sh OUTDIR}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODEL=${SPEED_MODEL_DIR:-/tmp/llama3_1_8b}
REPEATS=${SPEED_REPEATS:-5}
LENS=${SPEED_LENS:-1024 4096 16384 65536 131072}
mkdir -p "$OUT_DIR" "$MODEL"
cp "$HERE/shapes/llama3_1_8b/config.json" "$MODEL/"
cp "$HERE"/../results/live-h200/trained-model/target/{tokenizer.json,tokenizer_config.json} "$MODEL/"
export SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1  # 131,072 prompt tokens + 1 output token
# 0.5.23 on torch 2.11: the wheel's Rust radix-tree core misreads torch 2.11 tensors (benchmarks/results/live-h200/first-try-0.5.23/README.md).
export SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python

lens_repeated() {  # every length REPEATS times (3 above 16k: a 128k prefill alone takes ~10 s)
  local l n
  for l in $LENS; do
    n=$REPEATS; (( l > 16384 && n > 3 )) && n=3
    for ((i = 0; i < n; i++)); do printf '%s ' "$l"; done
  done
}

block() {  # NAME BACKEND KV BATCH MEM LENS...
  local name=$1 backend=$2 kv=$3 bs=$4 mem=$5 smi rc; shift 5
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -l 1 > "$OUT_DIR/gpu-$name.csv" 2>/dev/null &
  smi=$!
  echo "[$(date -u +%H:%M:%S)] $name: $backend kv=$kv batch=$bs mem=$mem lens=$*"
  timeout 900 python3 -m sglang.benchmark.one_batch --model-path "$MODEL" --load-format dummy \
    --attention-backend "$backend" --kv-cache-dtype "$kv" --mem-fraction-static "$mem" \
    --context-length 131200 --batch-size "$bs" --input-len "$@" --output-len 1 \
    --run-name "$name" --result-filename "$OUT_DIR/speed.jsonl" > "$OUT_DIR/log-$name.txt" 2>&1
  rc=$?
  kill $smi 2>/dev/null
  echo "[$(date -u +%H:%M:%S)] $name: exit $rc; $(grep -c 'Prefill. latency' "$OUT_DIR/log-$name.txt") prefills"
  grep -h "not contiguous block-aligned\|Traceback\|Error" "$OUT_DIR/log-$name.txt" | sort | uniq -c | head -5
}

read -r -a L <<< "$(lens_repeated)"
read -r -a K1 <<< "$(for ((i = 0; i < REPEATS; i++)); do printf '1024 '; done)"
for kv in ${SPEED_KVS:-auto fp8_e4m3}; do
  for b in ${SPEED_BACKENDS:-fa3 trtllm_mha}; do
    block "$b-$kv" "$b" "$kv" 1 "${SPEED_MEM:-0.85}" "${L[@]}"
    [[ ${SPEED_B8:-1} == 1 ]] && block "$b-$kv-b8" "$b" "$kv" 8 0.85 "${K1[@]}"
  done
done
block trtllm_mha-auto-mem0.5 trtllm_mha auto 1 0.5 "${K1[@]}"
# SPEED_B8=0 / SPEED_AA=0 leave out the 8 x 1k blocks / the A/A block (a short device budget).
[[ ${SPEED_AA:-1} == 1 ]] && block fa3-auto-again fa3 auto 1 0.85 "${L[@]}"
