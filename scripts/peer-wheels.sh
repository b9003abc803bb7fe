# Sourced by the GPU scripts that run spconv-Triton next to tilec
# (bench-spconv.sh, pytorch-check.sh, gpu-batch.sh). use_peer_wheels SITE:
# where spconv_triton does not import and its wheel is in $PEER_WHEELS
# (default: .whl/ of the checkout, $here/../.whl, the sourcing script's
# folder being $here), installs the wheel into SITE and puts SITE first on
# PYTHONPATH; non-zero when that install fails.
use_peer_wheels() {
  local wheels=${PEER_WHEELS:-$here/../.whl}
  if python3 -c 'import spconv_triton' 2> /dev/null ||
    ! compgen -G "$wheels/spconv_triton-*.whl" > /dev/null; then
    return 0
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target "$1" "$wheels"/spconv_triton-*.whl || return 1
  export PYTHONPATH=$1${PYTHONPATH:+:$PYTHONPATH}
}
