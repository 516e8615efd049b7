# setup_on_gpu.sh: ready the offline GPU host for live SGLang 0.5.19 cells. SOURCE it, from the
# repo root, in the same shell that then runs the pipeline (it exports variables):
#
#   . benchmarks/live_h200/setup_on_gpu.sh && python3 -m pipeline model=tiny_random server=sglang ...
#
# Needs .gpu-bundle/*.tar.xz (made here by make_bundle.sh, carried with carry: [".gpu-bundle"]).
#   1. unpacks it to /tmp/sgl-site (skipped when already unpacked from the same archive);
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
  archive="$(ls -1 "$repo"/.gpu-bundle/*.tar.xz 2>/dev/null | head -n 1)"
  if [[ ! -f "$repo/benchmarks/live_h200/make_tiny_model.py" ]]; then
    echo "setup_on_gpu: run it from the mtp-eval repo root (not $repo)" >&2; return 1
  fi
  if [[ -z "$archive" ]]; then
    echo "setup_on_gpu: no .gpu-bundle/*.tar.xz: run make_bundle.sh, carry .gpu-bundle" >&2
    return 1
  fi
  stamp="$site/.from-$(basename "$archive")-$(stat -c %s "$archive")"
  if [[ ! -f "$stamp" ]]; then
    echo "setup_on_gpu: unpacking $(basename "$archive") to $site"
    rm -rf "$site" && mkdir -p "$(dirname "$site")" || return 1
    if command -v xz >/dev/null; then
      tar -xJf "$archive" -C "$(dirname "$site")" || return 1
    else  # no xz binary: Python's lzma reads the same archive
      python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], \
filter='fully_trusted')" "$archive" "$(dirname "$site")" || return 1
    fi
    touch "$stamp"
  fi
  # The machine's own python, with PYTHONPATH as it was before any setup (no bundle on it).
  PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}" \
    python3 "$repo/benchmarks/live_h200/make_tiny_model.py" "$model" || return 1
  export MTP_EVAL_BASE_PYTHONPATH="${MTP_EVAL_BASE_PYTHONPATH-${PYTHONPATH:-}}"
  export PYTHONPATH="$site:$repo${MTP_EVAL_BASE_PYTHONPATH:+:$MTP_EVAL_BASE_PYTHONPATH}"
  export SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK=1 SGLANG_EXPOSE_OWN_ENV_VARS=1
  export FLASHINFER_WORKSPACE_BASE="${FLASHINFER_WORKSPACE_BASE:-/tmp/flashinfer-ws}"
  mkdir -p "$FLASHINFER_WORKSPACE_BASE"
  python3 -c "
import importlib.metadata as md, sys, time
t = time.time()
import sglang, sgl_kernel, flashinfer, transformers, torch
import sglang.srt.entrypoints.http_server  # the server's import chain: fastapi, xgrammar stand-in
print('setup_on_gpu: python', sys.version.split()[0], '| sglang', md.version('sglang'),
      '| sglang-kernel', md.version('sglang-kernel'), '| flashinfer', flashinfer.__version__,
      '| transformers', transformers.__version__, '| torch', torch.__version__,
      '| GPU', torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
      '| imports %.1f s' % (time.time() - t))
" || { echo "setup_on_gpu: import check failed (traceback above)" >&2; return 1; }
}

if (return 0 2>/dev/null); then
  _mtp_setup
else
  echo "setup_on_gpu: source this file (. benchmarks/live_h200/setup_on_gpu.sh): run as a" \
       "script its exports are lost" >&2
  _mtp_setup && echo "setup_on_gpu: checks passed; now source it to keep the variables"
fi
