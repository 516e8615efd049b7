# setup_on_gpu.sh: ready the offline GPU host for live SGLang cells (0.5.19 or 0.5.23 bundle). SOURCE it, from the
# repo root, in the same shell that then runs the pipeline (it exports variables):
#
#   . benchmarks/live_h200/setup_on_gpu.sh && python3 -m pipeline model=tiny_random server=sglang ...
#
# Needs the chunks of .gpu-bundle/ (made here by make_bundle.sh), carried over one or more calls:
#   0. copies the chunks and manifests this call carried to /tmp/mtp-chunks (they stay there while
#      the machine is warm); while the site's chunks are incomplete it says which are still to
#      carry and returns 3 (so a call that carries only chunk 1 ends cleanly);
#   1. assembles and sha256-checks the site archive (tar.xz or tar.zst) and unpacks it to /tmp/sgl-site (skipped when
#      already unpacked from the same archive); an older single .gpu-bundle/*.tar.xz works too;
#   1b. when every FA3 chunk has arrived: assembles, checks, unpacks flash_ops.abi3.so (sm_90a only)
#      into sgl_kernel/ and checks its sha256, so backend=fa3 runs (else says what is missing);
#   1c. puts SM90 stand-ins over what the site imports but cannot load here (0.5.23: CuTe DSL dual
#      GEMM, FlashMLA; 0.5.19: a guard on the DSA backend's deep_gemm import), so graphs capture;
#   2. writes the tiny random Llama to /tmp/tiny-llama with the machine's own python3, torch and
#      transformers, BEFORE the bundle's transformers 5.12.1 shadows them (skipped when present);
#   3. exports PYTHONPATH=/tmp/sgl-site:<repo>, SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1 (the bundle's
#      sglang-kernel is 0.4.5, not the 0.4.6.post1 SGLang 0.5.19 asks for), FLASHINFER_WORKSPACE_BASE
#      (a writable JIT cache) and SGLANG_EXPOSE_OWN_ENV_VARS=1 (SGLANG_* vars in /server_info);
#   4. imports sglang, sgl_kernel, flashinfer and SGLang's HTTP server module once and prints their
#      versions, so a missing package shows in seconds rather than after a server start.
# Returns non-zero (without exiting your shell) when a step fails. Override the places with
# SGL_SITE_PARENT (default /tmp) and TINY_MODEL (default /tmp/tiny-llama).

_mtp_setup() {
  local repo site model archive stamp
  repo="$(pwd)"
  site="${SGL_SITE_PARENT:-/tmp}/sgl-site"
  model="${TINY_MODEL:-/tmp/tiny-llama}"
  if [[ ! -f "$repo/benchmarks/live_h200/make_tiny_model.py" ]]; then
    echo "setup_on_gpu: run it from the mtp-eval repo root (not $repo)" >&2; return 1
  fi
  _mtp_jit_cache "$repo" || return 1
  archive="$(_mtp_site_archive "$repo")" || return $?
  stamp="$site/.from-$(basename "$archive")-$(stat -c %s "$archive")"
  if [[ ! -f "$stamp" ]]; then
    echo "setup_on_gpu: unpacking $(basename "$archive") to $site"
    rm -rf "$site" && mkdir -p "$(dirname "$site")" || return 1
    if [[ $archive == *.zst ]]; then
      _mtp_unzstd "$archive" - | tar -xf - -C "$(dirname "$site")" || return 1
    elif command -v xz >/dev/null; then
      tar -xJf "$archive" -C "$(dirname "$site")" || return 1
    else  # no xz binary: Python's lzma reads the same archive
      python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], \
