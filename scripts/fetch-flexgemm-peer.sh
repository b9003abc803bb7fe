#!/usr/bin/env bash
# FlexGEMM (github.com/JeffreyXiang/FlexGEMM, MIT), the peer of
# `tilec bench spconv --frames` (scripts/bench/spconv_frames.py), as source in
# peers/FlexGEMM of this checkout: a folder git ignores (/peers/), never
# committed, which travels to the GPU machine only when carried
# (carry: peers/FlexGEMM).
#
#   scripts/fetch-flexgemm-peer.sh [MIRROR] [--build]
#
# MIRROR: a git directory of FlexGEMM (bare, or a checkout), by default
# $FLEXGEMM_MIRROR or /work/.mirror/JeffreyXiang+FlexGEMM/repo; its HEAD is
# exported with `git archive` (no history, no .git; the benchmark plots in
# assets/ are left out) and the commit is written to peers/FlexGEMM/.peer-commit.
#
# --build, on a machine with a GPU, nvcc and torch: builds its CUDA extension
# in place (flex_gemm/kernels/cuda*.so), which the bench otherwise does on
# its first run when the extension is missing. TORCH_CUDA_ARCH_LIST defaults
# to 9.0 (the H200). FlexGEMM's setup.py also writes its shipped autotune
# cache to ~/.flex_gemm/autotune_cache.json (entries for A100s and MI300X
# only); the bench points FLEX_GEMM_AUTOTUNE_CACHE_PATH at a fresh file, so
# that file is not read by it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/peers/FlexGEMM
mirror=${FLEXGEMM_MIRROR:-/work/.mirror/JeffreyXiang+FlexGEMM/repo}
build=0
for arg in "$@"; do
  case $arg in
    --build) build=1 ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "fetch-flexgemm-peer: unknown option $arg" >&2; exit 2 ;;
    *) mirror=$arg ;;
  esac
done

build_in_place() {
  cd "$dest"
  echo "fetch-flexgemm-peer: building the CUDA extension in $dest"
  TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} MAX_JOBS=${MAX_JOBS:-$(nproc)} \
    python3 setup.py build_ext --inplace
  ls flex_gemm/kernels/cuda*.so
}

if [[ -d $mirror ]]; then
  if [[ -d $mirror/.git ]]; then
    git=(git -C "$mirror")
  else
    git=(git --git-dir="$mirror")
  fi
  commit=$("${git[@]}" rev-parse HEAD)
  staging=$dest.tmp.$$
  rm -rf "$staging"
  mkdir -p "$staging"
  "${git[@]}" archive --format=tar HEAD -- . ':(exclude)assets' | tar -x -C "$staging"
  echo "$commit" > "$staging/.peer-commit"
  rm -rf "$dest"
  mv "$staging" "$dest"
  echo "fetch-flexgemm-peer: FlexGEMM $commit in $dest ($(du -sh "$dest" | cut -f1))"
elif [[ -f $dest/setup.py && $build == 1 ]]; then
  # On the GPU machine there is no mirror: the folder came carried.
  echo "fetch-flexgemm-peer: no mirror at $mirror; building the carried $dest ($(cat "$dest/.peer-commit" 2> /dev/null || echo 'commit unknown'))"
else
  echo "fetch-flexgemm-peer: no git directory at $mirror (pass FlexGEMM's mirror or checkout)" >&2
  exit 1
fi
if ((build)); then
  build_in_place
fi
