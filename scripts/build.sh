#!/usr/bin/env bash
# Configures and builds tilec into ${TILEC_BUILD_DIR:-build}. Extra arguments
# go to CMake (e.g. -DTILEC_STATIC=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_BUILD_DIR:-build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  "${launcher[@]}" "$@"
cmake --build "$build_dir" -j "$(nproc)"
