#!/usr/bin/env bash
# Configures and builds tilec into ${TILEC_BUILD_DIR:-build}: every target,
# or only $TILEC_BUILD_TARGETS (space-separated; scripts/main.sh builds the
# tilec tool alone). Extra arguments go to CMake (e.g. -DTILEC_STATIC=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_BUILD_DIR:-build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# ccache hashes the checkout's paths relative to it, so that build/ and
# build-static/ (the same sources and flags) share their objects: on the
# 2-core build machine a cold build/ after build-static/ took 3 min.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
cmake -S . -B "$build_dir" -G Ninja \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
  "${launcher[@]}" "$@"
targets=()
for target in ${TILEC_BUILD_TARGETS:-}; do
  targets+=(--target "$target")
done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
