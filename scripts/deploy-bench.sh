#!/usr/bin/env bash
# Deployment without run-time compilation, measured on a GPU machine
# (docs/deploy.md): with both caches in a fresh directory,
#   1. tilec warmup of a workload of matmuls and sparse convolutions (cold);
#   2. tilec pack: its winners and exactly their cubins, into one bundle;
#   3. tilec-replay (runtime libraries only, no LLVM) runs every call from the
#      bundle alone, with no cache directory, each result checked against
#      float64; then again from the caches;
#   4. 20 fresh processes each: tilec-startup (context ready -> first matmul
#      done) from the caches, from the bundle file and, where
#      bin/tilec-startup-embedded exists, from the bundle compiled in and,
#      as the floor, the same cubin through the raw driver (--bare); and
#      the first call of a convolution layer (maps and kernels) from the
#      bundle and from the caches.
# Prints a table, writes deploy-bench.json, the bundle, the pack report and
# the logs to ${OUT:-deploy-out}; exits non-zero when a step fails or a
# result is wrong.
#
#   scripts/deploy-bench.sh [WORKLOAD.json]   (inside an unpacked GPU bundle,
#                                              or with TILEC_BIN=dir/of/tools)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TILEC_BIN:-}
[[ -z $bin && -x $here/bin/tilec ]] && bin=$here/bin
[[ -z $bin ]] && { echo "deploy-bench: no tilec binaries (set TILEC_BIN)" >&2; exit 1; }
workload=${1:-$here/deploy/workload.json}
out=${OUT:-$PWD/deploy-out}
mkdir -p "$out/logs"
processes=${DEPLOY_PROCESSES:-20}
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d /tmp/tilec-deploy.XXXXXX)
export TILEC_CACHE_DIR=$work/cache TILEC_AUTOTUNE_CACHE=$work/autotune.json
failures=0
step() { # name command...
  local name=$1; shift
  local start=$(date +%s%N)
  if "$@" > "$out/logs/$name.log" 2>&1; then
    printf '%-12s ok    %6d ms\n' "$name" $(( ($(date +%s%N) - start) / 1000000 ))
  else
    printf '%-12s FAIL  (see logs/%s.log)\n' "$name" "$name"; tail -5 "$out/logs/$name.log"
    failures=$((failures + 1))
  fi
}

step warmup "$bin/tilec" warmup "$workload" --json "$out/warmup.json"
step pack "$bin/tilec" pack -o "$out/workload.bundle"
cp "$out/logs/pack.log" "$out/pack.txt"
# From the bundle alone: the caches point at directories that do not exist,
# and must still not exist afterwards.
step replay env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
  "$bin/tilec-replay" "$workload" --bundle "$out/workload.bundle" --json "$out/replay-bundle.json"
[[ -e $work/none ]] && { echo "replay from the bundle created $work/none"; failures=$((failures + 1)); }
step replay-cache "$bin/tilec-replay" "$workload" --no-check --json "$out/replay-cache.json"
for log in warmup pack replay replay-cache; do
  echo "--- $log"; tail -40 "$out/logs/$log.log"
done

# Fresh processes: the first matmul, and the first convolution layer.
matmul=(--kernel matmul --sizes M=4096,N=4096,K=4096 --types DTYPE=f16)
conv_workload=$work/conv.json
python3 - "$workload" "$conv_workload" <<'EOF'
import json, sys
calls = [c for c in json.load(open(sys.argv[1]))["calls"] if c.get("op")][1:2]
json.dump({"format": "tilec-workload", "version": 1, "calls": calls}, open(sys.argv[2], "w"))
EOF
for i in $(seq 1 "$processes"); do
  "$bin/tilec-startup" "${matmul[@]}" --json "$work/startup-cache-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
  env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
    "$bin/tilec-startup" "${matmul[@]}" --bundle "$out/workload.bundle" --json "$work/startup-bundle-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
  if [[ -x $bin/tilec-startup-embedded ]]; then
    env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
      "$bin/tilec-startup-embedded" "${matmul[@]}" --embedded --json "$work/startup-embedded-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
    # The floor: the same cubin through the raw driver alone.
    env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
      "$bin/tilec-startup-embedded" "${matmul[@]}" --embedded --bare --json "$work/startup-bare-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
  fi
  env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
    "$bin/tilec-replay" "$conv_workload" --bundle "$out/workload.bundle" --no-check --json "$work/conv-bundle-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
  "$bin/tilec-replay" "$conv_workload" --no-check --json "$work/conv-cache-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
done
"$bin/tilec" cache stats > "$out/logs/cache-stats.log" 2>&1

python3 "$here/deploy/summarize.py" "$work" "$out" "$processes" || failures=$((failures + 1))
rm -rf "$work"
echo "deploy-bench: $failures failures"
exit $((failures > 0))
