#!/usr/bin/env bash
# The sparse convolution's map kernels on a GPU machine, in one short call:
#   1. the voxel table's insert and lookups (a half-full table: long probe
#      sequences) and each map kernel of the radix sort and the sort keys
#      against its host oracle (`tilec run`: 500k keys, odd sizes, several
#      chunk layouts, cubic and non-cubic windows), racecheck of the probe
#      loops, the scatter and the transpose, and memcheck of the scatter
#      launched again on the same buffers;
#   2. the map tests of SparseConvGpuTest and StridedConvGpuTest (maps
#      against the host oracle, launched and replayed from a recorded
#      bucket, a build repeated, the convolution against float64, bad
#      coordinates, empty input);
#   3. with BASELINE (another build's libtilec_c.so): the map build of this
#      bundle's library against it in one process (spconv_maps_ab.py, fresh
#      subsets, paired differences), then this library's per-kernel profile
#      (spconv_maps_profile.py --fresh-sizes).
# Prints as it goes; logs and JSON go to ${OUT:-maps-out}; exits non-zero
# when a check fails.
#
#   scripts/maps-check.sh [BASELINE]     # from the repository, with
#                                        # dist/gpu-bundle.tar.xz
#   ./maps-check.sh [BASELINE]           # inside an unpacked bundle
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/maps-out}
mkdir -p "$out"
source "$here/bundle-paths.sh"
baseline=${1:-}
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
export PYTHONPATH=$package${PYTHONPATH:+:$PYTHONPATH}
export TILEC_LIBRARY=$bundle/lib/libtilec_c.so
export TILEC_CACHE_DIR=$out/cache TILEC_AUTOTUNE_CACHE=$out/autotune.json
failures=0
start=$(date +%s)
elapsed() { echo "[$(( $(date +%s) - start )) s]"; }

suite() { # binary filter
  local log=$out/$1.log
  if "$bundle/bin/$1" --gtest_filter="$2" > "$log" 2>&1; then
    echo "$(elapsed) $1: $(grep -c '^\[       OK' "$log") passed"
  else
    echo "$(elapsed) $1: FAILED $(grep '^\[  FAILED' "$log" | head -5 | tr '\n' ' ')"
    return 1
  fi
}
suite SparseConvGpuTest '*MapsMatch*:*OneRecordedBuild*:*BuildingTwice*:*ConvolutionMatches*:*Duplicates*:*EmptyInput*' &
sparse=$!
suite StridedConvGpuTest '*OutputsAndMaps*:*OnAStream*' &
strided=$!

runs=(
  "voxel_hash_insert num_warps=4 N=4000,LOG2_T=13,V=27"
  "voxel_hash_insert num_warps=4 N=300001,LOG2_T=20,V=27"
  "voxel_neighbours num_warps=4 N=4000,LOG2_T=13"
  "voxel_neighbours num_warps=4 N=300001,LOG2_T=20"
  "radix_scatter FIRST=1,BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=500000,SHIFT=7"
  "radix_scatter BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=100003,SHIFT=21"
  "radix_scatter BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=777,SHIFT=28"
  "radix_scatter num_warps=4 N=10000,SHIFT=4"
  "radix_histogram BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=100003,SHIFT=7"
  "neighbour_keys num_warps=4 N=40001,KX=3,KY=3,KZ=3"
  "neighbour_keys num_warps=4 N=777,KX=5,KY=5,KZ=5"
  "neighbour_keys num_warps=4 N=3000,KX=5,KY=1,KZ=3"
  "neighbour_keys num_warps=4 N=3000,KX=2,KY=2,KZ=2"
  "neighbour_transpose num_warps=4 N=100003,V=27"
  "neighbour_transpose num_warps=4 N=7777,V=125"
  "neighbour_transpose num_warps=4 N=3001,V=343"
  "block_offsets BLOCK_M=128 N=100003,V=27,CHECK_COUNTS=1"
  "block_offsets BLOCK_M=64 N=7777,V=125"
)
for run in "${runs[@]}"; do
  read -r kernel config sizes <<< "$run"
  if line=$("$bundle/bin/tilec" run --kernel "$kernel" --config "$config" --sizes "$sizes" 2>&1 | tail -1) &&
    [[ $line == *PASS* ]]; then
    echo "$(elapsed) ok   $kernel $config $sizes: ${line:0:100}"
  else
    echo "$(elapsed) FAIL $kernel $config $sizes: ${line:0:160}"
    failures=$((failures + 1))
  fi
