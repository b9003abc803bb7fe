#!/usr/bin/env bash
# tilec bench gemm: tilec's autotuned matmul next to a Triton kernel of the
# same algorithm and torch.matmul (cuBLAS), in one process on the GPU
# (scripts/bench/gemm.py says how). Needs python3 with torch and triton, a
# GPU, and tilec binaries: TILEC_BIN, else the GPU bundle (scripts/gpu-bundle.sh),
# else build/bin. Writes bench-gemm.json and bench-gemm.png to $OUT (default
# ./bench-out). Extra arguments go to `tilec bench gemm` (--dtypes f16
# --shapes 4096x4096x4096).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/bench-out}
if [[ -n ${TILEC_BIN:-} ]]; then
  bin=$TILEC_BIN
elif [[ -f $here/../dist/gpu-bundle.tar.xz ]]; then
  [[ -x /tmp/gpu-bundle/bin/tilec ]] || tar -C /tmp -xJf "$here/../dist/gpu-bundle.tar.xz" || exit 1
  bin=/tmp/gpu-bundle/bin
else
  bin=$here/../build/bin
fi
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
# A cache of its own, so that the first row's compile time is a cold one.
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-$(mktemp -d /tmp/tilec-bench-cache.XXXXXX)}
export TILEC_AUTOTUNE_CACHE=${TILEC_AUTOTUNE_CACHE:-$TILEC_CACHE_DIR/autotune_cache.json}
TILEC_BENCH_DIR=$here/bench "$bin/tilec" bench gemm --out "$out" "$@"
