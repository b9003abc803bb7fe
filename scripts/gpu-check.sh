#!/usr/bin/env bash
# Runs the GPU suite on a machine with an NVIDIA GPU: the kernel and runtime
# GPU tests, `tilec run` for every kernel (even and tail sizes, timed), one
# run of each kernel under compute-sanitizer memcheck, and the launch-overhead
# benchmark, and (from the repository) the docs' GPU transcripts through
# scripts/check-docs.py --gpu. Prints a table last, writes JSON and logs to
# ${OUT:-gpu-out}, exits non-zero on any failure.
#
# From the repository: scripts/gpu-check.sh (uses dist/gpu-bundle.tar.xz,
# made by scripts/gpu-bundle.sh); or inside an unpacked bundle directory.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-out}
logs=$out/logs
mkdir -p "$logs"
if [[ -x "$here/bin/tilec" ]]; then
  bin=$here/bin
else
  tar -C /tmp -xJf "$here/../dist/gpu-bundle.tar.xz" || exit 1
  bin=/tmp/gpu-bundle/bin
fi
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
failures=0
table=()
# What tells runs of one kernel and sizes apart in names: " bf16", " SPLIT_K=2".
variant() {
  grep -oE '(DTYPE|SPLIT_K)=[a-z0-9]*' <<< "$1" | sed -e 's/^DTYPE=//' -e 's/^/ /' | tr -d '\n' || true
}
record() { # name status detail
  table+=("$(printf '%-58s %-5s %s' "$1" "$2" "$3")")
  # Each row also as it comes: a run stopped at a time limit still says
  # what passed before it.
  echo "[$(date +%T)] ${table[-1]}" >&2
  [[ $2 == ok ]] || failures=$((failures + 1))
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>&1
# GPU_CHECK_SUITES="A B": only these test binaries (a call that already ran
# the others). They run side by side (SparseConvGpuTest alone takes about
# 200 s), next to the `tilec run` and sanitizer rows below, so that the
# whole script fits one 10-minute call on the H200; GPU_CHECK_PARALLEL=0
# runs them one after another first. The SASS and launch-overhead rows wait
# for them.
suites=${GPU_CHECK_SUITES-KernelGpuTest CApiGpuTest AutotuneGpuTest SparseConvGpuTest StridedConvGpuTest AtomicScanGpuTest ToyKernelTest tilec_runtime_gpu_tests}
run_suite() {
  "$bin/$1" --gtest_output=json:"$out/$1.json" > "$logs/$1.log" 2>&1
}
record_suite() { # suite status
  if [[ $2 == 0 ]]; then
    record "$1" ok "$(grep -c '^\[       OK \]' "$logs/$1.log") passed"
  else
    record "$1" FAIL "$(grep -E '^\[  FAILED  \]' "$logs/$1.log" | head -3 | tr '\n' ' ')"
  fi
}
declare -A suite_pids=()
for suite in $suites; do
  if [[ ${GPU_CHECK_PARALLEL:-1} == 1 ]]; then
    run_suite "$suite" &
    suite_pids[$suite]=$!
  else
    run_suite "$suite"
    record_suite "$suite" $?
  fi
done

runs=(
  "vector_add BLOCK=1024 n_elements=16777216"
  "vector_add BLOCK=1024 n_elements=100003"
  "softmax BLOCK_N=1024 n_rows=4096,n_cols=1024"
  "softmax BLOCK_N=1024 n_rows=37,n_cols=1000"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 M=1024,N=1024,K=1024"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 M=203,N=176,K=208"
  "matmul BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=bf16 M=1024,N=1024,K=1024"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16 M=203,N=176,K=208"
  "matmul BLOCK_M=32,BLOCK_N=64,BLOCK_K=16,DTYPE=f32 M=1024,N=1024,K=1024"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 M=1000,N=1000,K=1000"
  "matmul BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=bf16 M=1111,N=2222,K=3333"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 M=1024,N=1024,K=1024,stride_bk=1,stride_bn=1024"
  "matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1 M=1000,N=1000,K=1000,stride_bk=1,stride_bn=1000"
  "matmul BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,DTYPE=f16,num_warps=8,num_stages=4 M=301,N=520,K=200"
  "matmul BLOCK_M=64,BLOCK_N=128,BLOCK_K=16,DTYPE=bf16,num_stages=3 M=96,N=136,K=40"
  "gather_matmul BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 M=4096,N=128,K=256,R=8192"
  "gather_matmul BLOCK_M=32,BLOCK_N=32,BLOCK_K=16,DTYPE=f32 M=203,N=176,K=208,R=301"
  "sparse_conv_fwd BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_stages=3 N=15192,CI=64,CO=64,V=27"
  "sparse_conv_fwd BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,num_stages=3 N=777,CI=3,CO=17,V=27"
  "sparse_conv_fwd BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,SPLIT_K=2,num_stages=3 N=777,CI=3,CO=17,V=27"
  "sparse_conv_fwd BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,TRANSPOSE_W=1,num_stages=3 N=777,CI=3,CO=17,V=27"
  "sparse_conv_wgrad BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_stages=3 N=15192,CI=64,CO=64,V=27,SPLITS=3,SPLIT_PAIRS=5064"
  "sparse_conv_wgrad BLOCK_M=32,BLOCK_N=32,BLOCK_K=32,num_stages=3 N=777,CI=3,CO=17,V=27,SPLITS=2,SPLIT_PAIRS=400"
  "offset_pair_counts num_warps=4 N=777,V=27"
  "offset_pairs num_warps=4 N=777,V=27"
  "split_sum num_warps=4 T=777,S=3"
  "column_sums num_warps=4 N=777,C=17,ROWS_PER_PART=100"
  "voxel_hash_insert num_warps=4 N=777,LOG2_T=11,V=27"
  "voxel_neighbours LOOKUPS=64,num_warps=4 N=777,LOG2_T=11,KX=5,KY=1,KZ=3,DX=2,DY=1,DZ=1"
  "radix_scatter FIRST=1,num_warps=4 N=777,SHIFT=28"
  "block_offsets VP=128,ROW_TILE=16,num_warps=4 N=777,V=125"
  "mask_unions num_warps=2 N=777"
  "mask_cover num_warps=4 N=777"
  "mask_cover num_warps=4 N=40001"
)
for run in "${runs[@]}"; do
  read -r kernel config sizes <<< "$run"
  dtype=$(variant "$config")
  log="$logs/run-$kernel-${sizes//[,=]/_}${dtype// /_}.log"
  if "$bin/tilec" run --kernel "$kernel" --config "$config" --sizes "$sizes" > "$log" 2>&1; then
    record "run $kernel $sizes$dtype" ok "$(tail -1 "$log" | sed 's/^ *//' | cut -c1-90)"
  else
    record "run $kernel $sizes$dtype" FAIL "$(tail -1 "$log" | cut -c1-90)"
  fi
done

# Each kernel (and each matmul input type) once under memcheck, on the sizes
# with masked tails: the runs whose sizes are not multiples of 16.
if command -v compute-sanitizer > /dev/null; then
  for run in "${runs[@]}"; do
    read -r kernel config sizes <<< "$run"
    has_tail=0
    for value in $(tr ',' '\n' <<< "$sizes" | cut -d= -f2); do
      (( value % 16 != 0 )) && has_tail=1
    done
    (( has_tail )) || continue
    # memcheck runs the kernel some hundred times slower: tails of at most
    # 2^30 multiply-adds (the odd 1111 x 2222 x 3333 matmul runs unchecked).
    work=1
    for value in $(tr ',' '\n' <<< "$sizes" | grep -E '^(M|N|K|n_rows|n_cols|n_elements)=' | cut -d= -f2); do
      work=$((work * value))
    done
    (( work <= 1 << 30 )) || continue
    dtype=$(variant "$config")
    log="$logs/memcheck-$kernel${dtype// /_}.log"
    if compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tilec" run \
        --kernel "$kernel" --config "$config" --sizes "$sizes" --reps 0 > "$log" 2>&1; then
      record "memcheck $kernel $sizes$dtype" ok "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$log")"
    else
      record "memcheck $kernel $sizes$dtype" FAIL "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$log" || tail -1 "$log")"
    fi
  done
