#!/usr/bin/env bash
# Fetch, on a machine with PyPI, the wheels the kernel probe needs on a GPU host that has none:
# FlashInfer 0.6.18 and the four wheels it needs beside the host's own torch (what
# the first live run found enough), and Hydra with its parser runtime. The GPU image already
# has torch, numpy, matplotlib, pyyaml, ninja and FlashInfer's other dependencies.
# Output: .probe-bundle/ (git-ignored), about 40 MB, for Python 3.12 on manylinux x86_64.
# Usage (from anywhere): bash benchmarks/kernel_probe/make_probe_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=.probe-bundle
PY=${PYTHON:-python3}
rm -rf "$DEST"
mkdir -p "$DEST"
PLATFORMS=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
           manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  PLATFORMS+=(--platform "$tag")
done
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${PLATFORMS[@]}" -d "$DEST" \
  flashinfer-python==0.6.18 apache-tvm-ffi==0.1.11 nvidia-cudnn-frontend==1.32.0 \
  nccl4py==0.6.0 cuda-tile==1.7.0 hydra-core==1.3.2 omegaconf==2.3.0
# Hydra's parser runtime is published as a source archive only: build its pure-Python wheel here.
"$PY" -m pip wheel -q --no-deps -w "$DEST" antlr4-python3-runtime==4.9.3
ls -l "$DEST"
du -sh "$DEST"
