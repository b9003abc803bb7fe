#!/usr/bin/env bash
# Builds the GPU test bundle here (no GPU needed): tools and GPU tests linked
# with static LLVM/MLIR (build-static/), packed with scripts/gpu-check.sh into
# dist/gpu-bundle.tar.xz. On a GPU machine: scripts/gpu-check.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_STATIC_BUILD_DIR:-build-static}
targets=(tilec tilec-startup tilec-replay KernelGpuTest CApiGpuTest AutotuneGpuTest SparseConvGpuTest StridedConvGpuTest AtomicScanGpuTest ToyKernelTest tilec_runtime_gpu_tests tilec-rt-launchbench)
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The checkout's paths relative (scripts/build.sh says why).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
# TILEC_STARTUP_BUNDLE=FILE (a bundle an earlier GPU run packed) also builds
# tilec-startup-embedded with it compiled in, for scripts/deploy-bench.sh.
startup_bundle=()
if [[ -n ${TILEC_STARTUP_BUNDLE:-} ]]; then
  startup_bundle=(-DTILEC_STARTUP_BUNDLE="$(realpath "$TILEC_STARTUP_BUNDLE")")
  targets+=(tilec-startup-embedded)
fi
cmake -S . -B "$build_dir" -G Ninja -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DTILEC_STATIC=ON "${launcher[@]}" \
  "${startup_bundle[@]}"
# An object whose compile recorded no headers (an interrupted build can leave
# one) is not rebuilt when a header it includes changes: a test's reference
# then disagreed with the harness about a struct's layout on the GPU
# machine. Such objects are compiled again.
ninja -C "$build_dir" -t deps | awk '/#deps 0,/ { sub(":$", "", $1); print $1 }' |
  while read -r object; do rm -f "$build_dir/$object"; done
ninja -C "$build_dir" "${targets[@]}" tilec_c
rm -rf dist/gpu-bundle && mkdir -p dist/gpu-bundle/bin dist/gpu-bundle/lib
for target in "${targets[@]}"; do
  cp "$build_dir/bin/$target" dist/gpu-bundle/bin/
done
# The C API for Python (`tilec bench spconv` finds it at bin/../lib), with
# its soname's links: CApiGpuTest loads libtilec_c.so.<major>.<minor>.
cp -P "$build_dir"/lib/libtilec_c.so* dist/gpu-bundle/lib/
cp scripts/gpu-check.sh scripts/tune-bench.sh scripts/deploy-bench.sh scripts/pytorch-check.sh scripts/ddp-check.sh scripts/maps-check.sh \
  scripts/bundle-paths.sh scripts/peer-wheels.sh dist/gpu-bundle/
cp -r scripts/deploy dist/gpu-bundle/
# The Python package, which finds the library at python/../lib.
mkdir -p dist/gpu-bundle/python/tilec
cp python/tilec/*.py dist/gpu-bundle/python/tilec/
# `tilec bench` finds its scripts at bin/../share/tilec/bench.
mkdir -p dist/gpu-bundle/share/tilec/bench
cp scripts/bench/*.py dist/gpu-bundle/share/tilec/bench/
# The static binaries each hold all of LLVM: a dictionary larger than one of
# them lets xz store the copies once (50 MB -> 20 MB, within what travels to
# the GPU machine).
tar -C dist -c gpu-bundle | xz -6 --lzma2=dict=192MiB > dist/gpu-bundle.tar.xz
ls -la dist/gpu-bundle.tar.xz
