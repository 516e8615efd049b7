#!/usr/bin/env bash
# live_signoff.sh: the live release sign-off on the lent H200, as a chain of device
# calls that each run the same command from the repo root:
#
#   bash benchmarks/live_h200/live_signoff.sh tick WAIT_S     (carry: the chunks of this call)
#
# The machine keeps /tmp only while warm (30 s after a call), so the calls run back to back and the
# work runs detached (setsid) between them. Each tick stages the chunks it carried, starts every
# phase whose inputs are there, waits up to WAIT_S seconds (less once the report is written),
# prints the state and copies the logs and results to $OUT. Phases (state in /tmp/live/state):
#   hf         machine python (transformers 5.17): HF greedy reference of the check prompts, then
#              skip_fraction.py on every long-context prompt, which picks the moderate and
#              aggressive skip-softmax factors (needs only the repo: starts on the first call);
#   warm-*     once the site archive is unpacked: one bare SGLang server per FlashInfer-JIT
#              configuration (fmha_v2_fi and flashinfer, bf16 and fp8 KV), started in parallel so
#              their compiles overlap; each compares its greedy output with HF's and times each
#              long prompt's prefill alone, then stops;
#   base-*     once FA3 is installed: the fa3 baseline cells (auto and fp8_e4m3 KV, all repeats),
#              and warm-fa3 / warm-fmha_v2 (greedy check of the fa3 and fa3-verify routes);
#   s-*        once the baselines and the factors exist: the candidate sweeps in parallel, each
#              paired with its KV dtype's fa3 cell by sequential stopping (sequential.baseline_dir);
#   report     mtp-eval-report over every sweep folder, then one archive of all outputs.
# LIVE_PLAN=two-gpu (on nvidia-h200-x2) runs other phases once FA3 is installed,
# all at once, each a fixed design of LIVE_REPEATS repeats (no sequential stopping):
#   g-auto     fa3 and fa3_repeat as two parallel local jobs (hydra/launcher=local), server.gpus=auto
#              giving each its own GPU: the baseline, and an A/A across the two GPUs;
#   g-tp2      fa3_repeat at model.tp=2 (one SGLang server over both GPUs);
#   g-nodes    fa3_repeat at model.tp=2 through the multi-node path: cluster.nodes=2 as two local
#              tasks, each an SGLang node (--nnodes 2, node 0 serving) on its own GPU;
#   report     mtp-eval-report over the three: each candidate paired with g-auto's fa3 cell.
# LIVE_PLAN=v23: the same sign-off on SGLang 0.5.23 with CUDA graphs on (start_v23 says what differs).
# LIVE_PLAN=two-gpu-fmha: the kernel under test on two GPUs, fmha_v2 (g2-v2) against fa3 (g2-base),
# both at model.tp=2, then their report.
# Cells share the GPU: SGLang sizes its KV pool from the memory free when it starts, so each
# server gets --max-total-tokens and a mem_fraction_static high enough that servers starting
# together cannot starve each other.
set -u
LIVE=${LIVE:-/tmp/live}
STATE=$LIVE/state
R=${MTP_REPO:-/tmp/mtp-repo}
SELF=$(readlink -f "$0")
# A rehearsal on a CPU machine: LIVE_SERVER=simulated LIVE_HF_PYTHON=<a python with torch and
# transformers> LIVE_REPEATS=2 LIVE_SKIP_LIMIT=1 (the same phases against the simulated server).
SERVER_KIND=${LIVE_SERVER:-sglang}
HF_PY=${LIVE_HF_PYTHON:-python3}
N=${LIVE_REPEATS:-8}
# The release the carried bundle holds (LIVE_PLAN=v23 needs the 0.5.23 bundle: wheels-0.5.23.txt).
SGLANG=${LIVE_SGLANG:-0.5.19}
[[ ${LIVE_PLAN:-signoff} == v23 || ${LIVE_PLAN:-} == speed || ${LIVE_PLAN:-} == dependence \
  || ${LIVE_PLAN:-} == serving || ${LIVE_PLAN:-} == train-longctx || ${LIVE_PLAN:-} == longctx-cell \
  || ${LIVE_PLAN:-} == parity || ${LIVE_PLAN:-} == longctx-frontier ]] \
  && SGLANG=${LIVE_SGLANG:-0.5.23}
# The carried bundle's release must be the plan's: a phase run without LIVE_PLAN against a 0.5.23
# bundle planned for 0.5.19 and its servers died on their first request (issue 41). Checked before
# anything starts; lease_ready.py checks the same on the CPU machine before the lease.
if [[ $SERVER_KIND != simulated ]]; then
  carried=$(ls -1 "${MTP_CHUNKS:-/tmp/mtp-chunks}"/sgl-site-*.manifest .gpu-bundle/sgl-site-*.manifest \
    2>/dev/null | sed -n 's/.*sgl-site-\([0-9][0-9.]*[0-9]\)\.tar.*/\1/p' | sort -u | tr '\n' ' ')
  if [[ -n $carried && ${carried% } != "$SGLANG" ]]; then
    echo "live_signoff: LIVE_PLAN=${LIVE_PLAN:-signoff} plans SGLang $SGLANG, the carried bundle is" \
      "SGLang ${carried% }: set LIVE_PLAN to a plan of that release or LIVE_SGLANG=${carried% }" >&2
    exit 2
  fi
fi
# A rehearsal's simulated server imitates the release the plan is for (its default is 0.5.19).
SIM_ARGS=()
[[ $SERVER_KIND == simulated ]] && SIM_ARGS=(server.simulated.sglang_version=$SGLANG)
# What every cell and warm-up server of the sign-off shares (one place: the report pairs them).
EXTRA_ARGS=--sampling-backend,pytorch,--max-total-tokens,1000000
# The 0.5.19 bundle has no deep_gemm, which SGLang 0.5.19 imports when it captures CUDA graphs.
[[ $SGLANG == 0.5.19 ]] && EXTRA_ARGS+=,--disable-cuda-graph
COMMON=(model=synth_llama server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200 "${SIM_ARGS[@]}"
  server.mem_fraction_static=0.6 server.max_running_requests=128 client.concurrency=128
  "server.extra_args=[$EXTRA_ARGS]"
  server.startup_timeout_s=1500 server.stop_grace_s=20
  model.sampling.temperature=0.6 'evals=[synth_mcq,synth_arith,synth_retrieval]'
  evals.synth_mcq.repeats=$N evals.synth_arith.repeats=$N evals.synth_retrieval.repeats=$N
  sequential.enabled=true sequential.max_repeats=$N sequential.repeats_per_round=2)
# The 0.5.23 wheel's Rust radix-tree core is built against torch 2.14 and misreads torch 2.11's
# int64 tensors ("insert value must be an int64 tensor, got Uint8" on the first prefill, every
# backend, 2026-12-01): SGLang's own pure-Python tree core takes its place on the H200.
[[ $SGLANG == 0.5.23 ]] && COMMON+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python)

# The two-GPU cells: COMMON less sequential stopping, on a two-GPU host. The two nodes of
# g-nodes share one host: SGLang disables its custom all-reduce by itself only across hosts, so
# the flag keeps them on the NCCL path a two-host run takes (benchmarks/results/live-h200/two-gpu/README.md).
TWO_GPU=("${COMMON[@]}" sequential.enabled=false gpu.count=2 kv_dtype=auto)
NODES_ARGS="server.extra_args=[$EXTRA_ARGS,--disable-custom-all-reduce]"

log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LIVE/logs/ticks.log"; }
has() { [[ -f $STATE/$1.$2 ]]; }

# Run "$SELF phase ARGS" detached under NAME; its exit status lands in $STATE/NAME.rc.
launch() {
  local name=$1; shift
  has "$name" started && return 0
  touch "$STATE/$name.started"
  cp "$SELF" "$LIVE/bin/$name.sh"   # the phase reads a frozen copy: later ticks may update $SELF
  setsid nohup bash -c "bash '$LIVE/bin/$name.sh' $*; echo \$? > '$STATE/$name.rc'" \
    > "$LIVE/logs/$name.log" 2>&1 < /dev/null &
  log "started $name ($*)"
}

# What a tick never copies into $R: the bundles (staged apart), outputs (they stay in $R), and a
# checkout's own tools (a rehearsal's 2.3-GB .venv was copied on every tick; the host has none).
SYNC_EXCLUDES=(.gpu-bundle .gpu-bundle-cache outputs .git .venv .mypy_cache .ruff_cache
               .pytest_cache .hypothesis)
sync_repo() {  # the call's copy of the repo -> $R (code only; outputs stay)
  mkdir -p "$R"
  tar -C "$1" "${SYNC_EXCLUDES[@]/#/--exclude=./}" -cf - . | tar -C "$R" -xf -
  # LIVE_CODE_TAR (a path under the call's copy, carried once: git archive of MTP_EVAL_COMMIT's
  # code): the code comes from that commit, not from a working tree that may hold unfinished edits
  [[ -z ${LIVE_CODE_TAR:-} ]] || tar -C "$R" -xzf "$1/$LIVE_CODE_TAR" \
    || { log "LIVE_CODE_TAR=$LIVE_CODE_TAR not readable: carry it (git archive -o ...)"; return 1; }
}

stage_and_setup() {  # 0 when SGLang's site is usable; exports the environment then
  local rc
  export MTP_EVAL_BASE_PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}"
  if [[ $SERVER_KIND == simulated ]]; then  # LIVE_SIM_FA3=0: a lease whose FA3 is still to come
    touch "$STATE/site.ready"; export PYTHONPATH="$R"
    [[ ${LIVE_SIM_FA3:-1} == 1 ]] && touch "$STATE/fa3.ready"
    return 0
  fi
  if has fa3 ready; then  # done on an earlier call: only the exports (no import check again)
    # and the chunks this call carried (the model's, a JIT cache's): setup_on_gpu.sh, which
    # stages them otherwise, no longer runs (2026-12-06: weight chunks carried after FA3 waited
    # in the call's copy while phase_lc_model looked for them for 7 minutes)
    python3 benchmarks/live_h200/chunks.py stage .gpu-bundle --into "${MTP_CHUNKS:-/tmp/mtp-chunks}" \
      > /dev/null 2>&1
    export SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1 SGLANG_EXPOSE_OWN_ENV_VARS=1
    export SGLANG_CACHE_DIR=${SGLANG_CACHE_DIR:-/tmp/sglang-cache}  # as setup_on_gpu.sh sets it
    export FLASHINFER_WORKSPACE_BASE=$SGLANG_CACHE_DIR TRITON_CACHE_DIR=$SGLANG_CACHE_DIR/triton
  else
    has site ready && export MTP_SKIP_IMPORT_CHECK=1
    . benchmarks/live_h200/setup_on_gpu.sh > "$LIVE/logs/setup.last.log" 2>&1
    rc=$?
    grep -h "setup_on_gpu" "$LIVE/logs/setup.last.log" | tail -4
    [[ $rc == 0 ]] || return $rc
  fi
  export PYTHONPATH="/tmp/sgl-site:$R${MTP_EVAL_BASE_PYTHONPATH:+:$MTP_EVAL_BASE_PYTHONPATH}"
  [[ -f /tmp/sgl-site/sgl_kernel/flash_ops.abi3.so ]] && touch "$STATE/fa3.ready"
  touch "$STATE/site.ready"
}

start_phases() {
  [[ ${LIVE_PLAN:-signoff} == two-gpu ]] && { start_two_gpu; return; }
  [[ ${LIVE_PLAN:-signoff} == two-gpu-fmha ]] && { start_two_gpu_fmha; return; }
  [[ ${LIVE_PLAN:-signoff} == v23 ]] && { start_v23; return; }
  if [[ ${LIVE_PLAN:-signoff} == shapes ]]; then  # and fmha_v2's cold JIT beside them (CPUs 6-15)
    has site ready && [[ ${LIVE_SHAPES_JIT:-1} == 1 ]] && launch warm-sp-auto phase_warm_jit fmha_v2 auto
    has fa3 ready && launch report phase_shapes
    return
  fi
  [[ ${LIVE_PLAN:-signoff} == speed ]] && { start_speed; return; }
  [[ ${LIVE_PLAN:-signoff} == full-shapes ]] && { start_full_shapes; return; }
  [[ ${LIVE_PLAN:-signoff} == frontier ]] && { start_frontier; return; }
  [[ ${LIVE_PLAN:-signoff} == dependence ]] && { start_dependence; return; }
  [[ ${LIVE_PLAN:-signoff} == serving ]] && { start_serving; return; }
  [[ ${LIVE_PLAN:-signoff} == train-longctx ]] && { start_train_longctx; return; }
  [[ ${LIVE_PLAN:-signoff} == longctx-cell ]] && { start_longctx_cell; return; }
  [[ ${LIVE_PLAN:-signoff} == parity ]] && { start_parity; return; }
  [[ ${LIVE_PLAN:-signoff} == longctx-frontier ]] && { start_longctx_frontier; return; }
  launch hf phase_hf
  if has site ready; then
    for w in "fmha_v2_fi auto" "fmha_v2_fi fp8_e4m3" "flashinfer auto" "flashinfer fp8_e4m3"; do
      set -- $w; launch "warm-$1-$2" phase_warm "$1" "$2"
    done
  fi
  if has fa3 ready; then
    launch warm-fa3-auto phase_warm fa3 auto
    launch warm-fmha_v2-auto phase_warm fmha_v2 auto
    launch base-auto phase_sweep base-auto backend=fa3 kv_dtype=auto
    launch base-fp8 phase_sweep base-fp8 backend=fa3 kv_dtype=fp8_e4m3
  fi
  if has base-auto rc && has base-fp8 rc && [[ -f $LIVE/factors.env ]]; then
    start_candidates
  fi
  local all=1
  for s in base-auto base-fp8 s-a1 s-a2 s-a3 s-a4 s-f1 s-f2 s-f3; do has "$s" rc || all=0; done
  [[ $all == 1 ]] && launch report phase_report
}

