#!/usr/bin/env bash
# Measures, on a GPU machine, what autotuning costs a program (the numbers of
# docs/autotune.md, against Triton 3.6 in /work/shared/anchors.md):
#   1. the first call that compiles and tunes the kernel's 8 configs, with an
#      empty stage cache and an empty autotune cache;
#   2. the same with the stage cache warm and no autotune result (a new
#      autotune cache file): tuning only;
#   3. a fresh process with both caches warm (tilec-startup, no compiler
#      linked), from the moment its CUDA context is ready until the first
#      kernel has finished; median of STARTUP_RUNS processes; also for a tiny
#      kernel (vector_add), which shows the start-up cost without a long
#      kernel in it;
#   4. cuInit and the primary context, from the same tilec-startup runs.
# Prints a short table and writes JSON (and the logs) to ${OUT:-tune-out}.
#
# Binaries: $TILEC_BIN, else bin/ next to this script (the GPU bundle), else
# build/bin of the repository. Knobs: TUNE_KERNEL (matmul), TUNE_SIZES
# (M=4096,N=4096,K=4096), TUNE_TYPES (DTYPE=f16), TUNE_FLAGS (extra flags of
# tilec tune, e.g. "--budget-ms 50"), STARTUP_RUNS (5).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/tune-out}
mkdir -p "$out"
if [[ -n ${TILEC_BIN:-} ]]; then
  bin=$TILEC_BIN
elif [[ -x $here/bin/tilec ]]; then
  bin=$here/bin
elif [[ -x $here/../build/bin/tilec ]]; then
  bin=$here/../build/bin
else
  echo "tune-bench: no tilec binaries (set TILEC_BIN)" >&2
  exit 1
fi
for tool in tilec tilec-startup; do
  [[ -x $bin/$tool ]] || { echo "tune-bench: $bin/$tool is missing" >&2; exit 1; }
done
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
kernel=${TUNE_KERNEL:-matmul}
sizes=${TUNE_SIZES:-M=4096,N=4096,K=4096}
types=${TUNE_TYPES:-DTYPE=f16}
read -r -a flags <<< "${TUNE_FLAGS:-}"
runs=${STARTUP_RUNS:-5}

