#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz (clang with ASan and UBSan, in
# build-fuzz/) and runs each for a bounded time on a copy of its seed corpus
# (test/fuzz/corpus/<target>/). Exits non-zero when a target crashes, leaks,
# trips a sanitizer or runs out of time or memory on one input; the input
# that did it is kept in ${FUZZ_OUT:-build-fuzz/findings}.
#
#   scripts/fuzz.sh                 # every target, 15 s each (what CI runs)
#   scripts/fuzz.sh 600             # 10 minutes each
#   scripts/fuzz.sh 60 BundleFuzzer # one target
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
build_dir=${TILEC_FUZZ_BUILD_DIR:-build-fuzz}
out=${FUZZ_OUT:-$build_dir/findings}
targets=("$@")
((${#targets[@]})) || targets=(ConfigFuzzer ExpressionFuzzer CompileJsonFuzzer
  BundleFuzzer AutotuneCacheFuzzer WorkloadFuzzer TtirFuzzer InterpreterFuzzer)
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DTILEC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" > /dev/null
ninja -C "$build_dir" "${targets[@]}" > "$build_dir/fuzz-build.log" ||
  { tail -30 "$build_dir/fuzz-build.log"; exit 1; }
mkdir -p "$out"
failures=0
for target in "${targets[@]}"; do
  corpus=$build_dir/corpus/$target
  mkdir -p "$corpus"
  # The interpreter's fuzzer mutates the same ttir as the compiler's.
  seeds=$target
  [[ $target == InterpreterFuzzer ]] && seeds=TtirFuzzer
  cp -r test/fuzz/corpus/"$seeds"/. "$corpus"/
  log=$build_dir/$target.log
  # -rss_limit_mb: an input that makes a parser allocate past this is a
  # finding (unbounded memory); -timeout: one that runs past it, a hang.
  if "$build_dir/bin/$target" "$corpus" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$out/$target-" > "$log" 2>&1; then
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
    printf '%-22s ok    %10s runs in %ss, coverage %s edges, corpus %s\n' \
      "$target" "$runs" "$seconds" "$cov" "$(ls "$corpus" | wc -l)"
  else
    failures=$((failures + 1))
    printf '%-22s FAIL  %s\n' "$target" "$(grep -m1 -E 'ERROR|SUMMARY|deadly|timeout|out-of-memory' "$log" || tail -1 "$log")"
    echo "  log: $log; input: $(ls "$out"/"$target"-* 2>/dev/null | head -1)"
  fi
done
exit $((failures > 0))
