#!/usr/bin/env bash
# make_bundle.sh: build the one archive that lets the offline H200 run a real SGLang 0.5.19 server.
#
# Run here (a machine that reaches PyPI), from anywhere:   bash benchmarks/live_h200/make_bundle.sh
# Result: .gpu-bundle/ at the repo root (git-ignored): sgl-site-0.5.19.tar.xz (about 55 MB, one
# folder `sgl-site/` to put on PYTHONPATH there) and flash_ops.sm90a.so.xz (SGLang's FA3 for SM90,
# about 123 MB), each as 32-MiB chunks with a sha256 manifest. Carry the chunks over several warm
# device calls and source benchmarks/live_h200/setup_on_gpu.sh in each (README.md beside this).
#
# What it does, and why:
#   1. Downloads, with --no-deps, exactly the wheels pinned in wheels.txt for Python 3.12 on
#      manylinux x86_64 (the GPU host's python), into .gpu-bundle-cache/wheels (git-ignored, NOT
#      carried). Wheels already there are reused: a second run only re-installs and re-packs.
#   2. Builds antlr4-python3-runtime 4.9.3 (hydra-core's parser; on PyPI only as an sdist) into a
#      pure-Python wheel, once.
#   3. Installs every wheel with `pip install --no-deps --target` into .gpu-bundle-cache/sgl-site
#      (pip lays out *.data/ folders and dist-info, so importlib.metadata reads the versions there).
#   4. Deletes what the run cannot use and cannot carry (found on the first live run): sglang-kernel's
#      flash_ops*.so (SGLang's own FA3, 1.1 GB; it travels apart, cut to sm_90a: step 8),
#      infllm_ops* and sm100/ (Blackwell); plus console scripts in bin/ whose shebang points here,
#      the machine's paths in dist-info (machine_free), and (PRUNE_EXTRA=1, the default) a few
#      more unreachable files: see prune_extra.
#   5. Adds the xgrammar stand-in (xgrammar_standin/ beside this file; start SGLang with
#      --grammar-backend none).
#   6. Checks the folder, then packs sgl-site/ as ONE reproducible tar.xz into .gpu-bundle/ (the
#      only thing carried). The check: expected files present, removed ones absent, every pin in
#      wheels.txt installed exactly once.
#
#   7. Cuts the archive into chunks of CHUNK_MIB (default 16) with a sha256 manifest (chunks.py):
#      every device call carries the repo too (about 43 MiB with the committed live results), and
#      a call moves at most 64 MiB.
#   8. (FA3=1, the default) SGLang's FA3: takes sgl_kernel/flash_ops.abi3.so from the sglang-kernel
#      wheel, keeps only its sm_90a cubins (fatbin_slim.py), packs it with zstd (FA3_PACK=xz: xz -9)
#      and cuts that into chunks with a manifest too, plus flash_ops.sm90a.so.sha256 for the
#      unpacked file.
#      setup_on_gpu.sh assembles, verifies and installs it, so backend=fa3 runs.
#
# Environment: PYTHON (default python3) runs pip; it need not be 3.12. XZ_OPT overrides -9e.
# WHEELS_TXT picks the release's wheel list; SITE_PACK=zstd packs the site with zstd (default xz).
# PRUNE_EXTRA=0 keeps the files prune_extra deletes (archive about 4 MB larger). CHUNK_MIB sets
# the chunk size; FA3=0 skips step 8.
# Exit status is non-zero on any failed download or check; the archive is then not replaced.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
CACHE="$REPO/.gpu-bundle-cache"
WHEELS="$CACHE/wheels"
SITE="$CACHE/sgl-site"
OUTDIR="$REPO/.gpu-bundle"
# WHEELS_TXT picks the release: wheels.txt (0.5.19, the default) or wheels-0.5.23.txt. The archive
# is named after the sglang pin in it.
WHEELS_TXT="${WHEELS_TXT:-$HERE/wheels.txt}"
SGLANG_VERSION="$(sed -n 's/^sglang==\([^ #]*\).*/\1/p' "$WHEELS_TXT")"
ARCHIVE="$CACHE/sgl-site-$SGLANG_VERSION.tar.$([[ ${SITE_PACK:-xz} == zstd ]] && echo zst || echo xz)"
FA3_SO="$CACHE/flash_ops.sm90a.so"
CHUNK_MIB="${CHUNK_MIB:-16}"
ANTLR="antlr4-python3-runtime==4.9.3"

