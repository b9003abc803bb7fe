#!/bin/sh
# tilec-interpret PROGRAM [ARGS...]: runs PROGRAM with the interpreter device
# as its CUDA driver (docs/interpreter.md): libcuda.so.1 from
# lib/interpreter-device beside this script's bin/ goes first on
# LD_LIBRARY_PATH, so that tilec's runtime in PROGRAM sees one device,
# "tilec interpreter", and runs every kernel's ttir on the CPU.
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
  echo "usage: tilec-interpret PROGRAM [ARGS...]" >&2
  exit 2
fi
LD_LIBRARY_PATH="$here/../lib/interpreter-device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "$@"
