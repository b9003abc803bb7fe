#!/usr/bin/env bash
# Builds dist/tilec-<version>-py3-none-manylinux_2_<N>_x86_64.whl: the Python
# package (python/tilec) with libtilec_c.so and the tilec tool linked
# statically against LLVM/MLIR and libstdc++ (build-static/, -DTILEC_STATIC:
# they need glibc 2.<N> and, to run kernels, the CUDA driver; nothing else),
# tagged with the newest glibc symbol version they use. ptxas is the
# wheel's dependency nvidia-cuda-nvcc where no CUDA toolkit is installed.
#
#   scripts/build-wheel.sh            # then: pip install dist/tilec-*.whl
#   scripts/build-wheel.sh --test     # also installs it into a fresh venv
#                                     # with PyPI's torch and runs the
#                                     # package's tests there
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_STATIC_BUILD_DIR:-build-static}
python=${PYTHON:-python3}
scripts/install-deps.sh
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# The checkout's paths relative (scripts/build.sh says why).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
cmake -S . -B "$build_dir" -G Ninja -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DTILEC_STATIC=ON "${launcher[@]}" > /dev/null
ninja -C "$build_dir" tilec tilec_c

# The wheel's own tools, outside the system Python's packages.
tools=$(mktemp -d /tmp/tilec-wheel-tools.XXXXXX)
stage=$(mktemp -d /tmp/tilec-wheel.XXXXXX)
trap 'rm -rf "$tools" "$stage"' EXIT
"$python" -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet "setuptools>=61" "wheel>=0.40"

cp -r python/. "$stage/"
rm -rf "$stage/tilec/__pycache__"
cp "$build_dir/lib/libtilec_c.so" "$stage/tilec/"
mkdir -p "$stage/tilec/bin"
cp "$build_dir/bin/tilec" "$stage/tilec/bin/"
"$tools/venv/bin/pip" wheel --quiet --no-deps --no-build-isolation \
  -w "$stage/dist" "$stage"

# py3-none-any -> py3-none-manylinux_2_<N>_x86_64: the newest GLIBC_2.<N>
# symbol version the two binaries import.
glibc_minor=$(objdump -T "$stage/tilec/libtilec_c.so" "$stage/tilec/bin/tilec" |
  grep -oE 'GLIBC_2\.[0-9]+' | sed 's/GLIBC_2\.//' | sort -n | tail -1)
"$tools/venv/bin/python" -m wheel tags --remove \
  --platform-tag "manylinux_2_${glibc_minor}_x86_64" "$stage"/dist/tilec-*.whl > /dev/null
mkdir -p dist
rm -f dist/tilec-*.whl
cp "$stage"/dist/tilec-*.whl dist/
wheel=$(ls dist/tilec-*.whl)
echo "$wheel ($(du -h "$wheel" | cut -f1))"

[[ ${1:-} == --test ]] || exit 0
# The wheel alone: a fresh venv, the tests copied away from the checkout
# (nothing of it on the path), the library the installed one.
venv=$tools/test-venv
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet "$wheel"
# PyTorch from PyPI (its CUDA build; the tests run on the CPU), so that the
# torch layer's no-GPU tests run too (about 5 GB in the venv, removed on
# exit); TILEC_WHEEL_TORCH=0 leaves it out, and those tests skip. The
# version is the oldest the package supports, the one the GPU machines run:
# torch.compile's tracing differs between versions (a SparseTensor copy that
# torch 2.15 traced broke torch 2.11's fullgraph); TILEC_WHEEL_TORCH=SPEC
# names another (e.g. torch for PyPI's newest).
torch_spec=${TILEC_WHEEL_TORCH:-torch==2.11.0}
if [[ $torch_spec != 0 ]]; then
  "$venv/bin/pip" install --quiet --no-cache-dir "$torch_spec" numpy
  "$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
fi
cp test/python/test_tilec.py "$tools/"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# The bench scripts' self-tests run the checkout's scripts (never its
# package): TILEC_CHECKOUT says where they are.
checkout=$(pwd)
# The summary when the tests pass; every failure's traceback when one does
# not (CI shows this output only).
(cd "$tools" &&
  { TILEC_LIBRARY="$site/tilec/libtilec_c.so" PYTHONDONTWRITEBYTECODE=1 \
      TILEC_CHECKOUT="$checkout" \
      "$venv/bin/python" -m unittest -v test_tilec > unittest.log 2>&1 ||
      { grep -E '(FAIL|ERROR)$' unittest.log || true; sed -n '/^======/,$p' unittest.log; false; }; } &&
  tail -5 unittest.log &&
  "$venv/bin/tilec" --version &&
  # Without a CUDA toolkit, the ptxas of the nvidia-cuda-nvcc dependency.
  env -u TILEC_PTXAS PATH=/usr/bin:/bin "$venv/bin/python" -c '
import pathlib, tilec._library as library
library.TOOLKIT_PTXAS = pathlib.Path("/nonexistent/ptxas")
ptxas = library.use_ptxas()
assert ptxas and "nvidia/cu13/bin/ptxas" in str(ptxas), ptxas
print("without a toolkit: ptxas", ptxas)' &&
  "$venv/bin/tilec" compile --kernel vector_add --config BLOCK=1024 \
    --arg-values n_elements=4096 --no-cache)
