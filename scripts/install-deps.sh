#!/usr/bin/env bash
# Installs what building and testing tilec needs on Debian 12 (run as root).
# LLVM/MLIR 22 come from Debian's packages; the CUDA 13 toolkit is expected at
# /usr/local/cuda (ptxas, cuda.h, libdevice).
set -euo pipefail

# python3-venv: scripts/build-wheel.sh tests the wheel in a fresh venv.
# clang: the libFuzzer targets (scripts/fuzz.sh; its libFuzzer and
# sanitizer runtimes come with it).
# ccache: a rebuild (another checkout, a clean build) compiles only what
# changed.
# libhiredis-dev: the header of the shared cache tier's client (the library
# itself is opened at run time); redis-server: the server the shared-cache
# tests start on a free port of their own (its packaged service is not used).
packages=(
  cmake ninja-build g++ ccache clang python3 python3-venv xz-utils
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
  libzstd-dev zlib1g-dev nlohmann-json3-dev libgtest-dev
  libhiredis-dev redis-server
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  echo "tilec: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# cuobjdump lets the tests list the kernels of the cubins tilec makes; the
# toolkit here may lack it, PyPI has it.
tools_dir=$HOME/.cache/tilec-tools
if [[ ! -x /usr/local/cuda/bin/cuobjdump && ! -x $tools_dir/nvidia/cu13/bin/cuobjdump ]]; then
  echo "tilec: installing cuobjdump from PyPI into $tools_dir"
  python3 -m pip install --quiet --disable-pip-version-check --target "$tools_dir" \
    nvidia-cuda-cuobjdump || echo "tilec: warning: no cuobjdump; cubin listing tests will be skipped" >&2
fi
# cuobjdump -sass disassembles through nvdisasm (the SASS tests look for
# HGMMA and LDGSTS); it gets its own folder, pip --target does not merge.
nvdisasm_dir=$HOME/.cache/tilec-tools-nvdisasm
if [[ ! -x /usr/local/cuda/bin/nvdisasm && ! -x $nvdisasm_dir/nvidia/cu13/bin/nvdisasm ]]; then
  echo "tilec: installing nvdisasm from PyPI into $nvdisasm_dir"
  python3 -m pip install --quiet --disable-pip-version-check --target "$nvdisasm_dir" \
    nvidia-cuda-nvdisasm || echo "tilec: warning: no nvdisasm; SASS tests will be skipped" >&2
fi

if [[ ! -x /usr/local/cuda/bin/ptxas && -z "${TILEC_PTXAS:-}" ]]; then
  echo "tilec: warning: no CUDA toolkit at /usr/local/cuda; cubin stages and" \
       "the tests that need ptxas will be skipped" >&2
fi