work=$(mktemp -d /tmp/tilec-tune-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Both caches start empty and live only for this run.
export TILEC_CACHE_DIR=$work/stage-cache
export TILEC_AUTOTUNE_CACHE=$work/autotune_cache.json
unset TILEC_PIN_CONFIG TILEC_PIN_FILE
failures=0

now_ms() { date +%s%3N; }
# The value of "key" in one of our JSON files (written one key per line).
jget() { grep -m1 "\"$2\":" "$1" 2>/dev/null | sed 's/.*": *//; s/,$//; s/"//g'; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

tune() { # name [env...]: one `tilec tune` process, timed from outside too
  local name=$1; shift
  local start end
  start=$(now_ms)
  if env "$@" "$bin/tilec" tune --kernel "$kernel" --sizes "$sizes" --types "$types" \
      --progress "${flags[@]}" --json "$out/$name.json" > "$out/$name.log" 2>&1; then
    end=$(now_ms)
    echo $((end - start)) > "$out/$name.wall_ms"
  else
    echo "tune-bench: tilec tune ($name) failed:" >&2
    tail -5 "$out/$name.log" >&2
    failures=$((failures + 1))
    echo nan > "$out/$name.wall_ms"
  fi
}

{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null ||
  echo "unknown GPU (no nvidia-smi)"; } > "$out/gpu.txt"

# 1. Cold: nothing compiled, nothing tuned.
tune tune-cold
# 2. Stage cache warm, no autotune result: a fresh autotune cache file.
tune tune-warm TILEC_AUTOTUNE_CACHE="$work/autotune_cache_fresh.json"

# 3 + 4. Fresh processes, both caches warm (those of run 1).
startup() { # name kernel sizes types
  local name=$1 k=$2 s=$3 t=$4
  for i in $(seq 1 "$runs"); do
    local args=(--kernel "$k" --sizes "$s" --json "$out/$name-$i.json")
    [[ -n $t ]] && args+=(--types "$t")
    if ! "$bin/tilec-startup" "${args[@]}" > "$out/$name-$i.log" 2>&1; then
      echo "tune-bench: tilec-startup ($name run $i) failed:" >&2
      tail -3 "$out/$name-$i.log" >&2
      failures=$((failures + 1))
    fi
  done
}
startup startup "$kernel" "$sizes" "$types"
# A tiny kernel: tune it once, then start fresh processes on it.
tiny_sizes=n_elements=1048576
"$bin/tilec" tune --kernel vector_add --sizes "$tiny_sizes" --quiet \
  --json "$out/tune-tiny.json" > "$out/tune-tiny.log" 2>&1 ||
  { echo "tune-bench: tilec tune (vector_add) failed" >&2; failures=$((failures + 1)); }
startup startup-tiny vector_add "$tiny_sizes" ""

stat_of() { # prefix key
  for f in "$out/$1"-[0-9]*.json; do jget "$f" "$2"; done | median
}
cold_ms=$(jget "$out/tune-cold.json" total_ms)
cold_compile=$(jget "$out/tune-cold.json" compile_ms)
cold_bench=$(jget "$out/tune-cold.json" benchmark_ms)
warm_ms=$(jget "$out/tune-warm.json" total_ms)
warm_compile=$(jget "$out/tune-warm.json" compile_ms)
warm_bench=$(jget "$out/tune-warm.json" benchmark_ms)
cold_winner=$(jget "$out/tune-cold.json" config)
warm_winner=$(jget "$out/tune-warm.json" config)
first_ms=$(stat_of startup first_call_ms)
kernel_us=$(stat_of startup kernel_us)
overhead_us=$(stat_of startup overhead_us)
tiny_ms=$(stat_of startup-tiny first_call_ms)
tiny_overhead=$(stat_of startup-tiny overhead_us)
cuinit_ms=$(stat_of startup cuinit_ms)
context_ms=$(stat_of startup context_ms)
same=$([[ -n $cold_winner && $cold_winner == "$warm_winner" ]] && echo yes || echo no)

{
  echo "{"
  echo "  \"gpu\": \"$(tr -d '\n"' < "$out/gpu.txt")\","
  echo "  \"kernel\": \"$kernel\", \"sizes\": \"$sizes\", \"types\": \"$types\","
  echo "  \"cold_tune_ms\": ${cold_ms:-null}, \"cold_compile_ms\": ${cold_compile:-null}, \"cold_benchmark_ms\": ${cold_bench:-null}, \"cold_process_wall_ms\": $(cat "$out/tune-cold.wall_ms"),"
  echo "  \"warm_tune_ms\": ${warm_ms:-null}, \"warm_compile_ms\": ${warm_compile:-null}, \"warm_benchmark_ms\": ${warm_bench:-null}, \"warm_process_wall_ms\": $(cat "$out/tune-warm.wall_ms"),"
  echo "  \"cold_winner\": \"$cold_winner\", \"warm_winner\": \"$warm_winner\", \"same_winner\": \"$same\","
  echo "  \"startup_runs\": $runs,"
  echo "  \"startup_first_call_ms\": $first_ms, \"startup_kernel_us\": $kernel_us, \"startup_overhead_us\": $overhead_us,"
  echo "  \"tiny_first_call_ms\": $tiny_ms, \"tiny_overhead_us\": $tiny_overhead,"
  echo "  \"cuinit_ms\": $cuinit_ms, \"primary_context_ms\": $context_ms,"
  echo "  \"failures\": $failures"
  echo "}"
} > "$out/tune-bench.json"

num() { # value digits: a number with that many decimals, "-" when missing
  if [[ -z $1 || $1 == nan || $1 == null ]]; then echo -; else awk "BEGIN{printf \"%.${2}f\", $1}"; fi
}
cold_wall=$(cat "$out/tune-cold.wall_ms")
row() { printf '%-60s %22s %12s %8s\n' "$@"; }
echo "== $(cat "$out/gpu.txt"); $kernel $sizes $types"
sed -n '/^config/,/^persisted/p' "$out/tune-cold.log"
row "what" "tilec" "Triton 3.6" "goal"
row "1. first call, compile + tune 8 configs, cold caches" "$(num "$(awk "BEGIN{print ${cold_ms:-0}/1000}")" 2) s" "5.3 s" "< 1 s"
row "   compile (parallel) / benchmark / whole process" "$(num "$(awk "BEGIN{print ${cold_compile:-0}/1000}")" 2) / $(num "$(awk "BEGIN{print ${cold_bench:-0}/1000}")" 2) / $(num "$(awk "BEGIN{print ${cold_wall/nan/0}/1000}")" 2) s"
row "2. first call, stage cache warm, no autotune result" "$(num "$(awk "BEGIN{print ${warm_ms:-0}/1000}")" 3) s" "0.92 s"
row "   compile (cache hits) / benchmark" "$(num "$(awk "BEGIN{print ${warm_compile:-0}/1000}")" 3) / $(num "$(awk "BEGIN{print ${warm_bench:-0}/1000}")" 3) s"
row "3. new process, both warm: context ready -> kernel done" "$(num "$first_ms" 3) ms" "0.585 s" "< 1 ms"
row "   $kernel kernel itself / everything else" "$(num "$kernel_us" 0) / $(num "$overhead_us" 0) us"
row "   vector_add (tiny): ready -> done / everything else" "$(num "$tiny_ms" 3) ms / $(num "$tiny_overhead" 0) us"
row "4. cuInit / primary context (same processes)" "$(num "$cuinit_ms" 1) / $(num "$context_ms" 1) ms" "~100 / ~105"
echo "winner cold: $cold_winner"
echo "winner warm: $warm_winner (same: $same)"
echo "== $failures failure(s); JSON and logs in $out"
[[ $failures -eq 0 ]]
