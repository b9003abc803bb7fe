#!/usr/bin/env bash
# tilec bench spconv: tilec's submanifold convolution through libtilec_c.so
# next to spconv-Triton and torch's gather-then-GEMM, in one process on the
# GPU (scripts/bench/spconv.py says how). Needs python3 with torch and triton,
# a GPU, and tilec with libtilec_c.so in its ../lib: TILEC_BIN, else the GPU
# bundle (scripts/gpu-bundle.sh: dist/gpu-bundle/bin and lib as it is, else
# unpacked from dist/gpu-bundle.tar.xz into /tmp/gpu-bundle), else build/bin.
# With --frames it runs `tilec bench spconv --frames` (scripts/bench/
# spconv_frames.py: streams of scans of new sizes, with FlexGEMM from
# peers/FlexGEMM, which scripts/fetch-flexgemm-peer.sh fetches and the bench
# builds in place on its first run).
# spconv-Triton is the installed one, else its wheel from PEER_WHEELS
# (default: .whl/ of this checkout), installed into a temporary folder for
# this run. Writes bench-spconv.json, .md and .png (--frames:
# bench-spconv-frames.json and .md, and the bundle stream's files in
# frames-bundle/) to $OUT (default ./bench-out). Extra arguments go to
# `tilec bench spconv` (--quick, --rows shell128/64/f16;lidar/32/f16,
# --budget-s 300, --lib PATH, --frames).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/bench-out}
if [[ -n ${TILEC_BIN:-} ]]; then
  bin=$TILEC_BIN
elif [[ -x $here/../dist/gpu-bundle/bin/tilec && -f $here/../dist/gpu-bundle/lib/libtilec_c.so ]]; then
  bin=$here/../dist/gpu-bundle/bin
elif [[ -f $here/../dist/gpu-bundle.tar.xz || -x /tmp/gpu-bundle/bin/tilec ]]; then
  [[ -x /tmp/gpu-bundle/bin/tilec ]] || tar -C /tmp -xJf "$here/../dist/gpu-bundle.tar.xz" || exit 1
  bin=/tmp/gpu-bundle/bin
else
  bin=$here/../build/bin
fi
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
# Caches of their own, so that every first call is a cold one: tilec's stage
# and autotune caches, and Triton's compile cache, which also keeps
# spconv-Triton's autotune results (cache_results).
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-$(mktemp -d /tmp/tilec-bench-cache.XXXXXX)}
export TILEC_AUTOTUNE_CACHE=${TILEC_AUTOTUNE_CACHE:-$TILEC_CACHE_DIR/autotune_cache.json}
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d /tmp/triton-bench-cache.XXXXXX)}
source "$here/peer-wheels.sh"
use_peer_wheels "/tmp/bench-spconv-site.$$" || exit 1
TILEC_BENCH_DIR=$here/bench "$bin/tilec" bench spconv --out "$out" "$@"