filter='fully_trusted')" "$archive" "$(dirname "$site")" || return 1
    fi
    touch "$stamp"
  fi
  # SGLang 0.5.23's Llama imports a Blackwell-only CuTe DSL module on every CUDA GPU; without the
  # DSL, its SM90 stand-in (sm90_standins/cutedsl_dual_gemm.py says why) takes its place.
  local dual="$site/sglang/kernels/ops/gemm/cutedsl_dual_gemm.py"
  if [[ -f $dual && ! -f $dual.orig && ! -d $site/cutlass ]]; then
    mv "$dual" "$dual.orig" && cp "$repo/benchmarks/live_h200/sm90_standins/cutedsl_dual_gemm.py" "$dual" \
      || return 1
    echo "setup_on_gpu: cutedsl_dual_gemm: SM90 stand-in installed (the kernel is Blackwell-only)"
  fi
  # 0.5.23's EAGLE v2 worker imports FlashMLA's backend when it captures CUDA graphs (an isinstance
  # check); FlashMLA is absent: an import-only stand-in (sm90_standins/flash_mla says why).
  if [[ -f $site/sglang/kernels/ops/attention/flash_mla_interface.py && ! -d $site/flash_mla ]]; then
    cp -r "$repo/benchmarks/live_h200/sm90_standins/flash_mla" "$site/" || return 1
    echo "setup_on_gpu: flash_mla: import-only stand-in installed"
  fi
  _mtp_guard_deep_gemm "$site" || return 1
  _mtp_fa3 "$repo" "$site" || return 1
  # The machine's own python, with PYTHONPATH as it was before any setup (no bundle on it).
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}" \
    PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" python3 -m benchmarks.live_h200.make_tiny_model "$model" || return 1
  export MTP_EVAL_BASE_PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}"
  export PYTHONPATH="$site:$repo${MTP_EVAL_BASE_PYTHONPATH:+:$MTP_EVAL_BASE_PYTHONPATH}"
  export SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1 SGLANG_EXPOSE_OWN_ENV_VARS=1
  # One JIT cache for everything on the host: the cells' server.jit_cache_dir=auto reads
  # SGLANG_CACHE_DIR, and bare servers and one_batch get the same folders set here.
  export SGLANG_CACHE_DIR="${SGLANG_CACHE_DIR:-/tmp/sglang-cache}"
  export FLASHINFER_WORKSPACE_BASE="${FLASHINFER_WORKSPACE_BASE:-$SGLANG_CACHE_DIR}"
  export TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-$SGLANG_CACHE_DIR/triton}"
  mkdir -p "$FLASHINFER_WORKSPACE_BASE"
  # A later call of one warm session (live_signoff.sh) has checked the imports already.
  [[ -n ${MTP_SKIP_IMPORT_CHECK:-} ]] && { echo "setup_on_gpu: import check skipped"; return 0; }
  python3 -c "
import importlib.metadata as md, sys, time
t = time.time()
import sglang, sgl_kernel, flashinfer, transformers, torch
import sglang.srt.entrypoints.http_server  # the server's import chain: fastapi, xgrammar stand-in
import importlib, importlib.util
for name in ('sglang.srt.models.llama', 'sglang.kernels.ops.gemm.cutedsl_dual_gemm',
             'sglang.srt.layers.attention.flashmla_backend'):
    if importlib.util.find_spec(name.rsplit('.', 1)[0]) and importlib.util.find_spec(name):
        importlib.import_module(name)  # what a Llama server imports later (0.5.23)
import importlib.util
fa3 = importlib.util.find_spec('sgl_kernel.flash_ops') is not None
if fa3:
    from sgl_kernel import flash_ops  # noqa: F401  (SGLang's FA3 loads)
print('setup_on_gpu: python', sys.version.split()[0], '| sglang', md.version('sglang'),
      '| fa3', 'yes' if fa3 else 'no',
      '| sglang-kernel', md.version('sglang-kernel'), '| flashinfer', flashinfer.__version__,
      '| transformers', transformers.__version__, '| torch', torch.__version__,
      '| GPU', torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
      '| imports %.1f s' % (time.time() - t))
" || { echo "setup_on_gpu: import check failed (traceback above)" >&2; return 1; }
}

# The site archive: assembled from its chunks in $MTP_CHUNKS (default /tmp/mtp-chunks), or the
# older single .gpu-bundle/*.tar.xz. Prints its path; returns 3 while chunks are still to come.
_mtp_site_archive() {
  local repo="$1" chunks="${MTP_CHUNKS:-/tmp/mtp-chunks}" manifest rc
  python3 "$repo/benchmarks/live_h200/chunks.py" stage "$repo/.gpu-bundle" --into "$chunks" >&2
  manifest="$(ls -1 "$chunks"/sgl-site-*.tar.{zst,xz}.manifest 2>/dev/null | head -n 1)"
  if [[ -n "$manifest" ]]; then
    local out="$chunks/$(basename "$manifest" .manifest)"
    if [[ ! -f "$out" ]]; then
      python3 "$repo/benchmarks/live_h200/chunks.py" assemble "$manifest" "$out" >&2
      rc=$?; [[ $rc == 0 ]] || return $rc
    fi
    echo "$out"; return 0
  fi
  local single
  single="$(ls -1 "$repo"/.gpu-bundle/*.tar.xz 2>/dev/null | head -n 1)"
  if [[ -z "$single" ]]; then
    echo "setup_on_gpu: no site chunks or .gpu-bundle/*.tar.xz: run make_bundle.sh, carry" \
         ".gpu-bundle/sgl-site-0.5.19.tar.xz.manifest and its chunks" >&2
    return 1
  fi
  echo "$single"
}

