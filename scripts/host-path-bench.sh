#!/usr/bin/env bash
# The host's share of the sparse convolution's map build, measured without
# a GPU: SparseConvGpuTest.DISABLED_HostPathOfNewSizes (ten map builds of
# new voxel counts in one bucket, after two that compile and plan it) runs
# over the interpreter device under callgrind, which counts the
# instructions SparseTensor::buildMaps executes after the test's marker;
# the driver's entry points (the interpreter's cuLaunchKernel, memsets,
# copies) are subtracted, so what is left is tilec's own host work: the
# launches' plans, argument packing, allocations. The counts of one build
# agree within about 1% from run to run (the compile workers' threads), so
# two builds compare without a GPU host's noise (that host runs the same
# code; its driver calls are not counted here).
#
#   scripts/host-path-bench.sh [BUILD_DIR]     # default build/
#
# Prints the instructions a build and the functions of the launch path
# (inclusive, a build); needs valgrind. About 3 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=$(mktemp -d /tmp/tilec-host-path.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
LD_LIBRARY_PATH=$build/lib/interpreter-device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  valgrind --tool=callgrind --zero-before=tilecHostPathMeasureStart \
  --callgrind-out-file="$work/callgrind.out" "$build/bin/SparseConvGpuTest" \
  --gtest_also_run_disabled_tests --gtest_filter='*HostPathOfNewSizes*' > "$work/run.log" 2>&1 ||
  { tail -20 "$work/run.log"; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$work/callgrind.out" > "$work/annotated.txt"
python3 - "$work/annotated.txt" "$work/run.log" <<'PY'
import re, sys
builds = int(re.search(r"host path: (\d+) builds after the marker",
                       open(sys.argv[2]).read()).group(1))
driver = build = 0
named = {}
watch = ("tilec::sparse::SparseEngine::plan(", "tilec::sparse::SparseEngine::launch(",
         "tilec::sparse::callKey", "tilec::CallPlan::evaluate(", "tilec::CallPlan::shapeOf",
         "tilec::CallPlan::Grid::evaluate(", "tilec::rt::ArgPack::ArgPack(",
         "tilec::sparse::bindIntegerArguments(")
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\?\?\?:(\S+)", line)
    if not m:
        continue
    count, name = int(m.group(1).replace(",", "")), m.group(2)
    if "libcuda.so.1]" in line and re.fullmatch(r"cu[A-Z]\w*", name.split("(")[0]):
        driver += count
    if name.startswith("tilec::sparse::SparseTensor::buildMaps("):
        build = count
    for prefix in watch:
        if name.startswith(prefix):
            named[prefix.rstrip("(")] = named.get(prefix.rstrip("("), 0) + count
if not build:
    sys.exit("host-path-bench: no SparseTensor::buildMaps in the profile")
print(f"map build of a new size (N 593-1000, 3^3): {(build - driver) / builds:,.0f} "
      f"host instructions a build outside the driver")
for prefix, count in sorted(named.items(), key=lambda item: -item[1]):
    if not prefix.endswith("SparseEngine::launch"):
        print(f"  {prefix:40s} {count / builds:>12,.0f}")
PY
