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
#      bin/tilec-startup-embedded exists, from the bundle compiled in; and
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
[[ -f $workload ]] || workload=$here/../scripts/deploy/workload.json
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
step replay-cache "$bin/tilec-replay" "$workload" --json "$out/replay-cache.json"
cat "$out/logs/replay.log"

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
  fi
  env TILEC_CACHE_DIR="$work/none" TILEC_AUTOTUNE_CACHE="$work/none/at.json" \
    "$bin/tilec-replay" "$conv_workload" --bundle "$out/workload.bundle" --no-check --json "$work/conv-bundle-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
  "$bin/tilec-replay" "$conv_workload" --no-check --json "$work/conv-cache-$i.json" > /dev/null 2>> "$out/logs/startup.log" || failures=$((failures + 1))
done
"$bin/tilec" cache stats > "$out/logs/cache-stats.log" 2>&1

python3 - "$work" "$out" "$processes" <<'EOF'
import glob, json, os, statistics, sys
work, out, processes = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(pattern):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(work, pattern)))]
def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "spread": max(values) / min(values) if min(values) > 0 else 0} if values else {}
result = {"processes": processes, "startup": {}, "conv_first_call": {}}
print("\nfirst matmul 4096^3 f16 of a fresh process, context ready -> kernel done, minus the kernel")
print("%-10s %12s %12s %12s %14s %14s" % ("from", "median us", "min us", "max us", "kernel med us", "kernel spread"))
for source in ("cache", "bundle", "embedded"):
    runs = load("startup-%s-*.json" % source)
    if not runs:
        continue
    overhead = spread([r["overhead_us"] for r in runs])
    kernel = spread([r["kernel_us"] for r in runs])
    steps = {name: statistics.median(r["steps_us"].get(name, 0) for r in runs) for name in runs[0]["steps_us"]}
    result["startup"][source] = {"overhead_us": overhead, "kernel_us": kernel, "steps_us": steps,
                                 "cubin_source": runs[0]["cubin_source"]}
    print("%-10s %12.1f %12.1f %12.1f %14.1f %13.3fx" % (source, overhead["median"], overhead["min"], overhead["max"], kernel["median"], kernel["spread"]))
    for name, us in steps.items():
        print("             %-34s %9.1f us" % (name, us))
print("\nfirst call of a convolution layer in a fresh process (maps + kernels), and its kernel time")
print("%-10s %12s %12s %12s %14s %14s" % ("from", "median ms", "min ms", "max ms", "kernel med us", "kernel spread"))
for source in ("bundle", "cache"):
    runs = load("conv-%s-*.json" % source)
    if not runs:
        continue
    first = spread([r["calls"][0]["first_call_ms"] for r in runs])
    kernel = spread([r["calls"][0]["kernel_us"] for r in runs])
    result["conv_first_call"][source] = {"call": runs[0]["calls"][0]["call"], "first_call_ms": first, "kernel_us": kernel}
    print("%-10s %12.2f %12.2f %12.2f %14.1f %13.3fx" % (source, first["median"], first["min"], first["max"], kernel["median"], kernel["spread"]))
for name in ("replay-bundle", "replay-cache"):
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        result[name] = json.load(open(path))
path = os.path.join(out, "warmup.json")
if os.path.exists(path):
    result["warmup"] = json.load(open(path))
result["pack"] = open(os.path.join(out, "pack.txt")).read().splitlines()[-2:] if os.path.exists(os.path.join(out, "pack.txt")) else []
print("\n" + "\n".join(result["pack"]))
json.dump(result, open(os.path.join(out, "deploy-bench.json"), "w"), indent=1)
EOF
rm -rf "$work"
echo "deploy-bench: $failures failures"
exit $((failures > 0))
