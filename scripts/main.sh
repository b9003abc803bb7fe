#!/usr/bin/env bash
# The main job: install, build, then take the matmul kernel through the
# pipeline and print what each stage made.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_BUILD_DIR:-build}
scripts/install-deps.sh
scripts/build.sh
echo "== ttir: kernels/matmul.ttir, canonicalized"
"$build_dir/bin/tilec-opt" kernels/matmul.ttir -canonicalize -cse
