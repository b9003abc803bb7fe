#!/usr/bin/env bash
# check-install.sh <source dir> <build dir> [cmake arguments for the consumers]
#
# Installs the build into a fresh prefix and builds and runs the consumer
# projects (consumer/, compiler-consumer/) against that prefix alone: copied
# out of the source tree, configured with CMAKE_PREFIX_PATH=<prefix>, and
# checked not to name the source or build tree anywhere in their build. The
# consumer of the libraries without LLVM is configured with LLVM's and MLIR's
# packages made unfindable, and its programs (but the C API's, whose library
# holds the JIT) must not load LLVM or MLIR. Exits non-zero on any failure;
# the work directory is kept then.
set -euo pipefail
src=$(realpath "$1")
build=$(realpath "$2")
shift 2
# Outside both trees, so that a path into either cannot hide in the prefix's.
work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/tilec-install.XXXXXX")")
prefix=$work/prefix
case $work in
  "$src"/* | "$build"/*)
    echo "check-install: set TMPDIR outside $src and $build" >&2
    exit 1
    ;;
esac

# Files naming a path inside either tree. The trailing slash keeps a sibling
# directory (tilec-2/ next to tilec/) from matching.
names_a_tree() {
  grep -rlF -e "$src/" -e "$build/" "$@"
}

fail() {
  echo "check-install: $*" >&2
  echo "check-install: work directory kept: $work" >&2
  exit 1
}
trap 'fail "failed at line $LINENO"' ERR

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
if leaks=$(names_a_tree "$prefix/lib/cmake" "$prefix/include"); then
  fail "the installed package names the source or build tree: $leaks"
fi

consume() {
  local project=$1
  shift
  local dir=$work/$project-build
  local log=$work/$project
  cmake -S "$work/$project" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "$@" >"$log.configure.log" ||
    { cat "$log.configure.log"; fail "configuring $project failed"; }
  grep -qxF "tilec_DIR:PATH=$prefix/lib/cmake/tilec" "$dir/CMakeCache.txt" ||
    fail "$project found another tilec: $(grep '^tilec_DIR' "$dir/CMakeCache.txt")"
  cmake --build "$dir" >"$log.build.log" ||
    { cat "$log.build.log"; fail "building $project failed"; }
  # The build's commands and the headers its compiles read (depfiles, Ninja's
  # log of them): everything came from the prefix, nothing from the trees
  # tilec was built in.
  if leaks=$(names_a_tree "$dir"); then
    fail "$project's build uses the source or build tree: $leaks"
  fi
  ctest --test-dir "$dir" --verbose >"$log.test.log" ||
    { cat "$log.test.log"; fail "$project's tests failed"; }
  # What the programs printed (ctest prefixes it with the test's number).
  grep -E '^[0-9]+: ' "$log.test.log" |
    grep -vE '^[0-9]+: (Test command|Working Directory|Test timeout|$)' || true
}

cp -r "$src/test/install/consumer" "$src/test/install/compiler-consumer" "$work/"

consume consumer "$@" --no-warn-unused-cli \
  -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON
for program in runtime_consumer bundle_consumer sparse_consumer write_bundle; do
  loaded=$(ldd "$work/consumer-build/$program")
  if grep -E 'lib(LLVM|MLIR)' <<<"$loaded"; then
    fail "$program loads LLVM"
  fi
done

consume compiler-consumer "$@"

# The C API without CMake: pkg-config's flags build and link a C program,
# which loads the library by its versioned soname.
soname=$(readelf -d "$prefix/lib/libtilec_c.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libtilec_c.so.* ]] || fail "libtilec_c.so has no versioned soname ($soname)"
cat > "$work/c_consumer.c" <<'PROGRAM'
#include <stdio.h>
#include <tilec/tilec.h>
int main(void) {
  printf("tilec_version() = %s\n", tilec_version());
  return 0;
}
PROGRAM
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs tilec)
cc -o "$work/c_consumer" "$work/c_consumer.c" $flags
if leaks=$(grep -lF -e "$src/" -e "$build/" <<<"$flags"); then
  fail "pkg-config's flags name the source or build tree: $flags"
fi
readelf -d "$work/c_consumer" | grep -qF "[$soname]" ||
  fail "the C program does not load $soname"
LD_LIBRARY_PATH=$prefix/lib "$work/c_consumer"

rm -rf "$work"
echo "check-install: the installed package works"
