#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test: lit, then ctest (unit
# tests; GPU tests skip with a reason where there is no GPU), then builds the
# wheel and tests it installed in a fresh venv, and runs the fuzzers for a
# bounded time. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEC_BUILD_DIR:-build}
scripts/install-deps.sh
scripts/build.sh
/usr/lib/llvm-22/bin/lit -sv "$build_dir/test/lit"
# redis-server was installed above: the shared-cache tests must run, not skip.
TILEC_REQUIRE_REDIS=1 ctest --test-dir "$build_dir" --output-on-failure -LE lit -j "$(nproc)"
# The docs' checked console blocks, run and compared with the page.
python3 scripts/check-docs.py --build-dir "$build_dir"
# The wheel (static library and tool), installed alone in a fresh venv.
scripts/build-wheel.sh --test
# Each parser's fuzzer for a bounded time (15 s each; docs/hardening.md).
scripts/fuzz.sh 15
