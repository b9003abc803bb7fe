#!/usr/bin/env bash
# The main job: install, build, then compile the matmul kernel through every
# stage (ttir -> ttgir -> llir -> ptx -> cubin) into out/matmul and, where a
# GPU is present, run every kernel against its float64 reference.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_BUILD_DIR:-build}
scripts/install-deps.sh
# The tool alone: the tests and their binaries are scripts/test.sh's.
TILEC_BUILD_TARGETS=tilec scripts/build.sh
config=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16,num_warps=4
"$build_dir/bin/tilec" compile --kernel matmul --config "$config" \
  --arg-values M=4096,N=4096,K=4096 --dump-dir out/matmul --timings
ls -l out/matmul
if "$build_dir/bin/tilec" run --kernel vector_add --config BLOCK=1024 \
    --sizes n_elements=1024 --reps 0 > /dev/null 2>&1; then
  "$build_dir/bin/tilec" run --kernel matmul --config "$config" --sizes M=1024,N=1024,K=1024
  "$build_dir/bin/tilec" run --kernel matmul --config "$config" --sizes M=203,N=176,K=208
  "$build_dir/bin/tilec" run --kernel matmul --config "$config" --sizes M=1000,N=1000,K=1000,stride_bk=1,stride_bn=1000
else
  echo "no usable GPU here: skipped running the kernels ($("$build_dir/bin/tilec" run \
    --kernel vector_add --config BLOCK=1024 --reps 0 2>&1 | tail -1))"
fi
