#!/usr/bin/env bash
# tilec's PyTorch package (python/tilec, docs/pytorch.md) on a GPU machine,
# in three steps with fresh tilec and Triton caches:
#   1. scripts/bench/pytorch_net.py: networks of tilec.nn.SubMConv3d (shell
#      and LiDAR-like street, f16 and bf16) checked against float64 and
#      against spconv-Triton loaded with the same state_dict, timed next to
#      it in the same process, and the error paths;
#   2. tilec pack: the winners the networks tuned, into one bundle;
#   3. pytorch_net.py again, in a fresh process, from that bundle alone
#      (tilec.Runtime(bundle=..., allow_jit=False), the caches pointed at
#      nothing): every output must have step 1's bits, and a layer shape
#      the bundle lacks must be refused.
# Prints the tables; writes pytorch-net.json, pytorch-net-bundle.json and
# the logs to ${OUT:-pytorch-out}; exits non-zero when a step fails.
#
# From the repository: scripts/pytorch-check.sh, with dist/gpu-bundle.tar.xz
# (scripts/gpu-bundle.sh) for libtilec_c.so and bin/tilec, and spconv-Triton
# installed or its wheel in .whl/ (PEER_WHEELS=dir to look elsewhere); or
# inside an unpacked bundle: ./pytorch-check.sh. Extra arguments go to both
# runs of pytorch_net.py (e.g. --networks shell128/f16 --quick).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/pytorch-out}
mkdir -p "$out/logs"
source "$here/bundle-paths.sh"
export TILEC_LIBRARY=${TILEC_LIBRARY:-$bundle/lib/libtilec_c.so}
export PYTHONPATH=$package${PYTHONPATH:+:$PYTHONPATH}
export TILEC_PTXAS=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
work=$(mktemp -d /tmp/tilec-pytorch.XXXXXX)
# Fresh caches, so that the first calls are cold and the bundle holds
# exactly what these networks tuned; Triton's also keeps spconv-Triton's
# autotune results.
export TILEC_CACHE_DIR=$work/cache TILEC_AUTOTUNE_CACHE=$work/autotune.json
export TRITON_CACHE_DIR=$work/triton
source "$here/peer-wheels.sh"
use_peer_wheels "$work/site" || exit 1
failures=0

echo "== 1. networks with the JIT, next to spconv-Triton"
python3 "$bench/pytorch_net.py" --out "$out" "$@" 2>&1 | tee "$out/logs/pytorch-net.log"
((PIPESTATUS[0] == 0)) || failures=$((failures + 1))

echo "== 2. tilec pack"
if "$bundle/bin/tilec" pack -o "$work/net.bundle" > "$out/logs/pack.log" 2>&1; then
  tail -1 "$out/logs/pack.log"
  ls -l "$work/net.bundle" | awk '{print "bundle: " $5 " bytes"}'
else
  echo "tilec pack failed:"; tail -5 "$out/logs/pack.log"
  failures=$((failures + 1))
fi

echo "== 3. the same networks from the bundle alone"
TILEC_CACHE_DIR=$work/none TILEC_AUTOTUNE_CACHE=$work/none/autotune.json \
  python3 "$bench/pytorch_net.py" --out "$out" "$@" --name pytorch-net-bundle \
  --bundle "$work/net.bundle" --expect "$out/pytorch-net.json" --no-peer \
  --quick 2>&1 | tee "$out/logs/pytorch-net-bundle.log"
((PIPESTATUS[0] == 0)) || failures=$((failures + 1))

echo "pytorch-check: $failures failed step(s); results in $out"
((failures == 0))
