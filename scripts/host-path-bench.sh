#!/usr/bin/env bash
# The host's share of the sparse convolution's work, measured without a GPU:
# a disabled test of SparseConvGpuTest runs over the interpreter device under
# callgrind, which counts the instructions after the test's marker; the
# driver's entry points (the interpreter's cuLaunchKernel, memsets, copies)
# are subtracted, so what is left is tilec's own host work: the launches'
# plans, argument packing, allocations. The counts agree within about 1%
# from run to run (the compile workers' threads), so two builds compare
# without a GPU host's noise (that host runs the same code; its driver calls
# are not counted here).
#
#   scripts/host-path-bench.sh [--step | --frame] [BUILD_DIR]  # default build/
#
# By default: DISABLED_HostPathOfNewSizes, ten map builds of new voxel
# counts in one bucket after two that compile and plan it, counted inside
# SparseTensor::buildMaps. --step: DISABLED_HostPathOfATrainingStep, ten
# training steps of a 16-channel 3^3 layer over maps that exist (the
# forward, dX, dW and db, as the PyTorch module's autograd calls them),
# counted in the test's body after the marker. --frame:
# DISABLED_HostPathOfFrames, the same new voxel counts as the map builds,
# each a new tensor and a 16-channel 3^3 convolution over it (which builds
# the maps it needs), counted in the test's body.
#
# Prints the instructions a build (a step, a frame) and the functions of the
# launch path (inclusive, a build, a step or a frame); needs valgrind. About
# 3 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=build
case ${1:-} in
  --step | --frame) mode=${1#--}; shift ;;
esac
build=$(cd "${1:-$root/build}" && pwd)
work=$(mktemp -d /tmp/tilec-host-path.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# Each mode: its test, the function counted (callgrind's collection is on in
# its calls only, from the marker on: not the test's teardown, not a compile
# worker's thread finishing its work; the patterns end at ')' so that a
# lambda inside it, named after it, does not toggle the collection again),
# the unit the test prints and what a unit is.
case $mode in
  build) test=HostPathOfNewSizes collect='tilec::sparse::SparseTensor::buildMaps(*)'
    unit=builds what='map build of a new size (N 593-1000, 3^3)' ;;
  step) test=HostPathOfATrainingStep collect='*HostPathTest_DISABLED_HostPathOfATrainingStep_Test::TestBody()'
    unit=steps what='training step (N 600, C 16, 3^3; forward, dX, dW, db)' ;;
  frame) test=HostPathOfFrames collect='*HostPathTest_DISABLED_HostPathOfFrames_Test::TestBody()'
    unit=frames what='frame of a new size (N 593-1000, C 16, 3^3: a new tensor, its maps, the convolution)' ;;
esac
LD_LIBRARY_PATH=$build/lib/interpreter-device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  valgrind --tool=callgrind --zero-before=tilecHostPathMeasureStart \
  --collect-atstart=no --toggle-collect="$collect" \
  --callgrind-out-file="$work/callgrind.out" "$build/bin/SparseConvGpuTest" \
  --gtest_also_run_disabled_tests --gtest_filter="*$test*" > "$work/run.log" 2>&1 ||
  { tail -20 "$work/run.log"; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$work/callgrind.out" > "$work/annotated.txt"
python3 - "$mode" "$unit" "$what" "$work/annotated.txt" "$work/run.log" <<'PY'
import re, sys
mode, unit, what, annotated, log = sys.argv[1:]
runs = int(re.search(rf"host path: (\d+) {unit} after the marker",
                     open(log).read()).group(1))
driver = measured = 0
named = {}
watch = ("tilec::sparse::SparseEngine::plan(", "tilec::sparse::SparseEngine::launch(",
         "tilec::sparse::callKey", "tilec::CallPlan::evaluate(", "tilec::CallPlan::shapeOf",
         "tilec::CallPlan::Grid::evaluate(", "tilec::rt::ArgPack::ArgPack(",
         "tilec::sparse::bindIntegerArguments(")
if mode != "build":
    watch += ("tilec::sparse::submanifoldConv3d(", "tilec::sparse::submanifoldConv3dBackward(",
              "tilec::rt::Autotuner::hasChoice(", "tilec::rt::Autotuner::select(",
              "tilec::rt::Autotuner::compileAhead(", "tilec::sparse::SparseEngine::allocateMaps(",
              "tilec::sparse::SparseTensor::offsetPairs(", "tilec::rt::launch(",
              "tilec::KernelDescription::evaluateAutotuneKey(",
              "tilec::KernelDescription::specializationOf(")
for line in open(annotated):
    if "PROGRAM TOTALS" in line:
        measured = int(line.split()[0].replace(",", ""))
    m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\?\?\?:(\S+)", line)
    if not m:
        continue
    count, name = int(m.group(1).replace(",", "")), m.group(2)
    if "libcuda.so.1]" in line and re.fullmatch(r"cu[A-Z]\w*", name.split("(")[0]):
        driver += count
    for prefix in watch:
        if name.startswith(prefix):
            named[prefix.rstrip("(")] = named.get(prefix.rstrip("("), 0) + count
if not measured:
    sys.exit("host-path-bench: nothing measured in the profile")
print(f"{what}: {(measured - driver) / runs:,.0f} host instructions a {unit[:-1]} "
      f"outside the driver")
for prefix, count in sorted(named.items(), key=lambda item: -item[1]):
    if mode != "build" or not prefix.endswith("SparseEngine::launch"):
        print(f"  {prefix:40s} {count / runs:>12,.0f}")
PY