# pip matches manylinux_2_N exactly, so name each N the wheels use (sglang 0.5.19 is 2_34). The
# host's python 3.12.3 looks like Ubuntu 24.04's (glibc 2.39); no pinned wheel needs above 2_35.
TARGET=(--only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 --abi abi3
        --abi none --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
        --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 --platform any)
for n in 24 26 27 28 31 34 35; do TARGET+=(--platform "manylinux_2_${n}_x86_64"); done

# Some machines' pip.conf name local index folders that do not exist: drop those warnings only.
pip_() {
  "$PYTHON" -m pip --disable-pip-version-check "$@" 2>&1 | { grep -v 'is ignored: it is neither' || true; }
}

# Older layouts kept wheels inside the carried folder: move them to the cache so only the archive
# travels (the carry limit is 64 MiB, repo included).
rescue_wheels() {
  mkdir -p "$WHEELS" "$OUTDIR"
  local f
  for f in "$OUTDIR"/*.whl "$OUTDIR"/wheels/*.whl; do
    [[ -e "$f" ]] && mv -n "$f" "$WHEELS/"
  done
  rmdir "$OUTDIR/wheels" 2>/dev/null || true
}

download() {
  echo "== downloading wheels (cached in ${WHEELS#"$REPO"/})"
  pip_ download -q --no-deps "${TARGET[@]}" -d "$WHEELS" -r "$WHEELS_TXT"
  if ! compgen -G "$WHEELS/antlr4_python3_runtime-4.9.3-*.whl" >/dev/null; then
    echo "== building $ANTLR (sdist only on PyPI; pure Python)"
    pip_ wheel -q --no-deps --no-binary=:all: -w "$WHEELS" "$ANTLR"
  fi
}

# Only the wheels wheels.txt pins (plus antlr): a stale wheel left in the cache must not slip in.
wanted_wheels() {
  "$PYTHON" - "$WHEELS_TXT" "$WHEELS" <<'EOF'
import pathlib, re, sys
pins = [l.split("#")[0].strip() for l in open(sys.argv[1]) if l.split("#")[0].strip()]
pins.append("antlr4-python3-runtime==4.9.3")
norm = lambda s: re.sub(r"[-_.]+", "_", s).lower()
files = sorted(pathlib.Path(sys.argv[2]).glob("*.whl"))
for pin in pins:
    name, version = pin.split("==")
    hits = [f for f in files if norm(f.name.split("-")[0]) == norm(name) and f.name.split("-")[1] == version]
    if len(hits) != 1:
        sys.exit(f"make_bundle: {pin}: expected one wheel in {sys.argv[2]}, found {len(hits)}")
    print(hits[0])
EOF
}

# Further cuts (about 4 MB of the archive) that keep it under ~55 MB; PRUNE_EXTRA=0 keeps them.
# Each is unreachable in these runs: flashmla_ops is MLA-only and sgl_kernel loads it in a
# try/except; zstandard on CPython imports backend_c, never the cffi build; FlashInfer's JIT only
# reads cutlass/{include,tools} and cccl/{cub,libcudacxx,thrust} (flashinfer/jit/env.py).
# What made archives from two machines differ: pip writes each wheel's absolute
# path on this machine into dist-info/direct_url.json, and RECORD lists the deleted bin/ scripts
# with the hash of a shebang naming this machine's python. Neither is read at run time.
machine_free() {
  rm -f "$1"/*.dist-info/direct_url.json
  sed -i '/^\.\.\/\.\.\/bin\//d; /direct_url\.json,/d' "$1"/*.dist-info/RECORD
}

prune_extra() {
  local fi="$SITE/flashinfer/data"
  rm -rf "$SITE"/sgl_kernel/flashmla_ops*.so "$SITE"/zstandard/_cffi*.so \
         "$fi"/cutlass/{examples,python,test,docs,media} \
         "$fi"/cccl/{python,benchmarks,ci,docs,examples,test}
}

install_site() {
  echo "== installing into ${SITE#"$REPO"/}"
  rm -rf "$SITE"
  local wheels
  mapfile -t wheels < <(wanted_wheels)
  pip_ install -q --no-deps --no-index --no-compile --target "$SITE" "${TARGET[@]}" "${wheels[@]}"
  rm -rf "$SITE"/sgl_kernel/flash_ops*.so "$SITE"/sgl_kernel/infllm_ops* "$SITE"/sgl_kernel/sm100 \
         "$SITE/bin"
  machine_free "$SITE"
  if [[ "${PRUNE_EXTRA:-1}" == 1 ]]; then prune_extra; fi
  find "$SITE" -name __pycache__ -type d -prune -exec rm -rf {} +
  cp -r "$HERE/xgrammar_standin/xgrammar" "$SITE/xgrammar"
  find "$SITE/xgrammar" -name __pycache__ -type d -prune -exec rm -rf {} +
}

check_site() {
  echo "== checking the site folder"
  "$PYTHON" - "$SITE" "$WHEELS_TXT" <<'EOF'
import importlib.metadata as md, pathlib, re, sys
site, pins = pathlib.Path(sys.argv[1]), sys.argv[2]
must = ["sglang/__init__.py", "sglang/launch_server.py", "sgl_kernel/__init__.py",
        "sgl_kernel/sm90/common_ops.abi3.so", "flashinfer/__init__.py", "transformers/__init__.py",
        "hydra/__init__.py", "omegaconf/__init__.py", "antlr4/__init__.py",
        "xgrammar/__init__.py", "xgrammar/structural_tag.py"]
gone = ["sgl_kernel/flash_ops*.so", "sgl_kernel/infllm_ops*", "sgl_kernel/sm100", "bin"]
errors = [f"missing {p}" for p in must if not (site / p).exists()]
errors += [f"should be deleted: {p}" for p in gone if list(site.glob(p))]
norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
have: dict[str, list[str]] = {}
for d in md.distributions(path=[str(site)]):
    have.setdefault(norm(d.metadata["Name"]), []).append(d.version)
want = [l.split("#")[0].strip() for l in open(pins) if l.split("#")[0].strip()]
for pin in [*want, "antlr4-python3-runtime==4.9.3"]:
    name, version = pin.split("==")
    if have.get(norm(name)) != [version]:
        errors.append(f"{pin}: installed {have.get(norm(name))}")
if errors:
    sys.exit("make_bundle: site check failed:\n  " + "\n  ".join(errors))
print(f"   ok: {len(have)} distributions, versions as pinned; sglang {have['sglang'][0]}, "
      f"sglang-kernel {have['sglang-kernel'][0]}, flashinfer {have['flashinfer-python'][0]}")
EOF
}

# SITE_PACK=zstd (zstd -$ZSTD_LEVEL --long=27) or xz (-9e: smaller, but over 10 minutes on 2 busy
# cores). setup_on_gpu.sh reads both. ZSTD_LEVEL (default 7; the committed manifests were packed
# at 19): 19 took about 30 minutes for 0.5.23's 760 MB on the 2 busy cores, 6-9 take 22-35 s and
# cost a chunk more per archive, which the device checks by sha256 like any other.
pack() {
  echo "== packing $(du -sh "$SITE" | cut -f1) into ${ARCHIVE#"$REPO"/}"
  local tmp="$ARCHIVE.partial"
  # Fixed order, owner and times: the same wheels give the same archive.
  tar -C "$CACHE" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - sgl-site \
    | if [[ $ARCHIVE == *.zst ]]; then zstd -q -"${ZSTD_LEVEL:-7}" -T2 --long=27 -c; else
        XZ_OPT="${XZ_OPT:--9e -T0}" xz -c; fi > "$tmp"
  if [[ $ARCHIVE == *.zst ]]; then zstd -q -t --long=27 "$tmp"; else xz -t "$tmp"; fi
  mv "$tmp" "$ARCHIVE"
  local bytes
  bytes=$(stat -c %s "$ARCHIVE")
  echo "== ${ARCHIVE#"$REPO"/}: $bytes bytes ($((bytes / 1048576)) MiB); carried as chunks"
}

# Chunks of the archive (and of FA3) with their manifests are all that .gpu-bundle/ holds.
chunk() {
  "$PYTHON" "$HERE/chunks.py" split "$1" "$OUTDIR" --chunk-mib "$CHUNK_MIB"
}

# SGLang's FA3, cut to sm_90a: about 1.1 GB -> 123 MB of xz -9 or about 130 MB of zstd -19 --long.
# FA3_PACK=zstd (the default) takes about a minute on 2 cores where xz -9 took over 8 minutes; the
# GPU host has no zstd binary, so setup_on_gpu.sh unpacks it with the site's own zstandard module.
# Reused while the wheel and the packer are unchanged.
pack_fa3() {
  local wheel stamp ext="${FA3_PACK:-zstd}"
  wheel="$(ls "$WHEELS"/sglang_kernel-0.4.5-*.whl)"
  stamp="$CACHE/flash_ops.from-$(sha256sum "$wheel" | cut -c1-16)"
  if [[ ! -f "$FA3_SO" || ! -f "$stamp" ]]; then
    echo "== FA3: cutting sgl_kernel/flash_ops.abi3.so to its sm_90a cubins"
    unzip -p "$wheel" sgl_kernel/flash_ops.abi3.so > "$CACHE/flash_ops.abi3.so"
    "$PYTHON" "$HERE/fatbin_slim.py" "$CACHE/flash_ops.abi3.so" "$FA3_SO"
    rm -f "$CACHE/flash_ops.abi3.so" "$CACHE"/flash_ops.from-* "$FA3_SO".{xz,zst}
    touch "$stamp"
  fi
  if [[ ! -f "$FA3_SO.${ext/zstd/zst}" ]]; then
    echo "== FA3: packing with $ext"
    case "$ext" in
      zstd) zstd -q -"${ZSTD_LEVEL:-19}" -T2 --long=27 -k -f "$FA3_SO" -o "$FA3_SO.zst" ;;
      xz) xz -9 -T0 -k -f "$FA3_SO" ;;
      *) echo "make_bundle: FA3_PACK must be zstd or xz, not $ext" >&2; return 1 ;;
    esac
  fi
  (cd "$CACHE" && sha256sum "$(basename "$FA3_SO")") > "$OUTDIR/flash_ops.sm90a.so.sha256"
  chunk "$FA3_SO.${ext/zstd/zst}"
}

rescue_wheels
download
install_site
check_site
pack
# Only this script's own pieces are replaced: the model and JIT-cache chunks that model_store
# restored into .gpu-bundle/ stay (a rebuild used to delete them, and lease_ready then found them
# missing after the bundle was made).
find "$OUTDIR" -maxdepth 1 -type f \( -name 'sgl-site-*' -o -name 'flash_ops.*' \) -delete
kept=$(find "$OUTDIR" -maxdepth 1 -type f -printf '%f\n' | sed -n 's/\.manifest$//p' | sort | xargs)
[[ -n $kept ]] && echo "== .gpu-bundle/: kept $kept (model_store's pieces)"
chunk "$ARCHIVE"
if [[ "${FA3:-1}" == 1 ]]; then pack_fa3; fi
echo "== .gpu-bundle/: $(ls "$OUTDIR" | wc -l) files; carry one or two chunks a call (README.md)"