else
  record "memcheck" FAIL "compute-sanitizer not found"
fi

# The sparse convolution's kernels (shared-memory rings, scans, atomics'
# broadcasts), a matmul whose blocks come by TMA (mbarrier rings) and the
# conv GPU suite's map build under racecheck.
if command -v compute-sanitizer > /dev/null; then
  for run in "${runs[@]}"; do
    read -r kernel config sizes <<< "$run"
    [[ ($kernel =~ ^(sparse_conv_|voxel_|radix_|block_offsets|mask_|offset_pair|column_sums) && $sizes == N=777*) ||
       $config == *num_stages=3* && $sizes == M=96,* ]] || continue
    dtype=$(variant "$config")
    log="$logs/racecheck-$kernel${dtype// /_}.log"
    if compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/tilec" run \
        --kernel "$kernel" --config "$config" --sizes "$sizes" --reps 0 > "$log" 2>&1; then
      record "racecheck $kernel $sizes$dtype" ok "$(grep -o 'RACECHECK SUMMARY: [0-9]* hazard[s]*' "$log" | head -1)"
    else
      record "racecheck $kernel $sizes$dtype" FAIL "$(grep -o 'RACECHECK SUMMARY.*' "$log" | head -1 || tail -1 "$log")"
    fi
  done
  log="$logs/memcheck-SparseConvGpuTest.log"
  if compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/SparseConvGpuTest" \
      --gtest_filter='*MapsMatch*:*Duplicates*:*EmptyInput*' > "$log" 2>&1; then
    record "memcheck SparseConvGpuTest (maps, errors, empty)" ok "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$log")"
  else
    record "memcheck SparseConvGpuTest (maps, errors, empty)" FAIL "$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$log" || tail -1 "$log")"
  fi