start_two_gpu() {
  has fa3 ready || return 0
  local local_jobs="hydra/launcher=local server.gpus=auto"
  launch g-auto phase_sweep g-auto $local_jobs backend=fa3,fa3_repeat
  launch g-tp2 phase_sweep g-tp2 backend=fa3_repeat model.tp=2
  launch g-nodes phase_sweep g-nodes $local_jobs backend=fa3_repeat model.tp=2 cluster.nodes=2
  has g-auto rc && has g-tp2 rc && has g-nodes rc && launch report phase_report g-auto g-tp2 g-nodes
}

start_two_gpu_fmha() {
  has fa3 ready || return 0  # fmha_v2 decodes and verifies on fa3 in SGLang 0.5.19
  launch g2-base phase_sweep g2-base backend=fa3 model.tp=2
  launch g2-v2 phase_sweep g2-v2 backend=fmha_v2 model.tp=2
  has g2-base rc && has g2-v2 rc && launch report phase_report g2-base g2-v2
}

# LIVE_PLAN=v23: the sign-off on SGLang 0.5.23 with CUDA graphs on (synth_llama no longer turns
# them off). The HF reference and the skip-softmax factors are the 0.5.19 run's, read from the
# committed files (same model, same prompts), so no GPU time goes to them again. fmha_v2 verifies
# and drafts on XQA in 0.5.23 and needs no FA3: its warm-up (greedy check against HF, the raw
# bodies recorded as fixtures) starts as soon as the site is there. The fa3 baselines need no
# FlashInfer JIT and end while it compiles; then every candidate cell runs as its own sweep, all in
# parallel (the JIT's file locks let one server compile a kernel while the others wait for it).
V23_CELLS=("v2-a backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=0"
  "v2-a-mod backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=SKIP_MODERATE"
  "v2fi-a backend=fmha_v2_fi kv_dtype=auto" "fi-a backend=flashinfer kv_dtype=auto"
  "aa-a backend=fa3_repeat kv_dtype=auto"
  "v2-f backend=fmha_v2 kv_dtype=fp8_e4m3 skip_softmax.prefill=0"
  "v2fi-f backend=fmha_v2_fi kv_dtype=fp8_e4m3" "fi-f backend=flashinfer kv_dtype=fp8_e4m3")

