#!/usr/bin/env bash
# Data-parallel training with tilec.nn layers (issue 35; docs/pytorch.md,
# "Several GPUs"), scripts/bench/ddp_train.py in three steps, the stage and
# autotune caches shared by every process (they are safe for concurrent
# processes):
#   1. one process on cuda:0 trains the global batch of two clouds for
#      STEPS SGD steps; it also fills the caches, so that the ranks' first
#      steps tune nothing;
#   2. torchrun: two ranks, each on its own GPU (NCCL, SyncBatchNorm), one
#      cloud each, in DistributedDataParallel;
#   3. compare: the mean of the ranks' losses against the one process's,
#      the weights identical on both ranks after every step, each rank's
#      first step and steps/s.
# SAME_DEVICE=1 puts both ranks on cuda:0 (gloo, no BatchNorm): what one GPU
# can check of it. Writes the JSON and logs to ${OUT:-ddp-out}; exits
# non-zero when a step fails.
#
# From the repository with dist/gpu-bundle.tar.xz (scripts/gpu-bundle.sh),
# or inside an unpacked bundle: ./ddp-check.sh.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/ddp-out}
mkdir -p "$out/logs"
source "$here/bundle-paths.sh"
lib=${TILEC_LIBRARY:-$bundle/lib/libtilec_c.so}
export PYTHONPATH=$package${PYTHONPATH:+:$PYTHONPATH}
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d /tmp/tilec-ddp.XXXXXX)
export TILEC_CACHE_DIR=$work/cache TILEC_AUTOTUNE_CACHE=$work/autotune.json
steps=${STEPS:-200}
if [[ ${SAME_DEVICE:-0} == 1 ]]; then
  mode=(--same-device --norm none)
else
  mode=(--norm sync)
  gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
  if ((gpus < 2)); then
    echo "ddp-check: $gpus GPU(s) here; two are needed (SAME_DEVICE=1 runs both ranks on one)"
    exit 2
  fi
fi
failures=0

echo "== 1. one process, the global batch"
python3 "$bench/ddp_train.py" --role single --lib "$lib" --steps "$steps" \
  --result "$out/single.json" "${mode[@]}" > "$out/logs/single.log" 2>&1 ||
  { tail -5 "$out/logs/single.log"; failures=$((failures + 1)); }

echo "== 2. torchrun, two ranks"
python3 -m torch.distributed.run --standalone --nproc_per_node 2 \
  "$bench/ddp_train.py" --role rank --lib "$lib" --steps "$steps" \
  --result "$out/ddp.json" "${mode[@]}" > "$out/logs/ddp.log" 2>&1 ||
  { tail -20 "$out/logs/ddp.log"; failures=$((failures + 1)); }

echo "== 3. compare"
python3 "$bench/ddp_train.py" --role compare --result "$out/ddp.json" \
  --single "$out/single.json" --ranks 2 "${mode[@]}" 2>&1 |
  tee "$out/logs/compare.log"
((PIPESTATUS[0] == 0)) || failures=$((failures + 1))

echo "ddp-check: $failures failed step(s); results in $out"
((failures == 0))
