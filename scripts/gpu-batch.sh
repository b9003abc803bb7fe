#!/usr/bin/env bash
# The sparse convolution's GPU work in batches that each fit one 10-minute
# call on the GPU machine, from the repository with dist/gpu-bundle.tar.xz
# (scripts/gpu-bundle.sh), spconv-Triton's wheel in .whl/ and, for `train`,
# FlexGEMM's source in peers/FlexGEMM (scripts/fetch-flexgemm-peer.sh):
#
#   scripts/gpu-batch.sh network        # SparseConvGpuTest, KernelGpuTest and
#       StridedConvGpuTest beside the SpUNet network's check (both peers
#       against float64), then the network's times (tilec, spconv-Triton);
#       spconv-Triton tunes each layer shape for longer than one call
#       lasts, so its tuning carries over: PEER_CACHE=FILE.tgz (carried)
#       seeds Triton's cache with an earlier call's autotune results, and
#       every run leaves its own in $OUT/peer-cache.tgz, cut or not;
#       NETWORK_TIME_ONLY=1 runs the times alone (the whole call for
#       spconv-Triton's tuning)
#   scripts/gpu-batch.sh train [ROWS]   # where a training step's host time
#       goes (spconv_step_profile.py, tilec), then `tilec bench spconv
#       --train` rows with FlexGEMM (built in the call) and spconv-Triton;
#       ROWS as --rows takes them (default: the rows the table lacks)
#   scripts/gpu-batch.sh maps BASELINE  # scripts/maps-check.sh against
#       another build's libtilec_c.so
#   scripts/gpu-batch.sh train-check    # spconv_train_check.py: the
#       gradients against float64, gradcheck, bits across 10 processes,
#       the autoencoder's loss curve against float64 and spconv-Triton's,
#       torch.compile against eager (CHECK_SECTIONS=a,b: those sections, in
#       that order); spconv-Triton's curve tunes for minutes: PEER_CACHE and
#       $OUT/peer-cache.tgz as for network
#   scripts/gpu-batch.sh profile        # SparseConvGpuTest, then where a
#       stream's frame, a map build's and a training step's time goes
#       (spconv_frame_profile.py, spconv_maps_profile.py with its timeline,
#       spconv_step_profile.py with its host split)
#   scripts/gpu-batch.sh frames         # `tilec bench spconv --frames` (the
#       streams with FlexGEMM, built in the call, and spconv-Triton; the map
#       table; the bundle stream) with the time the batch has left
#   scripts/gpu-batch.sh profile frames # several of network, profile and
#       frames in one call, in order (a fresh GPU machine costs minutes)
#
# Each step has a time limit so that the batch ends within BATCH_S seconds
# (default 580); caches are fresh ones under /tmp. Logs and JSON go to
# ${OUT:-gpu-batch-out}; the status of each step is printed last, with the
# tail of its log. Exits non-zero when a step fails.
set -uo pipefail
usage() { sed -n '2,37p' "$0"; exit 2; }
case ${1:-} in
  train | train-check) ;;
  maps) [[ -n ${2:-} ]] || { echo "gpu-batch.sh maps: name the baseline libtilec_c.so" >&2; exit 2; } ;;
  network | profile | frames)
    for mode in "$@"; do
      [[ $mode == network || $mode == profile || $mode == frames ]] || usage
    done ;;
  *) usage ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-batch-out}