# A JIT cache compiled on an earlier lease (FlashInfer's .cache folder of SGLANG_CACHE_DIR, brought
# back through $OUT and cut by chunks.py into .gpu-bundle/jit-cache-*.tgz.*): unpacked into
# SGLANG_CACHE_DIR once all its chunks came, so its kernels need no cold JIT (343-609 s) again.
_mtp_jit_cache() {
  local repo="$1" chunks="${MTP_CHUNKS:-/tmp/mtp-chunks}" cache="${SGLANG_CACHE_DIR:-/tmp/sglang-cache}"
  local manifest packed rc
  python3 "$repo/benchmarks/live_h200/chunks.py" stage "$repo/.gpu-bundle" --into "$chunks" >&2
  manifest="$(ls -1 "$chunks"/jit-cache-*.tgz.manifest 2>/dev/null | head -n 1)"
  [[ -n $manifest ]] || return 0
  packed="$chunks/$(basename "$manifest" .manifest)"
  [[ -f $cache/.from-$(basename "$packed") ]] && return 0
  python3 "$repo/benchmarks/live_h200/chunks.py" assemble "$manifest" "$packed" >&2
  rc=$?
  if [[ $rc == 3 ]]; then echo "setup_on_gpu: jit cache: not complete yet"; return 0; fi
  [[ $rc == 0 ]] || return 1
  mkdir -p "$cache" && tar -xzf "$packed" -C "$cache" || return 1
  touch "$cache/.from-$(basename "$packed")"
  echo "setup_on_gpu: jit cache: $(basename "$packed") unpacked into $cache" \
    "($(find "$cache" -type f | wc -l) files)"
}

# SGLang 0.5.19's EAGLE v2 worker imports the DSA backend when it captures CUDA graphs (an
# isinstance check), and that module imports deep_gemm at the top: sgl-deep-gemm is not in the
# bundle (its _C.so needs a newer torch), so every speculative server died after "Capture draft
# decode CUDA graph end" (../shared/gpu/README.md). 0.5.23 guards that import itself; here the same
# guard goes over that one line (the original kept as .orig). Llama-shaped models never call it.
_mtp_guard_deep_gemm() {
  local dsa="$1/sglang/srt/layers/attention/dsa_backend.py"
  [[ -f $dsa && ! -f $dsa.orig && ! -d $1/deep_gemm ]] || return 0
  grep -qx '    import deep_gemm' "$dsa" || return 0
  cp "$dsa" "$dsa.orig" && sed -i 's/^    import deep_gemm$/    try:\n        import deep_gemm\n    except ImportError:  # mtp-eval: not in the H200 bundle\n        deep_gemm = None/' "$dsa" \
    || return 1
  echo "setup_on_gpu: dsa_backend: deep_gemm import guarded (CUDA graphs capture on 0.5.19)"
}

# SGLang's FA3 (sm_90a-only flash_ops.abi3.so) into the unpacked site, once all its chunks came.
_mtp_fa3() {
  local repo="$1" site="$2" chunks="${MTP_CHUNKS:-/tmp/mtp-chunks}" manifest so rc packed
  so="$site/sgl_kernel/flash_ops.abi3.so"
  manifest="$(ls -1 "$chunks"/flash_ops.sm90a.so.{zst,xz}.manifest 2>/dev/null | head -n 1)"
  if [[ -f "$so" ]]; then echo "setup_on_gpu: fa3: flash_ops.abi3.so installed"; return 0; fi
  if [[ -z "$manifest" ]]; then echo "setup_on_gpu: fa3: not carried (backend=fa3 cannot run)"; return 0; fi
  packed="$chunks/$(basename "$manifest" .manifest)"
  python3 "$repo/benchmarks/live_h200/chunks.py" assemble "$manifest" "$packed"
  rc=$?
  if [[ $rc == 3 ]]; then echo "setup_on_gpu: fa3: not complete yet (backend=fa3 cannot run)"; return 0; fi
  [[ $rc == 0 ]] || return 1
  if [[ $packed == *.zst ]]; then
    _mtp_unzstd "$packed" "$chunks/flash_ops.sm90a.so" || return 1
  else
    xz -dc "$packed" > "$chunks/flash_ops.sm90a.so" || return 1
  fi
  (cd "$chunks" && sha256sum -c flash_ops.sm90a.so.sha256) >&2 \
    || { echo "setup_on_gpu: fa3: flash_ops.sm90a.so sha256 differs" >&2; return 1; }
  mv "$chunks/flash_ops.sm90a.so" "$so" && rm -f "$packed"
  echo "setup_on_gpu: fa3: flash_ops.abi3.so (sm_90a) installed and verified"
}

# zstd archives (make_bundle.sh packs with zstd -19 --long=27: seconds where xz -9 took many
# minutes): the host has no zstd binary, so the image's pyarrow reads them (zstandard if present).
# OUT "-" writes to stdout.
_mtp_unzstd() {
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}" python3 -c "
import shutil, sys
dst = sys.stdout.buffer if sys.argv[2] == '-' else open(sys.argv[2], 'wb')
try:
    import pyarrow
    src = pyarrow.input_stream(sys.argv[1], compression='zstd')
except ImportError:
    import zstandard
    src = zstandard.ZstdDecompressor(max_window_size=1 << 27).stream_reader(open(sys.argv[1], 'rb'))
shutil.copyfileobj(src, dst, 1 << 24)
dst.flush()
" "$1" "$2"
}

if (return 0 2>/dev/null); then
  _mtp_setup
else
  echo "setup_on_gpu: source this file (. benchmarks/live_h200/setup_on_gpu.sh): run as a" \
       "script its exports are lost" >&2
  _mtp_setup && echo "setup_on_gpu: checks passed; now source it to keep the variables"
fi