fi

for suite in $suites; do
  [[ -n ${suite_pids[$suite]:-} ]] || continue
  wait "${suite_pids[$suite]}"
  record_suite "$suite" $?
done

# The SASS of the f16/bf16/tf32 matmul the runtime compiles on this device
# (sm_90a): wgmma (HGMMA), TMA (UTMALDG; tf32: cp.async, LDGSTS), no local
# memory (LDL/STL).
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [[ -x $cuobjdump ]]; then
  for dtype in f16 bf16 f32; do
    dir=$out/sass-$dtype
    log="$logs/sass-$dtype.log"
    config="BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=$dtype,num_warps=4,num_stages=4"
    [[ $dtype == f32 ]] && config="BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,num_warps=4,num_stages=4"
    "$bin/tilec" compile --no-cache --kernel matmul --target sm_90a \
      --config "$config" \
      --arg-values M=4096,N=4096,K=4096 --dump-dir "$dir" > "$log" 2>&1
    "$cuobjdump" -sass "$dir/matmul.cubin" > "$dir/matmul.sass" 2>> "$log"
    hgmma=$(grep -c HGMMA "$dir/matmul.sass")
    ldgsts=$(grep -c LDGSTS "$dir/matmul.sass")
    utmaldg=$(grep -c UTMALDG "$dir/matmul.sass")
    locals=$(grep -cE '\b(LDL|STL)\b' "$dir/matmul.sass")
    detail="$hgmma HGMMA, $utmaldg UTMALDG, $ldgsts LDGSTS, $locals LDL/STL"
    # f16/bf16 blocks come by TMA (UTMALDG), tf32's by cp.async (LDGSTS).
    copies=$utmaldg
    [[ $dtype == f32 ]] && copies=$ldgsts
    if (( hgmma > 0 && copies > 0 && locals == 0 )); then
      record "sass matmul $dtype sm_90a" ok "$detail"
    else
      record "sass matmul $dtype sm_90a" FAIL "$detail"
    fi
    rm -f "$dir/matmul.cubin" "$dir/matmul.llir" "$dir/matmul.ttir"
  done
else
  record "sass" FAIL "cuobjdump not found"
fi

if "$bin/tilec-rt-launchbench" --json "$out/launchbench.json" > "$logs/launchbench.log" 2>&1; then
  record "launch overhead" ok "$(grep -E 'tilec::rt::launch' "$logs/launchbench.log" | sed 's/  */ /g')"
else
  record "launch overhead" FAIL "$(tail -1 "$logs/launchbench.log")"
fi

# The docs' GPU transcripts, run here as check-docs runs the others (from
# the repository only: a bundle has no docs). DOCS_UPDATE=1 writes what the
# tools printed into the pages (docs/ then travels back with $OUT's copy).
if [[ -f $here/check-docs.py && -d $here/../docs ]]; then
  update=()
  [[ ${DOCS_UPDATE:-0} == 1 ]] && update=(--update)
  if python3 "$here/check-docs.py" --gpu "${update[@]}" --build-dir "$(dirname "$bin")" \
    > "$logs/docs-gpu.log" 2>&1; then
    record "docs: GPU transcripts" ok "$(tail -1 "$logs/docs-gpu.log")"
  else
    record "docs: GPU transcripts" FAIL "$(tail -1 "$logs/docs-gpu.log")"
  fi
  [[ ${DOCS_UPDATE:-0} == 1 ]] && mkdir -p "$out/docs" && cp "$here"/../docs/*.md "$out/docs/"
fi

{
  echo "{\"failures\": $failures, \"gpu\": \"$(tr -d '\n"' < "$out/gpu.txt")\", \"rows\": ["
  for i in "${!table[@]}"; do
    printf '  "%s"%s\n' "$(sed 's/"/\\"/g' <<< "${table[$i]}")" "$([[ $i -lt $((${#table[@]} - 1)) ]] && echo ,)"
  done
  echo "]}"
} > "$out/summary.json"
# Few files travel back from a remote run: the logs go as one archive.
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
echo "== $(cat "$out/gpu.txt")"
printf '%s\n' "${table[@]}"
echo "== $failures failure(s); logs and JSON in $out"
[[ $failures -eq 0 ]]