batch_s=${BATCH_S:-580}
start=$(date +%s)
mkdir -p "$out/logs"
source "$here/bundle-paths.sh"
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
export PYTHONPATH=$package${PYTHONPATH:+:$PYTHONPATH}
# A step cut at its limit still leaves what it printed in its log.
export PYTHONUNBUFFERED=1
source "$here/peer-wheels.sh"
use_peer_wheels /tmp/gpu-batch-site || exit 1
lib=$bundle/lib/libtilec_c.so
status=()
failures=0
left() { echo $((batch_s - ($(date +%s) - start))); }
record() { # step rc log
  status+=("$(printf '%-28s rc %-3s at %4d s  %s' "$1" "$2" $(($(date +%s) - start)) "$3")")
  [[ $2 == 0 ]] || failures=$((failures + 1))
}
fresh_caches() { # name
  export TILEC_CACHE_DIR=/tmp/gpu-batch-$1/tilec TRITON_CACHE_DIR=/tmp/gpu-batch-$1/triton
  export TILEC_AUTOTUNE_CACHE=$TILEC_CACHE_DIR/autotune_cache.json
  mkdir -p "$TILEC_CACHE_DIR" "$TRITON_CACHE_DIR"
}
record_suite() { # binary rc: its tests passed and the first failed ones
  record "$1" "$2" "$(grep -c '^\[       OK \]' "$out/logs/$1.log") passed; $(grep -E '^\[  FAILED  \]' "$out/logs/$1.log" | head -3 | tr '\n' ' ')"
}
suite() { # binary: its own caches, in the background
  (
    fresh_caches "$1"
    cd "$TILEC_CACHE_DIR" || exit 1
    timeout $(($(left) - 150)) "$bundle/bin/$1" --gtest_output=json:"$out/$1.json" \
      > "$out/logs/$1.log" 2>&1
  ) &
}
network() {
  local suites=(SparseConvGpuTest KernelGpuTest StridedConvGpuTest) pids=() i
  if [[ ${NETWORK_TIME_ONLY:-0} == 1 ]]; then
    fresh_caches network
    seed_peer_cache
    network_time
    return
  fi
  for i in "${suites[@]}"; do
    suite "$i"
    pids+=($!)
  done
  fresh_caches network
  seed_peer_cache
  timeout $(($(left) - 200)) python3 "$bench/spconv_network.py" --lib "$lib" --out "$out/network-check" \
    --sections check --quick > "$out/logs/network-check.log" 2>&1
  record network-check $? logs/network-check.log
  for i in "${!suites[@]}"; do
    wait "${pids[$i]}"
    record_suite "${suites[$i]}" $?
  done
  network_time
}
# Alone on the GPU for the times; Triton's cache keeps spconv-Triton's
# tuning of the check's shapes, not those of the timed scenes.
network_time() {
  timeout "$(left)" python3 "$bench/spconv_network.py" --lib "$lib" --out "$out/network-time" \
    --sections time --quick > "$out/logs/network-time.log" 2>&1
  record network-time $? logs/network-time.log
  save_peer_cache
}
seed_peer_cache() {
  [[ -n ${PEER_CACHE:-} ]] || return 0
  tar -C "$TRITON_CACHE_DIR" -xzf "$PEER_CACHE"
  record peer-cache-seed $? "$(find "$TRITON_CACHE_DIR" -name '*.autotune.json' | wc -l) autotune results from $PEER_CACHE"
}
# spconv-Triton's autotune results (Triton's *.autotune.json, not the
# compiled kernels: a chosen config compiles again in seconds, where its
# tuning takes minutes) for the next call's PEER_CACHE.
save_peer_cache() {
  (cd "$TRITON_CACHE_DIR" && find . -name '*.autotune.json' -print0 |
    tar --null -czf "$out/peer-cache.tgz" -T -)
  record peer-cache-save $? "$(tar -tzf "$out/peer-cache.tgz" | wc -l) autotune results in peer-cache.tgz"
}
train() {
  local rows=${1:-shell128/256/f16;uniform500k@512/128/f16;shell128/128/bf16;shell128/128/f32}
  fresh_caches train
  timeout 90 python3 "$bench/spconv_step_profile.py" --lib "$lib" --out "$out/step-profile" \
    --rows street/64,shell128/128 --steps 20 > "$out/logs/step-profile.log" 2>&1
  record step-profile $? logs/step-profile.log
  timeout "$(left)" python3 "$bench/spconv_train.py" --lib "$lib" --out "$out/train" --rows "$rows" \
    --sections rows --flexgemm "$here/../peers/FlexGEMM" --budget-s $(($(left) - 25)) \
    --row-reserve-s 5 > "$out/logs/train.log" 2>&1
  record train-rows $? logs/train.log
}
profile() {
  suite SparseConvGpuTest
  wait $!
  record_suite SparseConvGpuTest $?
  fresh_caches profile
  timeout 200 python3 "$bench/spconv_frame_profile.py" --lib "$lib" --out "$out/frame-profile" \
    --ways package,capi,package-tensor,package-forward > "$out/logs/frame-profile.log" 2>&1
  record frame-profile $? logs/frame-profile.log
  timeout 120 python3 "$bench/spconv_maps_profile.py" --lib "$lib" --out "$out/maps-profile" \
    --row-orders key --fresh-sizes > "$out/logs/maps-profile.log" 2>&1
  record maps-profile $? logs/maps-profile.log
  timeout "$(left)" python3 "$bench/spconv_step_profile.py" --lib "$lib" --out "$out/step-profile" \
    --rows street/64,shell64/32,shell128/128 --steps 20 > "$out/logs/step-profile.log" 2>&1
  record step-profile $? logs/step-profile.log
}
train_check() {
  fresh_caches train-check
  seed_peer_cache
  (cd "$out" && TILEC_LIBRARY=$lib timeout $(($(left) - 10)) python3 "$bench/spconv_train_check.py" \
    ${CHECK_SECTIONS:+--sections "$CHECK_SECTIONS"} --json "$out/train-check.json" \
    > "$out/logs/train-check.log" 2>&1)
  record train-check $? logs/train-check.log
  save_peer_cache
}
maps() {
  OUT=$out/maps timeout "$(left)" bash "$here/maps-check.sh" "$1" > "$out/logs/maps.log" 2>&1
  record maps-check $? logs/maps.log
}
frames() {
  fresh_caches frames
  # The bench's budget leaves out a FlexGEMM build (about a minute) and may
  # run past it by a section's tail: both within the step's limit.
  timeout "$(left)" python3 "$bench/spconv_frames.py" --lib "$lib" --tilec "$bundle/bin/tilec" \
    --out "$out/frames" --configs 8x128,1x64 --frames 10 --sections streams,maps,bundle \
    --map-reps 5 --budget-s $(($(left) - 120)) --flexgemm "$here/../peers/FlexGEMM" \
    > "$out/logs/frames.log" 2>&1
  record frames $? logs/frames.log
}
case ${1:-} in
  train) train "${2:-}" ;;
  train-check) train_check ;;
  maps) maps "${2:-}" ;;
  *) for mode in "$@"; do "$mode"; done ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for line in "${status[@]}"; do
  echo "$line"
done
for log in "$out"/logs/network-*.log "$out"/logs/frame-profile.log "$out"/logs/step-profile.log "$out"/logs/maps-profile.log \
  "$out"/logs/train.log "$out"/logs/train-check.log "$out"/logs/maps.log "$out"/logs/frames.log; do
  [[ -f $log ]] && { echo "== ${log#"$out"/}"; tail -25 "$log"; }
done
[[ $failures -eq 0 ]]
