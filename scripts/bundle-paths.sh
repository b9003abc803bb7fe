# Sourced by the GPU scripts that run the Python package (pytorch-check.sh,
# ddp-check.sh): where the GPU bundle's library, the bench scripts and the
# package are, from inside an unpacked bundle or from the repository with
# dist/gpu-bundle.tar.xz (scripts/gpu-bundle.sh), unpacked into
# /tmp/gpu-bundle. Reads $here, the sourcing script's folder; sets bundle,
# bench and package; exits the script when the bundle cannot be unpacked.
if [[ -f $here/lib/libtilec_c.so ]]; then
  bundle=$here bench=$here/share/tilec/bench package=$here/python
else
  tar -C /tmp -xJf "$here/../dist/gpu-bundle.tar.xz" || exit 1
  bundle=/tmp/gpu-bundle bench=$here/bench package=$here/../python
fi