done
if compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/bin/tilec" run --kernel radix_scatter \
    --config FIRST=1,BLOCK=128,CHUNKS=1,DIGIT_BITS=7 --sizes N=777,SHIFT=7 --reps 0 > "$out/racecheck.log" 2>&1; then
  echo "$(elapsed) ok   racecheck radix_scatter: $(grep -o 'RACECHECK SUMMARY.*' "$out/racecheck.log" | head -1)"
else
  echo "$(elapsed) FAIL racecheck radix_scatter: $(tail -1 "$out/racecheck.log")"
  failures=$((failures + 1))
fi
# The probe loops reduce "any lane pending" per chunk through shared
# memory, one reduction after another.
for kernel in voxel_hash_insert voxel_neighbours; do
  if compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/bin/tilec" run --kernel $kernel \
      --config num_warps=4 --sizes N=4000,LOG2_T=13,V=27 --reps 0 > "$out/racecheck-$kernel.log" 2>&1; then
    echo "$(elapsed) ok   racecheck $kernel: $(grep -o 'RACECHECK SUMMARY.*' "$out/racecheck-$kernel.log" | head -1)"
  else
    echo "$(elapsed) FAIL racecheck $kernel: $(tail -1 "$out/racecheck-$kernel.log")"
    failures=$((failures + 1))
  fi
done
# Launched again on the same buffers (as `tilec run`'s timing loop, tilec
# replay and tuning do), a kernel must read the same inputs: memcheck over a
# checked launch and the timing launches after it.
if compute-sanitizer --tool racecheck --error-exitcode 9 "$bundle/bin/tilec" run --kernel neighbour_transpose \
    --config num_warps=4 --sizes N=777,V=125 --reps 0 > "$out/racecheck-transpose.log" 2>&1; then
  echo "$(elapsed) ok   racecheck neighbour_transpose: $(grep -o 'RACECHECK SUMMARY.*' "$out/racecheck-transpose.log" | head -1)"
else
  echo "$(elapsed) FAIL racecheck neighbour_transpose: $(tail -1 "$out/racecheck-transpose.log")"
  failures=$((failures + 1))
fi
for run in "radix_scatter FIRST=1,BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=777,SHIFT=28" \
           "radix_scatter BLOCK=128,CHUNKS=1,DIGIT_BITS=7 N=10000,SHIFT=4"; do
  read -r kernel config sizes <<< "$run"
  if compute-sanitizer --tool memcheck --error-exitcode 9 "$bundle/bin/tilec" run --kernel "$kernel" \
      --config "$config" --sizes "$sizes" --reps 2 > "$out/memcheck-relaunch.log" 2>&1; then
    echo "$(elapsed) ok   memcheck, launched again: $kernel $config $sizes"
  else
    echo "$(elapsed) FAIL memcheck, launched again: $kernel $config $sizes: $(grep -m1 -E 'Invalid|ERROR' "$out/memcheck-relaunch.log")"
    failures=$((failures + 1))
  fi
done
wait $sparse || failures=$((failures + 1))
wait $strided || failures=$((failures + 1))

# Timing after the checks, alone on the GPU.
if [[ -n $baseline ]]; then
  python3 "$bench/spconv_maps_ab.py" --libs "$baseline,$TILEC_LIBRARY" --builds 15 \
    --cache-root "$out/ab" --out "$out" > "$out/ab.log" 2>&1 || failures=$((failures + 1))
  echo "$(elapsed) map build, $baseline (lib0) against this bundle's (lib1):"
  grep -E '^[a-z0-9]+:|lib[0-9] build' "$out/ab.log"
fi
python3 "$bench/spconv_maps_profile.py" --lib "$TILEC_LIBRARY" --out "$out/profile" \
  --row-orders key --fresh-sizes > "$out/profile.log" 2>&1 || failures=$((failures + 1))
echo "$(elapsed) this bundle's map build, GPU work by kernel:"
grep -vE 'Warning|warn_once|^  (cu|cuda)' "$out/profile.log" | grep -E '^[a-z0-9]+,|^  [a-z_]+ ' | head -60
rm -rf "$out/cache" "$out/ab"
echo "== $failures failure(s); logs in $out"
[[ $failures -eq 0 ]]