start_v23() {
  local checks=$R/benchmarks/results/live-h200/signoff/checks cell name base all=1
  [[ -f $LIVE/hf.json ]] || xz -dc "$checks/hf.json.xz" > "$LIVE/hf.json"
  [[ -f $LIVE/factors.env ]] || cp "$checks/factors.env" "$LIVE/factors.env"
  # Every FlashInfer-JIT configuration compiles while FA3 travels and the baselines run: fmha_v2
  # (fmha_v2 prefill, XQA decode and verify) and flashinfer, at both KV dtypes (fmha_v2_fi then
  # needs nothing new). fmha_v2-auto also records the release's raw bodies.
  if has site ready; then
    for w in "fmha_v2 auto" "fmha_v2 fp8_e4m3" "flashinfer auto" "flashinfer fp8_e4m3"; do
      set -- $w; launch "warm-$1-$2" phase_warm "$1" "$2"
    done
  fi
  if has fa3 ready; then
    launch base-auto phase_sweep base-auto backend=fa3 kv_dtype=auto
    launch base-fp8 phase_sweep base-fp8 backend=fa3 kv_dtype=fp8_e4m3
  fi
  has base-auto rc && has base-fp8 rc || return 0
  . "$LIVE/factors.env"
  for cell in "${V23_CELLS[@]}"; do
    set -- ${cell//SKIP_MODERATE/$SKIP_MODERATE}
    name=s-$1; shift
    base=base-auto; [[ " $* " == *" kv_dtype=fp8_e4m3 "* ]] && base=base-fp8
    launch "$name" phase_sweep "$name" "$@" $(baseline_of $base)
    has "$name" rc || all=0
  done
  for cell in fmha_v2-auto fmha_v2-fp8_e4m3 flashinfer-auto flashinfer-fp8_e4m3; do
    has "warm-$cell" rc || all=0
  done
  [[ $all == 1 ]] && launch report phase_report
}

start_candidates() {
  . "$LIVE/factors.env"
  local a f
  a=$(baseline_of base-auto) f=$(baseline_of base-fp8)
  launch s-a1 phase_sweep s-a1 backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=0,"$SKIP_MODERATE" $a
  launch s-a2 phase_sweep s-a2 backend=fmha_v2 kv_dtype=auto skip_softmax.prefill="$SKIP_AGGRESSIVE" $a
  launch s-a3 phase_sweep s-a3 backend=fmha_v2_fi,flashinfer,fa3_repeat kv_dtype=auto $a
  # Beyond the chosen factors: where skipping must cost accuracy (tiles skipped 84% / 93%).
  launch s-a4 phase_sweep s-a4 backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=100000,1000000 $a
  launch s-f1 phase_sweep s-f1 backend=fmha_v2 kv_dtype=fp8_e4m3 skip_softmax.prefill=0,"$SKIP_MODERATE" $f
  launch s-f2 phase_sweep s-f2 backend=fmha_v2 kv_dtype=fp8_e4m3 skip_softmax.prefill="$SKIP_AGGRESSIVE" $f
  launch s-f3 phase_sweep s-f3 backend=fmha_v2_fi,flashinfer kv_dtype=fp8_e4m3 $f
}

# sequential.baseline_dir=<the fa3 cell of a base sweep>, when that cell finished ok (else nothing:
# the candidates then run every repeat, the fixed design, and the report still pairs them).
baseline_of() {
  local result
  result=$(ls -1 "$R"/outputs/live/"$1"/*/result.json 2>/dev/null | head -n 1)
  [[ -n $result ]] && grep -q '"status": "ok"' "$result" && echo "sequential.baseline_dir=$(dirname "$result")"
}

phase_hf() {
  cd "$R" || return 1
  local py="${MTP_EVAL_BASE_PYTHONPATH:-}" model=benchmarks/results/live-h200/trained-model/target
  PYTHONPATH="$py" "$HF_PY" -m benchmarks.live_h200.greedy_check hf "$model" "$LIVE/hf.json" || return 1
  PYTHONPATH="$py" "$HF_PY" -m benchmarks.live_h200.skip_fraction "$model" "$LIVE/skip_fraction.json" \
    ${LIVE_SKIP_LIMIT:+--limit $LIVE_SKIP_LIMIT} --env "$LIVE/factors.env.tmp" \
    && mv "$LIVE/factors.env.tmp" "$LIVE/factors.env"
}

# bare_server NAME CPUS SED CONFIG...: a bare SGLang server with exactly the flags of the cell
# CONFIG plans (the pipeline's dry run), SED applied to its argv, on CPUS ("all": unpinned), until
# it is healthy; its launch-to-ready time lands in $LIVE/ready-NAME.txt. Sets BARE_PID, BARE_URL.
bare_server() {
  local name=$1 cpus=$2 edit=$3 plan argv envs port t0 pin=(); shift 3
  BARE_PID="" BARE_URL=""
  plan=$(python3 -m pipeline "$@" dry_run=true "output_dir=$LIVE/dry/$name" 2>&1) \
    || { echo "$plan"; return 1; }
  # A port the kernel says is free now (a random one of 2,000 collided with a neighbour's server
  # in CI: "address already in use"); the pipeline's cells pick theirs the same way.
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  read -r -a argv <<< "$(sed -n 's/^server command: //p' <<< "$plan" \
    | sed "s/--port [0-9]*/--port $port/; $edit")"
  read -r -a envs <<< "$(sed -n 's/^server env: //p' <<< "$plan")"
  echo "warm $name: ${argv[*]}"
  [[ $cpus != all ]] && pinning && pin=(taskset -c "$cpus")
  t0=$(date +%s)
  env "${envs[@]}" setsid "${pin[@]}" "${argv[@]}" > "$LIVE/logs/server-$name.log" 2>&1 &
  BARE_PID=$! BARE_URL="http://127.0.0.1:$port"
  until healthy "$BARE_URL/health_generate"; do
    kill -0 "$BARE_PID" 2>/dev/null \
      || { echo "warm $name: server exited"; tail -30 "$LIVE/logs/server-$name.log"; return 1; }
    (( $(date +%s) - t0 > 1500 )) && { echo "warm $name: not ready after 1500 s"; return 1; }
    sleep 1
  done
  echo "warm $name: ready after $(( $(date +%s) - t0 )) s" | tee "$LIVE/ready-$name.txt"
}

stop_bare() {  # the server bare_server started, and its process group
  [[ -n ${BARE_PID:-} ]] || return 0
  kill -TERM -- "-$BARE_PID" 2>/dev/null; sleep 15; kill -KILL -- "-$BARE_PID" 2>/dev/null
  return 0
}

# One bare server with exactly a cell's flags: its JIT, the release's raw bodies, the greedy check.
# BACKEND KV [CPUS]: CPUS ("all" unless named) pins the server and its compilers.
phase_warm() {
  cd "$R" || return 1
  local name="$1-$2" rc
  bare_server "$name" "${3:-all}" "" "${COMMON[@]}" "backend=$1" "kv_dtype=$2"
  rc=$?
  if [[ $rc == 0 ]]; then
    # The server's raw bodies, before the greedy check sends anything: the release's fixtures.
    python3 -m benchmarks.live_h200.record_bodies "$BARE_URL" "$LIVE/bodies/$name"
    until [[ -f $LIVE/hf.json ]] || has hf rc; do sleep 2; done
    [[ -f $LIVE/hf.json ]] && python3 -m benchmarks.live_h200.greedy_check server \
      "$BARE_URL" "$LIVE/hf.json" "$LIVE/greedy-$name.json" "$name"
    rc=$?
  fi
  stop_bare
  return $rc
}

healthy() {
  python3 -c "import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=5)" "$1" 2>/dev/null
}

phase_sweep() {  # NAME OVERRIDES...: a sweep of COMMON (TWO_GPU in the two-GPU plan) + OVERRIDES
  cd "$R" || return 1
  local name=$1 base=("${COMMON[@]}"); shift
  [[ ${LIVE_PLAN:-signoff} == two-gpu* ]] && base=("${TWO_GPU[@]}")
  [[ $name == g-nodes ]] && base+=("$NODES_ARGS")
  python3 -m pipeline -m "${base[@]}" "$@" "hydra.sweep.dir=outputs/live/$name"
}

# LIVE_PLAN=shapes (LIVE_SGLANG=0.5.23 with the 0.5.23 bundle): every shipped production model
# config on its cut shape with random weights (conf/experiment/shape_*.yaml; benchmarks/live_h200/
# shapes/README.md), fa3, one cell after another (each takes the GPU), with the sign-off's server
# settings (COMMON's server.* and gpu), then their report and archive. Launched as "report", so
# the tick stops waiting once it is done.
phase_shapes() {
  shape_cells shape_deepseek_v3,shape_qwen3_next_80b_a3b,shape_glm_4_6,shape_llama3_1_8b_eagle3
  phase_report shapes
}

shape_cells() {  # EXPERIMENTS: those shape cells, fa3, into outputs/live/shapes
  cd "$R" || return 1
  local a server=()
  for a in "${COMMON[@]}"; do
    [[ $a == server[.=]* || $a == +server.* || $a == gpu=* ]] && server+=("$a")
  done
  python3 -m pipeline -m "${server[@]}" backend=fa3 hydra.sweep.dir=outputs/live/shapes \
    "experiment=$1"
}

# LIVE_PLAN=full-shapes (LIVE_SGLANG=0.5.23 with the 0.5.23 bundle, on nvidia-h200-x8, -x4 or -x2):
# issue 43's production shapes at full depth with random weights (conf/experiment/full_*.yaml;
# benchmarks/live_h200/shapes/README.md, "Full-depth shapes"), each a sweep of fa3 and fmha_v2 at
# bf16 and fp8 KV plus fa3_repeat (the A/A band), evals then the speed phase, one shape after
# another (each takes all its GPUs), then one report of all of them. LIVE_FULL_SHAPES picks the
# shapes (default: every one), LIVE_FULL_CUT=1 adds each MoE shape's one-GPU cut cell with the same
# settings (the tp-1 ratio item 3 compares with). A shape needing more GPUs than nvidia-smi lists
# (LIVE_GPUS in a rehearsal) refuses the plan before anything starts: the report is marked refused.
FULL_GPUS=(glm_4_6_tp8:8 qwen3_next_80b_a3b_tp4:4 qwen3_next_80b_a3b_tp2:2
  llama3_1_8b_eagle3_tp2_dp2:4)
FULL_SERVER=(server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200 "${SIM_ARGS[@]}"
  server.mem_fraction_static=0.85 server.max_running_requests=32 server.startup_timeout_s=1500
  server.stop_grace_s=20 "server.extra_args=[--sampling-backend,pytorch,--max-total-tokens,262144]")
[[ $SGLANG == 0.5.23 ]] && FULL_SERVER+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python)
read -r -a _full_more <<< "${LIVE_FULL_OVERRIDES:-}"  # a rehearsal's smaller plan: speed.repeats=1
FULL_SERVER+=("${_full_more[@]}")
# A lease short of time narrows the cells: LIVE_FULL_BACKENDS=fa3,fmha_v2 LIVE_FULL_KV=auto.
FULL_ARGS=("${FULL_SERVER[@]}" "backend=${LIVE_FULL_BACKENDS:-fa3,fmha_v2,fa3_repeat}"
  "kv_dtype=${LIVE_FULL_KV:-auto,fp8_e4m3}")

start_full_shapes() {
  local shape need have=${LIVE_GPUS:-$(nvidia-smi --list-gpus 2>/dev/null | grep -c '^GPU')} short=()
  [[ $SGLANG == 0.5.23 ]] || { log "LIVE_PLAN=full-shapes needs LIVE_SGLANG=0.5.23"; return 0; }
  for shape in ${LIVE_FULL_SHAPES:-${FULL_GPUS[*]%%:*}}; do
    need=$(printf '%s\n' "${FULL_GPUS[@]}" | sed -n "s/^$shape://p")
    [[ -n $need ]] || { short+=("$shape (no such shape: ${FULL_GPUS[*]%%:*})"); continue; }
    (( need > have )) && short+=("$shape needs $need GPUs")
  done
  if (( ${#short[@]} )) && ! has report started; then
    log "LIVE_PLAN=full-shapes refused: this machine has $have GPUs (nvidia-smi) and ${short[*]};" \
      "lease nvidia-h200-x8 (or -x4 / -x2) or set LIVE_FULL_SHAPES to the shapes it holds"
    touch "$STATE/report.started"; echo refused > "$STATE/report.rc"
  fi
  has fa3 ready && launch report phase_full_shapes
}

phase_full_shapes() {
  cd "$R" || return 1
  local shape sweeps=()
  for shape in ${LIVE_FULL_SHAPES:-${FULL_GPUS[*]%%:*}}; do
    python3 -m pipeline -m "${FULL_ARGS[@]}" "experiment=full_$shape" \
      "hydra.sweep.dir=outputs/live/full-$shape"
    sweeps+=("full-$shape")
    [[ $shape == *_dp* ]] && phase_full_dp_counters "$shape"  # item 2: the DP ranks' own bodies
    [[ ${LIVE_FULL_CUT:-1} == 1 && $shape == *_tp[48] ]] || continue
    python3 -m pipeline -m "experiment=shape_${shape%_tp*}" speed.enabled=true speed.repeats=3 \
      "${FULL_ARGS[@]}" "hydra.sweep.dir=outputs/live/cut-${shape%_tp*}"  # FULL_ARGS last: they win
    sweeps+=("cut-${shape%_tp*}")
  done
  phase_report "${sweeps[@]}"
}

# SHAPE: a bare fa3 server of a DP shape (the cell's own flags) and record_dp_counters.py on it:
# replies per dp_rank, /server_info five times, /metrics, into $LIVE/bodies (the report keeps them).
phase_full_dp_counters() {
  bare_server "dp-$1" all "" "${FULL_SERVER[@]}" "experiment=full_$1" backend=fa3 kv_dtype=auto \
    && python3 -m benchmarks.live_h200.record_dp_counters "$BARE_URL" "$LIVE/bodies/dp-counters-$1"
  stop_bare
}

# LIVE_PLAN=speed (the 0.5.23 bundle, carried as for v23): the speed comparison of issue 27 through
# the pipeline's own cells (conf/experiment/speed_llama3_1_8b.yaml: the Llama-3.1-8B shape with its
# EAGLE3 draft, random weights, bf16; the small evals, then the speed phase). Every cell runs alone
# on the GPU except the two fa3 cells, which run while fmha_v2's FlashInfer JIT compiles in two bare
# servers (its cold start, one per KV dtype): those servers and their compilers get CPUs 6-15, the
# fa3 cells 0-5, and the A/A cell (fa3_repeat, alone, last) shows whether that sharing moved fa3's
# times. The pool is the same size for every cell (--max-total-tokens: SGLang sizes it from the
# memory free at start, which the bare servers take a part of), large enough for 128k + 32 x 768.
SPEED_ARGS=(experiment=speed_llama3_1_8b server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200
  "${SIM_ARGS[@]}"
  server.mem_fraction_static=0.85 server.startup_timeout_s=1500 server.stop_grace_s=20
  "server.extra_args=[--sampling-backend,pytorch,--max-total-tokens,262144]")
[[ $SGLANG == 0.5.23 ]] && SPEED_ARGS+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python)
# A rehearsal's smaller plan (LIVE_SPEED_OVERRIDES="speed.repeats=1 ..."): appended to every cell.
read -r -a _speed_more <<< "${LIVE_SPEED_OVERRIDES:-}"
SPEED_ARGS+=("${_speed_more[@]}")
SPEED_CELLS=(sp-fa3 sp-v2 sp-pool sp-aa)
# Issue 27 item 2, the fixed cost that grows with the KV pool (SGLang 0.5.19-0.5.22 copy the
# layer's whole pool on every fmha_v2 prefill): fa3 and fmha_v2 at bf16 KV again, prefill only,
# with the pool SGLang sizes from --mem-fraction-static 0.85 (no --max-total-tokens: about 2.7x
# the other cells' 262,144 tokens), no evals (the experiment's are dropped with their settings).
# The report's "what the KV pool costs" compares the two pools.
POOL_ARGS=("${SPEED_ARGS[@]/,--max-total-tokens,262144/}" "evals=[]" "~evals.mcq_sample"
  "~evals.mtbench_sample" "speed.prefill_tokens=[1024,4096]" "speed.prefill_batches=[]" "speed.decode_batches=[]")

start_speed() {
  local kv all=1
  if has site ready; then
    for kv in auto fp8_e4m3; do launch "warm-sp-$kv" phase_warm_jit fmha_v2 "$kv"; done
  fi
  has fa3 ready || return 0
  launch sp-fa3 phase_speed sp-fa3 0-5 backend=fa3 kv_dtype=auto,fp8_e4m3
  has sp-fa3 rc && has warm-sp-auto rc && has warm-sp-fp8_e4m3 rc || return 0
  launch sp-v2 phase_speed sp-v2 all backend=fmha_v2 kv_dtype=auto,fp8_e4m3
  has sp-v2 rc || return 0
  skip_or_launch sp-aa phase_speed sp-aa all backend=fa3_repeat kv_dtype=auto
  has sp-aa rc || return 0
  skip_or_launch sp-shape phase_speed_shape
  has sp-shape rc || return 0
  skip_or_launch sp-pool phase_pool
  has sp-pool rc && launch report phase_speed_report
}

# LIVE_SPEED_SKIP="sp-aa sp-shape sp-pool" (any of them): a lease running short drops them; the
# report is made of the cells that ran (0.5.19's lease dropped sp-aa and sp-shape, benchmarks/results/live-h200/speed-pipeline-0.5.19/README.md).
skip_or_launch() {
  local name=$1
  if [[ " ${LIVE_SPEED_SKIP:-} " == *" $name "* ]] && ! has "$name" started; then
    touch "$STATE/$name.started"; echo skipped > "$STATE/$name.rc"; log "skipped $name (LIVE_SPEED_SKIP)"
    return 0
  fi
  launch "$@"
}

# The shipped Llama-3.1-8B EAGLE3 recipe as it is (float16) on its shape, fa3: issue 27's fourth
# live shape cell, alone on the GPU between the speed cells (its own sweep: not in the speed report).
phase_speed_shape() { shape_cells shape_llama3_1_8b_eagle3; }

# CPUS CMD...: CMD on those CPUs ("all": as it is) on a host of 16 or more (the H200's has 16).
on_cpus() {
  local cpus=$1; shift
  if [[ $cpus != all ]] && pinning; then taskset -c "$cpus" "$@"; else "$@"; fi
}
pinning() { command -v taskset > /dev/null && (( $(nproc) >= 16 )); }

phase_speed() {  # NAME CPUS OVERRIDES...: a speed sweep, its cells one after another
  cd "$R" || return 1
  local name=$1 cpus=$2; shift 2
  on_cpus "$cpus" python3 -m pipeline -m "${SPEED_ARGS[@]}" "$@" "hydra.sweep.dir=outputs/live/$name"
}

phase_pool() {  # the two-pool check: POOL_ARGS, fa3 then fmha_v2, one after another
  cd "$R" || return 1
  python3 -m pipeline -m "${POOL_ARGS[@]}" backend=fa3,fmha_v2 kv_dtype=auto \
    "hydra.sweep.dir=outputs/live/sp-pool"
}

# A bare server with a speed cell's argv and a small pool, on CPUs 6-15: FlashInfer compiles the
# variant's kernels into the shared cache (its start from that cache, timed), then it stops.
phase_warm_jit() {
  cd "$R" || return 1
  local rc
  bare_server "sp-$1-$2" 6-15 "s/--max-total-tokens [0-9]*/--max-total-tokens 32768/" \
    "${SPEED_ARGS[@]}" "backend=$1" "kv_dtype=$2"
  rc=$?
  stop_bare
  return $rc
}

phase_speed_report() {
  cd "$R" || return 1
  local c cells=()
  for c in "${SPEED_CELLS[@]}"; do [[ -d outputs/live/$c ]] && cells+=("outputs/live/$c"); done
  python3 -m pipeline.report.cli "${cells[@]}" --out outputs/live/speed-report
  echo "report exit $?"
  cp "$LIVE"/ready-*.txt outputs/live/ 2>/dev/null
  du -sh "${SGLANG_CACHE_DIR:-/tmp/sglang-cache}" > outputs/live/jit-cache-size.txt 2>&1
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=serving (issue 42; the 0.5.23 bundle, carried as for speed): serving-only cells one
# after another (SERVING_STEPS, most wanted first, so a lease cut short keeps the comparison that
# matters; every tick returns what ended, LIVE_SERVING_SKIP="sv-on-f ..." drops steps,
# LIVE_SERVING_ORDER="lc-on sv-on-a ..." runs those first, in that order):
#   importtime          once the site is unpacked, before any server: where SGLang's start goes
#                       (python -X importtime of the launcher and of the scheduler; item 5);
#   lc-on-v2 / lc-off-v2  the trained long-context model with its EAGLE3 draft (issue 41; its
#                       chunks carried as for longctx-frontier, lcmodel assembles them), fmha_v2
#                       with speculation, then without: they need no FA3 (SGLang 0.5.23 loads
#                       flash_ops only in the FA3 backend), so they run while its chunks travel;
#   lc-on / lc-off      fa3 and fa3_repeat (the A/A) with speculation, fa3 without; all four on
#                       longctx_niah_single's own haystacks (serving.prompts=eval:..., the same
#                       prompts on and off: the speculation-off cells only read the eval),
#                       LIVE_SERVING_LC_PROMPTS (32) of LIVE_SERVING_LC_SOURCE (34,816) tokens cut
#                       to buckets 1k, 8k and 32k, concurrency 1 / 4 / 16 (64 would need 128
#                       haystacks of 32k); the spec-on cells answer the eval too (accuracy);
#   lc-bench            one server, two clients: a bare server with lc-off's flags (speculation off:
#                       random ids would change what a draft accepts, not what a step costs) as
#                       fa3_repeat, a serving cell on it (server=external), then SGLang's own
#                       bench_serving (random ids, --tokenize-prompt) at concurrency 16 and 8k
#                       input on it; serving_crosscheck.py beside that cell's level of the same
#                       shape (and beside lc-off's fa3, another start); the cell is also lc-off's
#                       speculation-off A/A;
#   warm-sv-KV          once the site is unpacked, for each KV dtype a remaining 8B step runs
#                       fmha_v2 at: a bare 8B server (a 0.3 memory share, 32,768-token pool), so
#                       fmha_v2's XQA for 4 query heads a KV head (not in the parity lease's JIT
#                       cache: 2 a KV head) compiles while FA3 travels (144 s on an H100, mostly
#                       beside staging); no serving cell starts until every warm-up has ended (a
#                       failed one leaves the compile to its cell), and cells use every CPU: the
#                       trained model's cells are CPU-bound, and the 2026-12-07 lease that ran them
#                       on CPUs 0-5 beside the compile read fa3 without speculation at 0.67-0.86x
#                       of the lease before on all 16 (another host too: the two causes are not
#                       separable; ../results/live-h200/serving-lease2-h100-0.5.23/README.md);
#   sv-on-a / sv-off-a  the 8B shape (SPEED_ARGS' experiment, dummy weights: its draft accepts about
#                       one token, so its speculation speed-up is not a real one), fa3 and fmha_v2
#                       at bf16 KV with speculation, then without (serving.speculation=false);
#   sv-aa               fa3 again (fa3_repeat): the A/A band of the 8B shape;
#   sv-bench            the same on the 8B shape (1k input), beside sv-off-a's fa3 too;
#   sv-on-f / sv-off-f  the same two at fp8 KV;
#   lc-st-seq / lc-st-pre  item 5's before and after: two accuracy cells of the trained model
#                       (fmha_v2, then trtllm_mha: the same kernels on SM90, so both start warm
#                       without FA3), 8 niah_single questions at 4k, a 0.4 memory share, one
#                       after another as today, then with server.prestart_next=true (the second
#                       server starts while the first cell runs its eval); each sweep's wall from
#                       outside (sweep_wall_s.txt), startup_sweeps.py's table per cell;
#   report              mtp-eval-report over every sweep that ended.
# Each cell: 4 levels x 2 buckets, at most 32 requests and 20 s a level (LIVE_SERVING_OVERRIDES
# adds to every cell, LIVE_SERVING_8B_OVERRIDES to the 8B shape's).
SERVING_KNOBS=(speed.enabled=false serving.enabled=true "serving.buckets=[1024,8192]"
  serving.requests=32 serving.max_seconds=20)
SERVING_ARGS=("${SPEED_ARGS[@]}" "evals=[]" "~evals.mcq_sample" "~evals.mtbench_sample"
  "${SERVING_KNOBS[@]}")
# The trained long-context model's cells, serving and start-up sweeps alike: its weights, the one
# eval they draw on (niah_single; the other five tasks dropped), its server's flags.
TRAINED_BASE=(model=synth_longctx server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200
  "${SIM_ARGS[@]}" server.startup_timeout_s=1500 server.stop_grace_s=20
  "server.extra_args=[--sampling-backend,pytorch]"
  "model.path=$LIVE/longctx/target" "model.speculative.draft_model_path=$LIVE/longctx/draft"
  "evals=[longctx]")
for _t in niah_multikey niah_multivalue niah_multiquery vt fwe; do
  TRAINED_BASE+=("~evals.longctx_$_t")
done
[[ $SGLANG == 0.5.23 ]] && TRAINED_BASE+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python
  +server.env.SGLANG_PYSPY_DUMP_BEFORE_CRASH=0 +server.env.SGLANG_CUDA_COREDUMP_BEFORE_CRASH=0)
SERVING_TRAINED=("${TRAINED_BASE[@]}" server.mem_fraction_static=0.85
  "evals.longctx_niah_single.longctx.lengths=[${LIVE_SERVING_LC_SOURCE:-34816}]"
  "evals.longctx_niah_single.longctx.samples=${LIVE_SERVING_LC_PROMPTS:-32}"
  "${SERVING_KNOBS[@]}" serving.prompts=eval:longctx_niah_single "serving.buckets=[1024,8192,32768]"
  "serving.concurrency=[1,4,16]")
# The start-up sweeps (item 5): the same model's accuracy cells (8 niah_single questions at 4k),
# nothing timed, a 0.4 memory share in both sweeps (server.prestart_next needs at most 0.45).
STARTUP_TRAINED=("${TRAINED_BASE[@]}" server.mem_fraction_static=0.4
  "evals.longctx_niah_single.longctx.lengths=[4096]" evals.longctx_niah_single.longctx.samples=8
  speed.enabled=false serving.enabled=false)
read -r -a _serving_more <<< "${LIVE_SERVING_OVERRIDES:-}"
SERVING_ARGS+=("${_serving_more[@]}")
SERVING_TRAINED+=("${_serving_more[@]}")
# LIVE_SERVING_8B_OVERRIDES adds to the 8B shape's cells only (a lease's budget: e.g. its levels).
read -r -a _serving_8b <<< "${LIVE_SERVING_8B_OVERRIDES:-}"
SERVING_ARGS+=("${_serving_8b[@]}")
# NAME, the model's arguments (8b / trained), the sweep's overrides; a bench step: NAME, the model,
# then the bench's input tokens and concurrency and the sweep whose fa3 cell it is read beside.
SERVING_STEPS=("lc-on-v2 trained backend=fmha_v2 kv_dtype=auto"
  "lc-off-v2 trained backend=fmha_v2 kv_dtype=auto serving.speculation=false"
  "lc-on trained backend=fa3,fa3_repeat kv_dtype=auto"
  "lc-off trained backend=fa3 kv_dtype=auto serving.speculation=false"
  "lc-bench trained 8192 16 lc-off"
  "sv-on-a 8b backend=fa3,fmha_v2 kv_dtype=auto"
  "sv-off-a 8b backend=fa3,fmha_v2 kv_dtype=auto serving.speculation=false"
  "sv-aa 8b backend=fa3_repeat kv_dtype=auto" "sv-bench 8b 1024 16 sv-off-a"
  "sv-on-f 8b backend=fa3,fmha_v2 kv_dtype=fp8_e4m3"
  "sv-off-f 8b backend=fa3,fmha_v2 kv_dtype=fp8_e4m3 serving.speculation=false"
  "lc-st-seq startup backend=fmha_v2,trtllm_mha kv_dtype=auto"
  "lc-st-pre startup backend=fmha_v2,trtllm_mha kv_dtype=auto server.prestart_next=true")
# LIVE_SERVING_ORDER: its steps first, in that order, then the rest as SERVING_STEPS has them.
if [[ -n ${LIVE_SERVING_ORDER:-} ]]; then
  _sv_first=() _sv_rest=()
  for _n in ${LIVE_SERVING_ORDER}; do
    _found=""
    for _s in "${SERVING_STEPS[@]}"; do [[ ${_s%% *} == "$_n" ]] && _found=$_s; done
    [[ -n $_found ]] || { echo "live_signoff: LIVE_SERVING_ORDER names $_n, not a step of" \
      "SERVING_STEPS" >&2; exit 2; }
    _sv_first+=("$_found")
  done
  for _s in "${SERVING_STEPS[@]}"; do
    [[ " $LIVE_SERVING_ORDER " == *" ${_s%% *} "* ]] || _sv_rest+=("$_s")
  done
  SERVING_STEPS=("${_sv_first[@]}" "${_sv_rest[@]}")
fi
serving_needs_fa3() {  # STEP: its cells or its bare server run the FA3 backend
  [[ ${1%% *} == *-bench || $1 == *backend=*fa3* ]]
}
serving_warm_kv() {  # STEP: the KV dtype whose 8B fmha_v2 warm-up it waits for (none: nothing)
  local name=${1%% *} kv
  [[ $name == sv-* && $1 == *backend=*fmha_v2* ]] || return 0
  [[ " ${LIVE_SERVING_SKIP:-} " == *" $name "* ]] && return 0
  kv=${1##*kv_dtype=}; echo "${kv%% *}"
}
serving_warmups() {  # the KV dtypes of the warm-ups this lease runs, one per line
  local step
  for step in "${SERVING_STEPS[@]}"; do serving_warm_kv "$step"; done | sort -u
}
start_serving() {
  [[ -f ${MTP_CHUNKS:-/tmp/mtp-chunks}/longctx-model.tar.manifest ]] && launch lcmodel phase_lc_model
  has site ready || return 0
  launch importtime phase_importtime
  has importtime rc || return 0
  local kv
  for kv in $(serving_warmups); do launch "warm-sv-$kv" phase_serving_warm "$kv"; done
  for kv in $(serving_warmups); do has "warm-sv-$kv" rc || return 0; done  # cells run alone
  local step name
  for step in "${SERVING_STEPS[@]}"; do
    name=${step%% *}
    if [[ " ${LIVE_SERVING_SKIP:-} " == *" $name "* ]]; then
      mark_skipped "$name" "LIVE_SERVING_SKIP"; continue
    fi
    if [[ $name == lc-* ]] && ! has lcmodel started; then
      mark_skipped "$name" "the long-context model's chunks were not carried"; continue
    fi
    if [[ $name == lc-* ]]; then
      has lcmodel rc || return 0
      [[ $(cat "$STATE/lcmodel.rc") == 0 ]] || { mark_skipped "$name" "lcmodel failed"; continue; }
    fi
    serving_needs_fa3 "$step" && ! has fa3 ready && return 0
    if [[ $name == *-bench ]]; then launch "$name" phase_serving_bench "$name"
    else launch "$name" phase_serving "$name"; fi
    has "$name" rc || return 0
  done
  launch report phase_serving_report
}
phase_importtime() {  # where a server's start goes before its weights: SGLang importing itself
  cd "$R" && mkdir -p outputs/live || return 1
  local mod what
  for mod in sglang.launch_server sglang.srt.managers.scheduler; do
    what=$mod; [[ $SERVER_KIND == simulated ]] && what=pipeline.simserver  # no sglang here
    python3 -X importtime -c "import $what" 2> "outputs/live/importtime-$mod.txt" || return 1
    echo "$mod: $(tail -n 1 "outputs/live/importtime-$mod.txt")"
  done
}
phase_serving() {  # NAME: that step's sweep, its cells one after another
  cd "$R" || return 1
  local step words=()
  for step in "${SERVING_STEPS[@]}"; do
    [[ ${step%% *} == "$1" ]] && read -r -a words <<< "$step"
  done
  (( ${#words[@]} )) || { echo "no serving step $1"; return 2; }
  if [[ ${words[1]} == startup ]]; then  # the sweep's wall, measured from outside, beside it
    local t0 rc
    t0=$EPOCHREALTIME
    python3 -m pipeline -m "${STARTUP_TRAINED[@]}" "${words[@]:2}" "hydra.sweep.dir=outputs/live/$1"
    rc=$?
    mkdir -p "outputs/live/$1"
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", b - a }' \
      > "outputs/live/$1/sweep_wall_s.txt"
    return $rc
  elif [[ ${words[1]} == trained ]]; then
    python3 -m pipeline -m "${SERVING_TRAINED[@]}" "${words[@]:2}" "hydra.sweep.dir=outputs/live/$1"
  else
    python3 -m pipeline -m "${SERVING_ARGS[@]}" "${words[@]:2}" "hydra.sweep.dir=outputs/live/$1"
  fi
}
# KV: a bare 8B fmha_v2 server at that KV dtype, a 0.3 share of the GPU's memory and a
# 32,768-token pool (the site's unpacking may still run beside it): FlashInfer compiles its
# kernels into the shared cache (its start, timed, in ready-sp-fmha_v2-KV.txt), then it stops.
phase_serving_warm() {
  cd "$R" || return 1
  local rc
  bare_server "sp-fmha_v2-$1" all \
    "s/--max-total-tokens [0-9]*/--max-total-tokens 32768/; s/--mem-fraction-static [0-9.]*/--mem-fraction-static 0.3/" \
    "${SERVING_ARGS[@]}" backend=fmha_v2 "kv_dtype=$1"
  rc=$?
  stop_bare
  return $rc
}
phase_serving_bench() {  # NAME: a cell and SGLang's bench_serving against one server
  cd "$R" || return 1
  local step words=() args rc port tok gpu=()
  for step in "${SERVING_STEPS[@]}"; do
    [[ ${step%% *} == "$1" ]] && read -r -a words <<< "$step"
  done
  (( ${#words[@]} == 5 )) || { echo "no bench step $1"; return 2; }
  if [[ ${words[1]} == trained ]]; then args=("${SERVING_TRAINED[@]}")
  else args=("${SERVING_ARGS[@]}"); fi
  # fa3_repeat without speculation: a second start of the fa3 sweep's (words[4]) spec-off cell,
  # so its cell is that sweep's speculation-off A/A as well as the bench's own phase.
  args+=(backend=fa3_repeat kv_dtype=auto serving.speculation=false)
  bare_server "$1" all "" "${args[@]}" || { stop_bare; return 1; }
  port=${BARE_URL##*:}
  tok=$(python3 -m pipeline "${args[@]}" --cfg job 2>/dev/null | sed -n 's/^  path: //p' | head -n 1)
  # The phase on that very server (server=external: reached, verified, never stopped), so the
  # bench and the phase read one start (issue 42 item 4). An external server's GPU is named,
  # not detected: the one this host has (nvidia-smi), else the dry run's (the simulated GPU).
  mapfile -t gpu < <(host_gpu_overrides "$LIVE/dry/$1/result.json")
  python3 -m pipeline -m "${args[@]}" "${gpu[@]}" server.kind=external "server.base_url=$BARE_URL" \
    "hydra.sweep.dir=outputs/live/$1" || { stop_bare; return 1; }
  if [[ $SERVER_KIND == simulated ]]; then  # no sglang here: the rehearsal records the command
    echo "bench_serving --port $port --tokenizer $tok --random-input-len ${words[2]}" \
      "--max-concurrency ${words[3]} (simulated: not run)" > "outputs/live/$1.txt"; rc=0
  else
    # as many requests as a phase level sends (serving.requests), ids sent as ids; bench_serving
    # imports Hugging Face datasets even for random ids: its stand-in where the host has none
    local pypath=$PYTHONPATH
    python3 -c 'import datasets' 2> /dev/null \
      || pypath="$R/benchmarks/live_h200/bench_standins${PYTHONPATH:+:$PYTHONPATH}"
    PYTHONPATH=$pypath python3 -m sglang.bench_serving --backend sglang --host 127.0.0.1 --port "$port" \
      --tokenizer "$tok" --dataset-name random-ids --tokenize-prompt \
      --random-input-len "${words[2]}" --random-output-len 256 --random-range-ratio 1 \
      --num-prompts 32 --max-concurrency "${words[3]}" --disable-tqdm \
      --output-file "outputs/live/$1.jsonl" > "outputs/live/$1.txt" 2>&1
    rc=$?
  fi
  stop_bare
  [[ $rc == 0 && -f outputs/live/$1.jsonl ]] || return $rc
  # Beside the same server's phase; beside the fa3 sweep's own start too, where it ran.
  python3 -m benchmarks.live_h200.serving_crosscheck "outputs/live/$1.jsonl" "outputs/live/$1" \
    --variant fa3_repeat --bucket "${words[2]}" --concurrency "${words[3]}" \
    --out "outputs/live/$1-crosscheck.json" | tee "outputs/live/$1-crosscheck.md"
  [[ -d outputs/live/${words[4]} ]] && python3 -m benchmarks.live_h200.serving_crosscheck \
    "outputs/live/$1.jsonl" "outputs/live/${words[4]}" --variant fa3 --bucket "${words[2]}" \
    --concurrency "${words[3]}" --out "outputs/live/$1-crosscheck-${words[4]}.json" \
    | tee "outputs/live/$1-crosscheck-${words[4]}.md"
  return 0
}
# DRY_RESULT: gpu.name and gpu.memory_mib overrides, one a line, for a cell on an external server
host_gpu_overrides() {
  local name mib
  if IFS=, read -r name mib < <(nvidia-smi --query-gpu=name,memory.total \
      --format=csv,noheader,nounits 2> /dev/null | head -n 1) && [[ -n $name ]]; then
    printf "gpu.name='%s'\ngpu.memory_mib=%s\n" "$name" "${mib// /}"
  else
    python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["cell"]["gpu"]
print(f"gpu.name={g[\"name\"]!r}"); print(f"gpu.memory_mib={g[\"memory_mib\"]}")' "$1"
  fi
}
phase_serving_report() {
  cd "$R" || return 1
  local c cells=()
  for c in outputs/live/sv-* outputs/live/lc-*; do
    [[ -d $c && $c != */lc-st-* ]] && cells+=("$c")  # the start-up sweeps serve nothing
  done
  python3 -m pipeline.report.cli "${cells[@]}" --out outputs/live/serving-report
  echo "report exit $?"
  if [[ -d outputs/live/lc-st-seq && -d outputs/live/lc-st-pre ]]; then
    python3 -m benchmarks.live_h200.startup_sweeps outputs/live/lc-st-seq outputs/live/lc-st-pre \
      | tee outputs/live/startup-sweeps.md
  fi
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=frontier (LIVE_SGLANG=0.5.23 with the 0.5.23 bundle): the skip-softmax frontier on the
# trained model. fa3 at bf16 KV, then fmha_v2 at bf16 KV at each factor of the 0.5.19 sign-off (0,
# the moderate and aggressive of its checks/factors.env, 1e5, 1e6): one cell after another, each
# alone on the GPU, with the sign-off's evals and a speed phase at the prefill lengths synth_llama's
# 20,480-token context holds. Then the report, with the skipped shares HF measured on the same
# model (signoff/checks/skip_fraction.json), and the archive. fmha_v2's FlashInfer JIT (one module
# for every factor: the factor is a run-time argument) compiles in a bare warm-up server while FA3
# travels and the fa3 cell runs (the warm-up on CPUs 6-15, the fa3 cell on 0-5: the GPU is shared
# then, the CPUs are not); the fmha_v2 cells wait for it and run alone. The frontier's speed gain is
# each factor's fmha_v2 cell against the factor-0 one, all run alone. Launched as "report", so the
# tick stops waiting once it is done. LIVE_FRONTIER_FACTORS=0,10000 runs those factors; two A/A
# cells follow them (fa3_repeat, fmha_v2 at factor 0 again), as the 2026-12-02 lease ran them.
# Device time: benchmarks/results/live-h200/frontier-0.5.23/README.md.
# The speed phase's prompts: the synth_retrieval eval's own (chat template, the model's byte-level
# tokenizer: the ids skip_fraction.py measured the skipped shares on), cut to each length, so the
# speed column times the inputs the skipped-share column counts (random bytes, the earlier plan,
# skip about as much on this model, on the CPU reference: live README). Its 48 prompts
# (4,089-16,889 tokens, 12 of them >= 16,384) fill every shape; the cache is flushed before each
# run.
FRONTIER_SPEED=(speed.enabled=true "speed.prefill_tokens=[1024,4096,16384]" kv_dtype=bf16
  speed.prompts=eval:synth_retrieval)
start_frontier() {
  [[ $SGLANG == 0.5.23 ]] || { log "LIVE_PLAN=frontier needs LIVE_SGLANG=0.5.23"; return 0; }
  local checks=$R/benchmarks/results/live-h200/signoff/checks
  [[ -f $LIVE/hf.json ]] || xz -dc "$checks/hf.json.xz" > "$LIVE/hf.json"  # the warm-up's check
  has site ready && launch warm-fmha_v2-bf16 phase_warm fmha_v2 bf16 6-15
  has fa3 ready && launch report phase_frontier
}

phase_frontier() {
  cd "$R" || return 1
  local checks=$R/benchmarks/results/live-h200/signoff/checks sweep=outputs/live/frontier
  . "$checks/factors.env"
  # The fa3 cell runs while fmha_v2's JIT compiles on CPUs 6-15: on 0-5, as the speed plan's fa3
  # cells did, so the compilers do not slow its scheduler (a small model's prefill is CPU-bound).
  on_cpus 0-5 python3 -m pipeline -m "${COMMON[@]}" "${FRONTIER_SPEED[@]}" backend=fa3 \
    "hydra.sweep.dir=$sweep-base"
  while has warm-fmha_v2-bf16 started && ! has warm-fmha_v2-bf16 rc; do sleep 5; done
  python3 -m pipeline -m "${COMMON[@]}" "${FRONTIER_SPEED[@]}" backend=fmha_v2 \
    "skip_softmax.prefill=${LIVE_FRONTIER_FACTORS:-0,$SKIP_MODERATE,$SKIP_AGGRESSIVE,100000,1000000}" \
    $(baseline_of frontier-base) "hydra.sweep.dir=$sweep-v2"
  # The A/As the report reads every gain against (restart noise): fa3 again, alone (its first cell
  # shared the machine with the JIT), and fmha_v2 at factor 0 again. LIVE_FRONTIER_AA=0: none.
  local aa=()
  if [[ ${LIVE_FRONTIER_AA:-1} == 1 ]]; then
    python3 -m pipeline -m "${COMMON[@]}" "${FRONTIER_SPEED[@]}" backend=fa3_repeat \
      $(baseline_of frontier-base) "hydra.sweep.dir=$sweep-aa"
    python3 -m pipeline -m "${COMMON[@]}" "${FRONTIER_SPEED[@]}" backend=fmha_v2 \
      skip_softmax.prefill=0 $(baseline_of frontier-base) "hydra.sweep.dir=$sweep-v2-again"
    aa=("$sweep-aa" "$sweep-v2-again")
  fi
  python3 -m pipeline.report.cli "$sweep-base" "$sweep-v2" "${aa[@]}" --baseline-dir "$sweep-base" \
    --skip-fractions "$checks/skip_fraction.json" --frontier-per-eval --out outputs/live/report
  echo "report exit $?"
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=dependence (the 0.5.23 bundle, carried as for v23): issue 37's A/As on the trained
# model, two starts of one engine (fa3, fa3_repeat) at temperature 0 (greedy: a question's repeats
# within a start are copies, starts differ by batch nondeterminism) and at 0.6 (sampled), each a
# fixed design of LIVE_REPEATS repeats (no sequential stopping: every repeat is kept, so the report
# sees the within-question dependence whole), the four in parallel once FA3 is installed. Beside
# them a bare fa3 server records what the release sends for an aborted and a too-long request
# (issue 36: record_aborts.py). Then one report per temperature (the report pairs by engine, not
# by sampling), launched as "report" so the tick stops waiting once it is done.
DEP_CELLS=("g0-a backend=fa3 model.sampling.temperature=0.0"
  "g0-b backend=fa3_repeat model.sampling.temperature=0.0"
  "t6-a backend=fa3 model.sampling.temperature=0.6"
  "t6-b backend=fa3_repeat model.sampling.temperature=0.6")

start_dependence() {
  has fa3 ready || return 0
  local cell name all=1
  launch aborts phase_aborts
  has aborts rc || all=0
  for cell in "${DEP_CELLS[@]}"; do
    set -- $cell
    name=aa-$1; shift
    launch "$name" phase_sweep "$name" kv_dtype=auto sequential.enabled=false "$@"
    has "$name" rc || all=0
  done
  [[ $all == 1 ]] && launch report phase_dependence_report
}

phase_aborts() {  # a bare fa3 server with the cells' flags: the release's abort bodies
  cd "$R" || return 1
  local rc
  bare_server aborts all "" "${COMMON[@]}" backend=fa3 kv_dtype=auto
  rc=$?
  if [[ $rc == 0 ]]; then
    python3 -m benchmarks.live_h200.record_aborts "$BARE_URL" "$LIVE/bodies/aborts" 20480
    rc=$?
  fi
  stop_bare
  return $rc
}

phase_dependence_report() {
  cd "$R" || return 1
  local t
  for t in g0 t6; do
    python3 -m pipeline.report.cli "outputs/live/aa-$t-a" "outputs/live/aa-$t-b" \
      --baseline-dir "outputs/live/aa-$t-a" --out "outputs/live/report-$t"
    echo "report $t exit $?"
  done
  cp "$LIVE"/ready-*.txt outputs/live/ 2>/dev/null
  [[ -d $LIVE/bodies ]] && cp -r "$LIVE/bodies" outputs/live/
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=parity (issue 39 item 6; the 0.5.23 bundle, carried as for v23): teacher-forced logprob
# parity on the trained model, whose logits are real, CUDA graphs on. Every cell runs the
# synth_retrieval eval once (parity.prompts=eval:NAME must name one of the cell's evals) and then
# its parity phase on that eval's prompts, all 48 of them (4,089-16,889 tokens, in order of length:
# a smaller LIVE_PARITY_SEQUENCES keeps only the short ones):
#   p-base       fa3, bf16 KV: one sequence per prompt at temperature 1, re-scored by prefill;
#   p-NAME       once p-base ended ok, each PARITY_CELLS cell as its own sweep, all at once, each
#                re-scoring exactly p-base's ids (parity.sequences_from names its cell, so the fp8
#                and skip-softmax cells are read against bf16 exact fa3): fa3_repeat (the A/A, the
#                band), the reference pair (LIVE_PARITY_REFERENCE: flashinfer, or triton), fmha_v2
#                at bf16 and fp8 KV, fa3 at fp8 KV, fmha_v2 at each prefill skip-softmax factor
#                (LIVE_PARITY_FACTORS), and the losslessness arm: greedy outputs
#                (parity.greedy_sequences) of fa3 with speculation on and off, both under
#                --enable-deterministic-inference, and of fmha_v2 on and off (SGLang refuses
#                deterministic mode for trtllm_mha: its figures are shown, not judged);
#   warm-par-*   once the site is unpacked: a bare server per FlashInfer-JIT configuration the
#                cells need (fmha_v2 bf16 and fp8 KV, fmha_v2 without speculation, the reference),
#                compiling together while FA3 travels and p-base runs; a cell needing one waits
#                for it to end (a failed warm-up leaves the compile to the cell);
#   report       mtp-eval-report over every p-* sweep into outputs/live/parity-report, with the
#                skipped shares HF measured on these prompts (signoff/checks/skip_fraction.json),
#                and the archive.
# The servers share the GPU: a 262,144-token pool each (about 1.7 GB on this model) and
# mem_fraction_static 0.85, so the 13 fit an 80-GB card. LIVE_PARITY_SKIP="v2-f ..." drops cells
# (and a warm-up no remaining cell needs); LIVE_PARITY_OVERRIDES adds to every cell (a rehearsal:
# "parity.new_tokens=16 evals.synth_retrieval.dataset.limit=2").
PARITY_EXTRA=--sampling-backend,pytorch,--max-total-tokens,262144
PARITY_N=${LIVE_PARITY_SEQUENCES:-48}
PARITY_ARGS=(model=synth_llama server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200
  "${SIM_ARGS[@]}" server.mem_fraction_static=0.85 server.max_running_requests=128
  client.concurrency=128 "server.extra_args=[$PARITY_EXTRA]" server.startup_timeout_s=1500
  server.stop_grace_s=20 model.sampling.temperature=0.6 'evals=[synth_retrieval]'
  evals.synth_retrieval.repeats=1 sequential.enabled=false parity.enabled=true
  parity.prompts=eval:synth_retrieval "parity.sequences=$PARITY_N")
[[ $SGLANG == 0.5.23 ]] && PARITY_ARGS+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python)
read -r -a _parity_more <<< "${LIVE_PARITY_OVERRIDES:-}"
PARITY_ARGS+=("${_parity_more[@]}")
# The same model without its draft (a declared non-speculative cell: docs/reading-results.md).
SPEC_OFF="model.speculative.algorithm=null model.speculative.num_steps=null"
SPEC_OFF+=" model.speculative.eagle_topk=null model.speculative.num_draft_tokens=null"
GREEDY="parity.greedy_sequences=${LIVE_PARITY_GREEDY:-$PARITY_N}"
DET="server.extra_args=[$PARITY_EXTRA,--enable-deterministic-inference]"
PARITY_REF=${LIVE_PARITY_REFERENCE:-flashinfer}
# NAME, the warm-up it waits for (-: none, fa3 needs no FlashInfer JIT), its overrides. Passed to
# the phase by NAME only: launch's command line is parsed again, and these hold brackets.
PARITY_BASE="base - backend=fa3 kv_dtype=auto"
PARITY_CELLS=("aa - backend=fa3_repeat kv_dtype=auto" "fa3-f - backend=fa3 kv_dtype=fp8_e4m3"
  "det-on - backend=fa3 kv_dtype=auto $DET $GREEDY"
  "det-off - backend=fa3 kv_dtype=auto $DET $GREEDY $SPEC_OFF"
  "ref ref backend=$PARITY_REF kv_dtype=auto"
  "v2 v2 backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=0 $GREEDY"
  "v2-off v2-off backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=0 $GREEDY $SPEC_OFF"
  "v2-f v2-f backend=fmha_v2 kv_dtype=fp8_e4m3 skip_softmax.prefill=0")
for _f in ${LIVE_PARITY_FACTORS:-10000 30000 100000 1000000}; do
  PARITY_CELLS+=("v2-s$_f v2 backend=fmha_v2 kv_dtype=auto skip_softmax.prefill=$_f")
done
# NAME and the overrides of each warm-up (the skip factor is a run-time argument: one module).
PARITY_WARM=("v2 backend=fmha_v2 kv_dtype=auto" "v2-off backend=fmha_v2 kv_dtype=auto $SPEC_OFF"
  "v2-f backend=fmha_v2 kv_dtype=fp8_e4m3" "ref backend=$PARITY_REF kv_dtype=auto")

start_parity() {
  [[ $SGLANG == 0.5.23 ]] || { log "LIVE_PLAN=parity needs LIVE_SGLANG=0.5.23"; return 0; }
  local cell words name src all=1
  for cell in "${PARITY_WARM[@]}"; do
    name=${cell%% *}
    parity_needs "$name" || continue
    has site ready && launch "warm-par-$name" phase_parity_warm "$name"
    has "warm-par-$name" rc || all=0
  done
  has fa3 ready && launch p-base phase_parity base
  has p-base rc || return 0
  src=$(parity_base)
  for cell in "${PARITY_CELLS[@]}"; do
    read -r -a words <<< "$cell"
    name=p-${words[0]}
    if [[ " ${LIVE_PARITY_SKIP:-} " == *" ${words[0]} "* ]]; then
      mark_skipped "$name" "LIVE_PARITY_SKIP"; continue
    fi
    [[ -n $src ]] || { mark_skipped "$name" "p-base kept no sequences to re-score"; continue; }
    [[ ${words[1]} == - ]] || has "warm-par-${words[1]}" rc || { all=0; continue; }
    launch "$name" phase_parity "${words[0]}"
    has "$name" rc || all=0
  done
  [[ $all == 1 ]] && launch report phase_parity_report
}

parity_needs() {  # WARM: whether a cell not in LIVE_PARITY_SKIP waits for that warm-up
  local cell words
  for cell in "${PARITY_CELLS[@]}"; do
    read -r -a words <<< "$cell"
    [[ ${words[1]} == "$1" && " ${LIVE_PARITY_SKIP:-} " != *" ${words[0]} "* ]] && return 0
  done
  return 1
}

mark_skipped() {  # NAME WHY: the phase is marked done without running
  has "$1" started && return 0
  touch "$STATE/$1.started"; echo skipped > "$STATE/$1.rc"; log "skipped $1 ($2)"
}

# p-base's cell folder when it ended ok with its sequences (else nothing).
parity_base() {
  local result
  result=$(ls -1 "$R"/outputs/live/p-base/*/result.json 2>/dev/null | head -n 1)
  [[ -n $result && -f $(dirname "$result")/parity/sequences.jsonl ]] \
    && grep -q '"status": "ok"' "$result" && dirname "$result"
}

parity_cell() {  # NAME: the words of that cell (base or a PARITY_CELLS name) in PARITY_WORDS
  local cell
  PARITY_WORDS=()
  for cell in "$PARITY_BASE" "${PARITY_CELLS[@]}"; do
    [[ ${cell%% *} == "$1" ]] && { read -r -a PARITY_WORDS <<< "$cell"; return 0; }
  done
  echo "no parity cell $1" >&2
  return 1
}

phase_parity() {  # NAME: the cell into outputs/live/p-NAME; a candidate re-scores p-base's ids
  cd "$R" || return 1
  local src=()
  parity_cell "$1" || return 2
  [[ $1 == base ]] || src=("parity.sequences_from=$(parity_base)")
  python3 -m pipeline -m "${PARITY_ARGS[@]}" "${PARITY_WORDS[@]:2}" "${src[@]}" \
    "hydra.sweep.dir=outputs/live/p-$1"
}

phase_parity_warm() {  # NAME: a bare server with that warm-up's flags, until ready (its JIT)
  cd "$R" || return 1
  local rc warm words=()
  for warm in "${PARITY_WARM[@]}"; do
    [[ ${warm%% *} == "$1" ]] && read -r -a words <<< "$warm"
  done
  (( ${#words[@]} )) || { echo "no parity warm-up $1"; return 2; }
  bare_server "par-$1" all "" "${PARITY_ARGS[@]}" "${words[@]:1}"
  rc=$?
  stop_bare
  return $rc
}

# Every sweep; baselines come from all but p-det-on: the report pairs a candidate with the fa3
# cell that ended last, and the deterministic fa3 cell must not stand in for p-base. The
# spec-off cells stay in the pool: the losslessness check reads them there.
phase_parity_report() {
  cd "$R" || return 1
  local checks=$R/benchmarks/results/live-h200/signoff/checks sweep sweeps=() bases=()
  for sweep in outputs/live/p-*; do
    [[ -d $sweep ]] || continue
    sweeps+=("$sweep")
    [[ $sweep == */p-det-on ]] || bases+=(--baseline-dir "$sweep")
  done
  # The reference pair sets the band: two fa3 starts re-score bit-identically (A/A band 0, every
  # other kernel NO-GO by construction: 2026-12-06, ../results/live-h200/parity-0.5.23/).
  printf 'parity:\n  reference: %s\n' "$PARITY_REF" > outputs/live/parity-policy.yaml
  python3 -m pipeline.report.cli "${sweeps[@]}" "${bases[@]}" \
    --tolerance outputs/live/parity-policy.yaml \
    --skip-fractions "$checks/skip_fraction.json" --out outputs/live/parity-report
  echo "report exit $?"
  cp "$LIVE"/ready-*.txt outputs/live/ 2>/dev/null
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=train-longctx (the 0.5.23 bundle, carried as for v23): issue 41's long-context model.
# "train" needs only the repo and the machine's python (starts on the first call, while the site
# unpacks): train_longctx.py's target (~9 min) and EAGLE3 draft (under a minute) stages, each
# stopping at its time limit, into $LIVE/longctx, then HF's greedy reference at 4k-128k
# (longctx_greedy.py). Then, side by side: "hfeval" (the eval stage: metrics.json, ~5 min) and
# "serve" (once the site and FA3 are there: a bare SGLang server per backend, fa3 and fmha_v2,
# with the synth_longctx cell's flags on the trained folders, and the greedy check against HF);
# "lccell" after serve: the trained pair in one pipeline cell (phase_lc_cell, as LIVE_PLAN=longctx-cell
# runs it: outputs/live/lc-cell; LIVE_LC_TRAIN_CELL=0 skips it); "report" when all have ended: the
# archive (outputs/live/longctx-model: recipe, metrics, logs; the weights return as chunks).
# LIVE_TRAIN_ARGS replaces train_longctx's options (a rehearsal: --preset cpu and a few steps);
# LIVE_LC_BACKENDS=fa3 skips fmha_v2's server; with fmha_v2, "jit" compiles its FlashInfer kernels
# (6-12 min cold) during training, in a bare server over an untrained twin, and serve waits for it.
LC_DIR=$LIVE/longctx
LC_COMMON=(model=synth_longctx server=$SERVER_KIND server.sglang_version=$SGLANG gpu=h200
  "${SIM_ARGS[@]}" server.mem_fraction_static=0.6 "server.extra_args=[$EXTRA_ARGS]"
  server.startup_timeout_s=1500 server.stop_grace_s=20 kv_dtype=bf16)
[[ $SGLANG == 0.5.23 ]] && LC_COMMON+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python)
start_train_longctx() {
  launch train phase_train_longctx
  # fmha_v2's cold FlashInfer JIT (6-12 min) compiles during training, on CPUs 10-15, in a bare
  # server over an untrained model of the same shapes: the kernels depend on the shapes only.
  [[ ${LIVE_LC_BACKENDS:-fa3 fmha_v2} == *fmha_v2* ]] && has site ready && launch jit phase_jit_longctx
  has train rc || return 0
  # HF's accuracy and acceptance (about 5 min) beside SGLang's start and greedy check: the model
  # is small, so both fit on the GPU, and neither is timed.
  launch hfeval phase_eval_longctx
  { has jit rc || [[ ${LIVE_LC_BACKENDS:-fa3 fmha_v2} != *fmha_v2* ]]; } \
    && has site ready && has fa3 ready && launch serve phase_serve_longctx
  # The new model in a pipeline cell (issue 41's committed live cell) once serve's servers are
  # gone: on the small model it ends before the HF eval does, so the lease is no longer.
  [[ ${LIVE_LC_TRAIN_CELL:-1} == 1 ]] && has serve rc && launch lccell phase_lc_cell
  has hfeval rc && has serve rc && { has lccell rc || [[ ${LIVE_LC_TRAIN_CELL:-1} != 1 ]]; } \
    && launch report phase_archive_longctx
}

phase_train_longctx() {  # target and draft, their tar in chunks, HF's greedy reference
  cd "$R" || return 1
  local py="${MTP_EVAL_BASE_PYTHONPATH:-}"
  # shellcheck disable=SC2086  # LIVE_TRAIN_ARGS is a list of options; the last --stages wins
  PYTHONPATH="$py" "$HF_PY" -m benchmarks.live_h200.train_longctx "$LC_DIR" \
    ${LIVE_TRAIN_ARGS:---seed 0} --stages target,draft || return 1
  # The weights come back through $OUT (16 MiB a file): the folder as 15-MiB chunks + manifest.
  tar -cf "$LIVE/longctx-model.tar" -C "$LIVE" longctx \
    && python3 -m benchmarks.live_h200.chunks split "$LIVE/longctx-model.tar" "$LIVE/model-parts" \
      --chunk-mib 15 || return 1
  PYTHONPATH="$py" "$HF_PY" -m benchmarks.live_h200.longctx_greedy "$LC_DIR/target" \
    "$LIVE/hf-longctx.json" ${LIVE_GREEDY_ARGS:-}
}

phase_jit_longctx() {  # the shapes' untrained twin (two steps), served once by fmha_v2, stopped
  cd "$R" || return 1
  local rc twin=$LIVE/longctx-jit
  # shellcheck disable=SC2086
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH:-}" "$HF_PY" -m benchmarks.live_h200.train_longctx "$twin" \
    --steps 2 --max-seconds 5 --draft-steps 2 --draft-seconds 5 --workers 2 \
    ${LIVE_TRAIN_ARGS:---seed 0} --stages target,draft || return 1
  bare_server longctx-jit-fmha_v2 10-15 "" "${LC_COMMON[@]}" "model.path=$twin/target" \
    "model.speculative.draft_model_path=$twin/draft" backend=fmha_v2
  rc=$?
  stop_bare
  return $rc
}

phase_eval_longctx() {  # HF accuracy per task and length, the draft's acceptance: metrics.json
  cd "$R" || return 1
  # shellcheck disable=SC2086
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH:-}" "$HF_PY" -m benchmarks.live_h200.train_longctx \
    "$LC_DIR" ${LIVE_TRAIN_ARGS:---seed 0} --stages eval
}

phase_serve_longctx() {
  cd "$R" || return 1
  local backend rc=0
  [[ $(cat "$STATE/train.rc") == 0 ]] || return 1
  for backend in ${LIVE_LC_BACKENDS:-fa3 fmha_v2}; do
    bare_server "longctx-$backend" all "" "${LC_COMMON[@]}" "model.path=$LC_DIR/target" \
      "model.speculative.draft_model_path=$LC_DIR/draft" "backend=$backend" || { rc=1; continue; }
    python3 -m benchmarks.live_h200.greedy_check server "$BARE_URL" "$LIVE/hf-longctx.json" \
      "$LIVE/greedy-longctx-$backend.json" "longctx-$backend" || rc=1
    stop_bare
  done
  return $rc
}

phase_archive_longctx() {  # outputs/live/longctx-model: recipe, metrics, logs (no weights)
  cd "$R" || return 1
  mkdir -p outputs/live/longctx-model
  # The weights return as model-parts' chunks: in this archive they made it too big to return
  # (2026-12-06: metrics.json was lost with it), so only the folder's json files go in.
  cp "$LC_DIR"/*.json outputs/live/longctx-model/ 2>/dev/null
  cp "$LIVE"/hf-longctx.json "$LIVE"/greedy-longctx-*.json "$LIVE"/ready-*.txt "$LIVE"/logs/train.log \
    "$LIVE"/logs/hfeval.log outputs/live/longctx-model/ 2>/dev/null
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

# LIVE_PLAN=longctx-cell: the trained long-context model, carried as longctx-model.tar's chunks
# (the train-longctx lease's return) beside the 0.5.23 bundle, served in one pipeline cell
# (model=synth_longctx, EAGLE3, fa3 unless LIVE_LC_CELL_BACKEND says) on the six long-context
# evals at LIVE_LC_CELL_LENGTHS, LIVE_LC_CELL_SAMPLES questions each: accuracy and accept length
# measured by the pipeline on SGLang, the committed live cell of issue 41.
start_longctx_cell() {
  [[ -f ${MTP_CHUNKS:-/tmp/mtp-chunks}/longctx-model.tar.manifest ]] && launch lcmodel phase_lc_model
  has lcmodel rc && has fa3 ready && launch lccell phase_lc_cell
  has lccell rc && launch report phase_report lc-cell
}

phase_lc_model() {  # the carried chunks -> $LC_DIR (target, draft, recipe)
  local chunks=${MTP_CHUNKS:-/tmp/mtp-chunks}
  until python3 "$R/benchmarks/live_h200/chunks.py" assemble "$chunks/longctx-model.tar.manifest" \
      "$LIVE/longctx-model.tar"; do sleep 5; done  # the next call carries the missing chunks
  tar -xf "$LIVE/longctx-model.tar" -C "$LIVE" && ls "$LC_DIR"/target/model.safetensors
}

phase_lc_cell() {
  cd "$R" || return 1
  local from=lcmodel  # the carried model; the train plan's own, trained in this lease
  [[ ${LIVE_PLAN:-} == train-longctx ]] && from=train
  [[ $(cat "$STATE/$from.rc") == 0 ]] || return 1
  local lengths=${LIVE_LC_CELL_LENGTHS:-[4096,32768,131072]}
  python3 -m pipeline "${LC_COMMON[@]}" "model.path=$LC_DIR/target" \
    "model.speculative.draft_model_path=$LC_DIR/draft" "backend=${LIVE_LC_CELL_BACKEND:-fa3}" \
    'evals=[longctx]' "evals.longctx_niah_single.longctx.lengths=$lengths" \
    "evals.longctx_niah_single.longctx.samples=${LIVE_LC_CELL_SAMPLES:-3}" \
    evals.longctx_niah_single.longctx.tokens=bytes output_dir=outputs/live/lc-cell
}

# LIVE_PLAN=longctx-frontier (issue 41 items 2 and 3; the 0.5.23 bundle and the trained long-context
# model's chunks, carried as for longctx-cell: the site first, then the model, then FA3): the
# skip-softmax frontier at long context on that model, CUDA graphs on, fa3 against fmha_v2 at the
# factors 0 / 1e4 / 3e4 / 1e5 / 1e6, bf16 and fp8 KV. Every cell is one pipeline run of
# experiment=longctx_frontier, of two kinds:
#   a-NAME  accuracy, accept length and parity (outputs/live/lf-acc/NAME): longctx_niah_single and
#           the other LIVE_LF_TASKS at LIVE_LF_LENGTHS, LIVE_LF_SAMPLES questions a length, then
#           the parity phase on niah_single's prompts, whole, one sequence each (the position bins
#           start at 3/4 of each length: a bin is a length); a-base (fa3, bf16 KV) generates the
#           sequences, every other a-cell re-scores exactly its ids. Untimed: up to
#           LIVE_LF_PARALLEL (6) side by side, each with a 262,144-token pool (LIVE_LF_POOL).
#   s-NAME  prefill speed (outputs/live/lf-speed/NAME): niah_single's LIVE_LF_SPEED_PROMPTS
#           questions of LIVE_LF_SOURCE tokens (the longest length + 2,048), cut to each length,
#           a warm-up and 3 repeats, alone on the GPU.
# Beside them: lcmodel (the weights, phase_lc_model); jit-bf16 and jit-fp8_e4m3 (fmha_v2's cold
# FlashInfer JIT, about 9 min, in bare servers with the speed cells' argv on CPUs 10-15, once the
# site and the weights are there; a cell started while they compile runs on CPUs 0-9;
# LIVE_LF_JIT=0: none, for a carried cache); tiles (longctx_skip.py, machine python: HF's share of
# skipped tiles per length on the speed cells' prompts; no speed cell runs beside it); report (an
# accuracy and a speed mtp-eval-report, then the archive without the weights). Each cell's start
# and end land in $LIVE/logs/lf-cells.log. LIVE_LF_SKIP drops cells by name or glob
# ('s-v2*-[13]e[45]': the middle factors' speed cells); LIVE_LF_OVERRIDES adds to every cell.
lf_join() { local IFS=,; echo "$*"; }
read -r -a LF_LENGTHS <<< "${LIVE_LF_LENGTHS:-16384 32768 65536 131072}"
LF_SAMPLES=${LIVE_LF_SAMPLES:-5}
LF_SOURCE=${LIVE_LF_SOURCE:-$(( $(printf '%s\n' "${LF_LENGTHS[@]}" | sort -n | tail -n 1) + 2048 ))}
LF_BINS=0
for _l in "${LF_LENGTHS[@]}"; do LF_BINS+=",$((_l * 3 / 4))"; done
LF_ARGS=(experiment=longctx_frontier hydra.mode=RUN server=$SERVER_KIND server.sglang_version=$SGLANG
  gpu=h200 "${SIM_ARGS[@]}" server.mem_fraction_static=0.85
  "server.extra_args=[--sampling-backend,pytorch,--max-total-tokens,${LIVE_LF_POOL:-262144}]"
  server.startup_timeout_s=1500 server.stop_grace_s=20 client.progress=false
  "model.path=$LC_DIR/target" "model.speculative.draft_model_path=$LC_DIR/draft")
# SGLang 0.5.23 takes the pipeline's stop (SIGTERM) for a crash and, before its diagnostics
# (py-spy, CUDA coredump: both on by default), sleeps 5 s: a lease of 14 serial cells paid a minute.
[[ $SGLANG == 0.5.23 ]] && LF_ARGS+=(+server.env.SGLANG_UNIFIED_RADIX_TREE_CORE_BACKEND=python
  +server.env.SGLANG_PYSPY_DUMP_BEFORE_CRASH=0 +server.env.SGLANG_CUDA_COREDUMP_BEFORE_CRASH=0)
LF_ACC=("${LF_ARGS[@]}" "evals.longctx_niah_single.longctx.lengths=[$(lf_join "${LF_LENGTHS[@]}")]"
  "evals.longctx_niah_single.longctx.samples=$LF_SAMPLES" speed.enabled=false parity.enabled=true
  parity.prompts=eval:longctx_niah_single "parity.sequences=$(( ${#LF_LENGTHS[@]} * LF_SAMPLES ))"
  "parity.position_bins=[$LF_BINS]")
LF_SPEED=("${LF_ARGS[@]}" "evals.longctx_niah_single.longctx.lengths=[$LF_SOURCE]"
  "evals.longctx_niah_single.longctx.samples=${LIVE_LF_SPEED_PROMPTS:-4}" speed.enabled=true
  "speed.prefill_tokens=[$(lf_join "${LF_LENGTHS[@]}")]" "speed.prefill_batches=[]"
  "speed.decode_batches=[]" speed.repeats=3 speed.prompts=eval:longctx_niah_single)
for _t in niah_multikey niah_multivalue niah_multiquery vt fwe; do  # niah_single: every cell's
  LF_SPEED+=("~evals.longctx_$_t")
  [[ " ${LIVE_LF_TASKS:-niah_single niah_multikey} " == *" $_t "* ]] || LF_ACC+=("~evals.longctx_$_t")
done
read -r -a _lf_more <<< "${LIVE_LF_OVERRIDES:-}"
LF_ACC+=("${_lf_more[@]}")
LF_SPEED+=("${_lf_more[@]}")
# NAME NEEDS BACKEND KV FACTOR, most important first. NEEDS, joined by +: - (nothing but the
# model and FA3), base (a-base's sequences), jit-KV (that warm-up ended, when it ran). The first
# step whose needs are met starts; a speed cell only once nothing else runs, and no later step
# starts before it. So while the JIT compiles, the fa3 steps go first (s-fa3, a-base, s-fa3-f,
# s-aa); then fmha_v2 at factors 0 and 1e6 against fa3, bf16 then fp8 KV, and fmha_v2 at factor 0
# again at each KV dtype (its own A/As: neither lease of 2026-12-06 reached them); then the
# accuracy cells not yet run; then the middle factors' speed. a-fi is the
# parity reference pair (flashinfer re-scoring a-base's ids): fa3's A/A re-scores bit-exactly, so
# without it the parity band is 0 and every other kernel reads NO-GO (lease 1, 2026-12-06).
LF_STEPS=("s-fa3 - fa3 bf16 0" "a-base - fa3 bf16 0"
  "s-v2-0 jit-bf16 fmha_v2 bf16 0" "s-v2-1e6 jit-bf16 fmha_v2 bf16 1000000"
  "s-fa3-f - fa3 fp8_e4m3 0"
  "s-v2f-0 jit-fp8_e4m3 fmha_v2 fp8_e4m3 0" "s-v2f-1e6 jit-fp8_e4m3 fmha_v2 fp8_e4m3 1000000"
  "s-v2-0b jit-bf16 fmha_v2 bf16 0" "s-v2f-0b jit-fp8_e4m3 fmha_v2 fp8_e4m3 0"
  "s-aa - fa3_repeat bf16 0"
  "a-aa base fa3_repeat bf16 0" "a-fi base flashinfer bf16 0" "a-fa3-f base fa3 fp8_e4m3 0"
  "a-v2-0 base+jit-bf16 fmha_v2 bf16 0" "a-v2-1e6 base+jit-bf16 fmha_v2 bf16 1000000"
  "a-v2f-0 base+jit-fp8_e4m3 fmha_v2 fp8_e4m3 0"
  "a-v2f-1e6 base+jit-fp8_e4m3 fmha_v2 fp8_e4m3 1000000"
  "a-v2-1e4 base+jit-bf16 fmha_v2 bf16 10000" "a-v2-3e4 base+jit-bf16 fmha_v2 bf16 30000"
  "a-v2-1e5 base+jit-bf16 fmha_v2 bf16 100000"
  "a-v2f-1e4 base+jit-fp8_e4m3 fmha_v2 fp8_e4m3 10000"
  "a-v2f-3e4 base+jit-fp8_e4m3 fmha_v2 fp8_e4m3 30000"
  "a-v2f-1e5 base+jit-fp8_e4m3 fmha_v2 fp8_e4m3 100000"
  "s-v2-1e4 jit-bf16 fmha_v2 bf16 10000" "s-v2-3e4 jit-bf16 fmha_v2 bf16 30000"
  "s-v2-1e5 jit-bf16 fmha_v2 bf16 100000"
  "s-v2f-1e4 jit-fp8_e4m3 fmha_v2 fp8_e4m3 10000" "s-v2f-3e4 jit-fp8_e4m3 fmha_v2 fp8_e4m3 30000"
  "s-v2f-1e5 jit-fp8_e4m3 fmha_v2 fp8_e4m3 100000")

# LIVE_LF_ORDER="s-v2f-0 s-v2-0 ...": these steps first, in that order, the rest after them as
# above (a speed-only lease puts what it came for first; a name not in LF_STEPS stops the tick).
if [[ -n ${LIVE_LF_ORDER:-} ]]; then
  _lf_first=() _lf_rest=()
  for _n in ${LIVE_LF_ORDER}; do
    _found=
    for _s in "${LF_STEPS[@]}"; do [[ ${_s%% *} == "$_n" ]] && _lf_first+=("$_s") && _found=1; done
    [[ -n $_found ]] || { echo "live_signoff: LIVE_LF_ORDER names $_n, not a step of" \
      "LIVE_PLAN=longctx-frontier (LF_STEPS: s-fa3, a-base, s-v2-0, ...)" >&2; exit 2; }
  done
  for _s in "${LF_STEPS[@]}"; do [[ " $LIVE_LF_ORDER " == *" ${_s%% *} "* ]] || _lf_rest+=("$_s"); done
  LF_STEPS=("${_lf_first[@]}" "${_lf_rest[@]}")
fi

start_longctx_frontier() {
  [[ $SGLANG == 0.5.23 ]] || { log "LIVE_PLAN=longctx-frontier needs LIVE_SGLANG=0.5.23"; return 0; }
  local kv
  [[ -f ${MTP_CHUNKS:-/tmp/mtp-chunks}/longctx-model.tar.manifest ]] && launch lcmodel phase_lc_model
  [[ $(cat "$STATE/lcmodel.rc" 2>/dev/null) == 0 ]] || return 0
  for kv in bf16 fp8_e4m3; do
    lf_needed "jit-$kv" && has site ready && launch "jit-$kv" phase_lf_jit "$kv"
  done
  [[ ${LIVE_LF_TILES:-1} == 1 ]] && launch tiles phase_lf_tiles
  has site ready || return 0  # FA3 gates only the fa3 steps (lf_schedule): on 0.5.23 fmha_v2
  lf_schedule                 # and flashinfer never load flash_ops, so they run while it travels
  lf_ended && launch report phase_lf_report
}

lf_schedule() {  # start what LF_STEPS' order lets start now
  local step words name acc=0 speed=0
  for step in "${LF_STEPS[@]}"; do
    name=${step%% *}
    has "$name" started && ! has "$name" rc || continue
    [[ $name == s-* ]] && speed=$((speed + 1)) || acc=$((acc + 1))
  done
  for step in "${LF_STEPS[@]}"; do
    read -r -a words <<< "$step"
    name=${words[0]}
    has "$name" started && continue
    lf_dropped "$name" && { mark_skipped "$name" "LIVE_LF_SKIP"; continue; }
    if [[ ${words[1]} == *base* ]] && has a-base rc && [[ -z $(lf_base) ]]; then
      mark_skipped "$name" "a-base kept no parity sequences to re-score"; continue
    fi
    lf_ready "${words[1]}" || continue  # a step still waiting lets the later ones go first
    [[ ${words[2]} == fa3* ]] && ! has fa3 ready && continue
    if [[ $name == s-* ]]; then  # the GPU is this cell's alone, now or once the others end
      (( acc + speed == 0 )) && ! lf_running tiles && launch "$name" phase_lf_cell "$name"
      return 0
    fi
    (( speed == 0 && acc < ${LIVE_LF_PARALLEL:-6} )) || return 0
    launch "$name" phase_lf_cell "$name"
    acc=$((acc + 1))
  done
}

lf_running() { has "$1" started && ! has "$1" rc; }
lf_compiling() { lf_running jit-bf16 || lf_running jit-fp8_e4m3; }

lf_dropped() {  # NAME: whether a word of LIVE_LF_SKIP (a name or a glob) names it
  local word words=()
  read -r -a words <<< "${LIVE_LF_SKIP:-}"
  for word in "${words[@]}"; do
    # shellcheck disable=SC2053  # the word is a pattern
    [[ $1 == $word ]] && return 0
  done
  return 1
}

lf_ready() {  # NEEDS: each of its +-joined needs met
  local need needs=()
  IFS=+ read -r -a needs <<< "$1"
  for need in "${needs[@]}"; do
    case $need in
      -) ;;
      base) has a-base rc || return 1 ;;
      jit-*) lf_running "$need" && return 1 ;;  # one never started: not wanted (LIVE_LF_JIT=0)
    esac
  done
  return 0
}

lf_needed() {  # NEED: whether a step not dropped waits for it (and LIVE_LF_JIT allows warm-ups)
  local step words
  [[ ${LIVE_LF_JIT:-1} == 1 ]] || return 1
  for step in "${LF_STEPS[@]}"; do
    read -r -a words <<< "$step"
    [[ +${words[1]}+ == *+$1+* ]] && ! lf_dropped "${words[0]}" && return 0
  done
  return 1
}

lf_ended() {  # every step and the tiles' count have ended
  local step
  for step in "${LF_STEPS[@]}"; do has "${step%% *}" rc || return 1; done
  ! lf_running tiles
}

lf_base() {  # a-base's cell folder when it ended ok with its parity sequences (else nothing)
  local cell=$R/outputs/live/lf-acc/a-base
  [[ -f $cell/parity/sequences.jsonl ]] && grep -q '"status": "ok"' "$cell/result.json" \
    && echo "$cell"
}

phase_lf_cell() {  # NAME: that LF_STEPS cell; its start and end into lf-cells.log
  cd "$R" || return 1
  local step words=() args=() dir cpus=all t0 rc
  for step in "${LF_STEPS[@]}"; do [[ ${step%% *} == "$1" ]] && read -r -a words <<< "$step"; done
  (( ${#words[@]} )) || { echo "no longctx-frontier cell $1"; return 2; }
  if [[ $1 == s-* ]]; then
    args=("${LF_SPEED[@]}")
    dir=outputs/live/lf-speed/$1
  else
    args=("${LF_ACC[@]}")
    dir=outputs/live/lf-acc/$1
    [[ $1 == a-base ]] || args+=("parity.sequences_from=$(lf_base)")
  fi
  lf_compiling && cpus=0-9  # the compilers have CPUs 10-15
  t0=$(date +%s.%N)
  on_cpus "$cpus" python3 -m pipeline "${args[@]}" "backend=${words[2]}" "kv_dtype=${words[3]}" \
    "skip_softmax.prefill=${words[4]}" "hydra.run.dir=$dir"
  rc=$?
  echo "$1 $t0 $(date +%s.%N) cpus=$cpus rc=$rc" >> "$LIVE/logs/lf-cells.log"
  return $rc
}

phase_lf_jit() {  # KV: a bare fmha_v2 server with the speed cells' argv, until ready (its JIT)
  cd "$R" || return 1
  local rc
  bare_server "lf-jit-$1" 10-15 "" "${LF_SPEED[@]}" backend=fmha_v2 "kv_dtype=$1" \
    skip_softmax.prefill=0
  rc=$?
  stop_bare
  return $rc
}

phase_lf_tiles() {  # HF's skipped share per length, on the speed cells' prompts
  cd "$R" || return 1
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH:-}" "$HF_PY" -m benchmarks.live_h200.longctx_skip \
    "$LC_DIR/target" "$LIVE/lf-skip.json" --source "$LF_SOURCE" \
    --samples "${LIVE_LF_SPEED_PROMPTS:-4}" --lengths "${LF_LENGTHS[@]}"
}

# Two reports: the frontier takes one cell per factor, and its speed reference is the factor-0
# cell of the sweep that ran the most factors, so accuracy cells (no speed) and speed cells in one
# report would each show half a point. Each cell is a DIR of its own: a --baseline-dir that is a DIR
# stays under test. Baselines: fa3 at each KV dtype (the policy pairs by it) and, in the accuracy
# report, a-aa. The parity band comes from the A/A and, when a-fi ran, from flashinfer as the
# reference pair (lf-policy.yaml): the report reads both from every cell it was given.
phase_lf_report() {
  cd "$R" || return 1
  local kind cell dirs bases skip=() policy=()
  [[ -f $LIVE/lf-skip.json ]] && skip=(--skip-fractions "$LIVE/lf-skip.json")
  if [[ -f outputs/live/lf-acc/a-fi/result.json ]]; then  # the reference pair sets the band
    printf 'parity:\n  reference: flashinfer\n' > outputs/live/lf-policy.yaml
    policy=(--tolerance outputs/live/lf-policy.yaml)
  fi
  for kind in acc speed; do
    dirs=() bases=()
    for cell in outputs/live/lf-$kind/*; do
      [[ -f $cell/result.json ]] || continue
      dirs+=("$cell")
      [[ $cell == */[as]-fa3 || $cell == */[as]-fa3-f || $cell == */a-base || $cell == */a-aa ]] \
        && bases+=(--baseline-dir "$cell")
    done
    (( ${#dirs[@]} )) || continue
    python3 -m pipeline.report.cli "${dirs[@]}" "${bases[@]}" "${skip[@]}" "${policy[@]}" \
      --frontier-per-eval --out "outputs/live/lf-report-$kind"
    echo "report $kind exit $?"
  done
  cp "$LIVE"/lf-skip.json "$LIVE"/ready-*.txt "$LIVE"/logs/lf-cells.log outputs/live/ 2>/dev/null
  tar -czf "$LIVE/live-results.tgz" -C outputs live  # the weights stay in $LIVE/longctx
}

phase_report() {  # [SWEEP...]: the sign-off's sweeps unless named
  cd "$R" || return 1
  local sweeps=("${@/#/outputs/live/}")
  (( $# )) || sweeps=(outputs/live/base-* outputs/live/s-*)
  python3 -m pipeline.report.cli "${sweeps[@]}" --out outputs/live/report
  echo "report exit $?"
  cp "$LIVE"/*.json "$LIVE"/factors.env "$LIVE"/ready-*.txt outputs/live/ 2>/dev/null
  [[ -d $LIVE/bodies ]] && cp -r "$LIVE/bodies" outputs/live/
  tar -czf "$LIVE/live-results.tgz" -C outputs live
}

status() {
  local s
  for s in "$STATE"/*.started; do
    s=$(basename "$s" .started)
    printf '%-24s %s\n' "$s" "$(cat "$STATE/$s.rc" 2>/dev/null || echo running)"
  done
  cat "$LIVE"/factors.env 2>/dev/null
  grep -h "greedy_check \|ready after" "$LIVE"/logs/warm-*.log 2>/dev/null
  for s in "$LIVE"/logs/base-*.log "$LIVE"/logs/s-*.log "$LIVE"/logs/g-*.log "$LIVE"/logs/g2-*.log \
    "$LIVE"/logs/p-*.log "$LIVE"/logs/a-*.log; do
    [[ -f $s ]] && { echo "== $(basename "$s")"; grep -v "^\s*$" "$s" | tail -n 4 | cut -c1-220; }
  done
  nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader 2>/dev/null
}

# The call's copy has no .git: its cells record mtp-eval's commit from MTP_EVAL_COMMIT, typed
# literally in the tick command (README section 1); the phases this tick starts inherit it.
commit_of_copy() {
  if [[ -z ${MTP_EVAL_COMMIT:-} ]]; then
    log "MTP_EVAL_COMMIT unset: cells started now record mtp-eval commit '?' (put MTP_EVAL_COMMIT=<git rev-parse HEAD, typed out> before bash)"
  elif [[ $MTP_EVAL_COMMIT =~ ^[0-9a-fA-F]{7,40}$ ]]; then
    export MTP_EVAL_COMMIT; log "mtp-eval commit $MTP_EVAL_COMMIT (MTP_EVAL_COMMIT)"
  else
    log "MTP_EVAL_COMMIT=$MTP_EVAL_COMMIT is not a commit id (7-40 hex digits): nothing started; type the sha itself"
    return 2
  fi
}

tick() {
  local wait=${1:-0} t0
  t0=$(date +%s)
  mkdir -p "$STATE" "$LIVE/logs" "$LIVE/bin"
  commit_of_copy || return 2
  sync_repo "$(pwd)" || return 2
  stage_and_setup || log "site not ready yet (setup status $?)"
  start_phases
  while (( $(date +%s) - t0 < wait )) && ! has report rc; do
    sleep 5
    start_phases
  done
  status
  # LIVE_SEND_JIT=1 on a last call, after the results came back: that call returns the host's
  # JIT cache instead, so the next lease starts warm (lease_ready's jit-cache piece).
  [[ -n ${OUT:-} && -n ${LIVE_SEND_JIT:-} ]] && { send_jit_cache; return $?; }
  if [[ -n ${OUT:-} ]]; then  # two files: a call brings back only a few
    (cd "$LIVE" && tar -czf "$OUT/live-state.tgz" logs $(ls -d *.json *.txt factors.env bodies 2>/dev/null))
    cp "$LIVE/live-results.tgz" "$OUT/" 2>/dev/null
    # Whatever cells have finished, so a run cut short by the device budget still brings them back.
    [[ -d $R/outputs/live ]] && tar -czf "$OUT/live-cells.tgz" -C "$R/outputs" live 2>/dev/null
    # The trained long-context model's chunks, once (about 50 MB: the call's 64 MiB of returns).
    if [[ -d $LIVE/model-parts ]] && ! has model sent; then
      cp "$LIVE"/model-parts/* "$OUT/" && touch "$STATE/model.sent"
    fi
  fi
  return 0
}

# The JIT cache (FlashInfer's and Triton's, SGLANG_CACHE_DIR) as a tgz in 15-MiB chunks and its
# manifest into $OUT: a call brings back 8 files of 16 MiB, so a larger cache is not sent.
send_jit_cache() {
  local cache=${SGLANG_CACHE_DIR:-/tmp/sglang-cache} parts=$LIVE/jit-parts
  local packed=$LIVE/jit-cache-$SGLANG.tgz n
  [[ -d $cache ]] || { log "JIT cache: no folder $cache, nothing sent"; return 1; }
  rm -rf "$parts"
  tar -czf "$packed" --exclude='./.from-*' -C "$cache" . \
    && python3 -m benchmarks.live_h200.chunks split "$packed" "$parts" --chunk-mib 15 > /dev/null \
    || { log "JIT cache: packing $cache failed"; return 1; }
  n=$(find "$parts" -type f | wc -l)
  (( n <= 8 )) || { log "JIT cache: $n files, more than a call brings back: not sent"; return 1; }
  cp "$parts"/* "$OUT/"
  log "JIT cache: $(du -sh "$cache" | cut -f1) as $(du -h "$packed" | cut -f1) in $n files" \
    "(chunks.py's parts and manifest: into .gpu-bundle/)"
}

case "${1:-}" in
  tick) shift; tick "$@" ;;
  phase_*) cmd=$1; shift; "$cmd" "$@" ;;
  *) echo "usage: $0 tick WAIT_S" >&2; exit 2 ;;
esac
