#!/usr/bin/env bash
# Regenerates docs/pipeline.md from the tools' real output.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${TILEC_BUILD_DIR:-build}/bin
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
"$bin/tilec" compile --no-cache --kernel vector_add --config BLOCK=1024 \
  --dump-dir "$dump" --timings > "$dump/summary.txt"
# A dense 4096^3 call, specialized as Triton's JIT specializes its reference
# kernel (sizes and row strides divisible by 16, unit inner strides).
sizes=M=4096,N=4096,K=4096
"$bin/tilec" compile --no-cache --kernel matmul \
  --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 --arg-values "$sizes" \
  --dump-dir "$dump" --timings > "$dump/matmul-summary.txt"
# Every declared matmul config for that call: the compile phase of a tuner.
"$bin/tilec" compile --kernel matmul --all-configs --no-cache \
  --arg-values "$sizes" > "$dump/all-configs.txt"
# Kernels past a thread block's limits: the ttgir stage refuses them.
for input in block-2p20 transpose-256; do
  "$bin/tilec" compile --no-cache --no-cubin \
    "test/lit/Tools/Inputs/$input.ttir" > "$dump/$input.txt" 2>&1 || true
done
cores=$(nproc)
{
cat <<'EOF'
# The pipeline, stage by stage

`tilec compile` takes one kernel through five stages and can write each
stage's artifact into a dump directory:

| stage | file | what it holds | made by |
| --- | --- | --- | --- |
| ttir | `.ttir` | the `tile` dialect, canonical | kernel builder (`kernels/*.cpp`) or a `.ttir` file; `canonicalize`, `cse`, `symbol-dce` |
| ttgir | `.ttgir` | `tile` ops on tensors with `tilegpu` layouts, shared memory as `!tilegpu.memdesc` buffers | `convert-tile-to-tilegpu`, `tilegpu-coalesce`, `tilegpu-remove-layout-conversions`, `canonicalize`, `cse`, `tilegpu-pipeline` (num_stages; [engine.md](engine.md)), `canonicalize`, `cse`, `tilegpu-allocate-shared-memory`, `tilegpu-insert-barriers` ([shared memory](shared-memory.md)), `tilegpu-check-block-resources` ([block limits](#block-limits)) |
| llir | `.llir` | optimized LLVM IR (libdevice linked when used) | `convert-tilegpu-to-llvm`, translation to LLVM IR, tilec's kernel pass pipeline for `nvptx64-nvidia-cuda` (not LLVM's O3; see [target.md](target.md#the-llvm-pass-pipeline)) |
| ptx | `.ptx` | PTX 9.0 for the target (sm_90 by default) | LLVM's NVPTX backend in process, fp-contraction to fma |
| cubin | `.cubin` | ELF for the target | `ptxas -v` (path from `TILEC_PTXAS` or the toolkit); the `-v` report is parsed into the json |

Each stage's artifact is cached by hash (see [cache.md](cache.md));
`--no-cache` below shows the cold times.

In the library, `compileKernel` (`lib/Pipeline/Pipeline.cpp`) is a table with
one row per stage, in the manner of Triton's backend, which lists its stages
as functions from source to source. Each row names the artifact the stage
reads, the artifact it makes, the function that makes it, and how a cached
entry's meta is read back. One driver runs every row. It derives the stage's
key from the options the stage runs with ([cache.md](cache.md#keys)), looks
the key up, runs the stage on a miss and stores its artifact, times the
stage, and names it in its errors. After a hit, a later stage that misses
parses the cached text of the stage before it. Every pass can be run alone with
`tilec-opt` (e.g. `build/bin/tilec-opt kernels/vector_add.ttir -convert-tile-to-tilegpu`).

```
build/bin/tilec compile --kernel vector_add --config BLOCK=1024 --dump-dir out --timings
build/bin/tilec compile kernels/matmul.ttir --dump-dir out      # a hand-written .ttir
build/bin/tilec compile --list                                  # kernels and their configs
```

Shared memory serves layout conversions, `reshape`/`trans`, cross-warp
reductions and `local_alloc` buffers (the rings of a software pipeline, the
operands of a wgmma). `tilegpu-allocate-shared-memory` gives each its offset
in one dynamic buffer and records the high-water mark in `tilegpu.shared`
(the `shared_bytes` of the json, passed at launch); `tilegpu-insert-barriers`
puts barriers only where threads share bytes
([shared-memory.md](shared-memory.md)).

Below is `vector_add` (`kernels/vector_add.cpp`, BLOCK=1024, 4 warps) at each
stage, as the command above wrote it.

## Timings

EOF
echo "Measured when this page was generated, on a machine with $cores cores."
echo
echo '```'
echo '$ build/bin/tilec compile --no-cache --kernel vector_add --config BLOCK=1024 --dump-dir out --timings'
cat "$dump/summary.txt"
echo '$ build/bin/tilec compile --no-cache --kernel matmul --config BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16 --arg-values M=4096,N=4096,K=4096 --dump-dir out --timings'
cat "$dump/matmul-summary.txt"
echo '```'
cat <<'EOF'

The matmul's f16 `dot` runs on tensor cores (16 `mma.sync.m16n8k16` per K
step here). Its operands reach the mma fragments through shared memory: each
thread stores 16-byte vectors into an XOR-swizzled tile, and `ldmatrix`
reads four 8x8 fragments at a time (`.trans` for B, whose K is the strided
dimension), see
[passes-layout.md](passes-layout.md#tensor-core-operands-swizzled-shared-memory-and-ldmatrix).
This config leaves `num_stages` at 1: with more, `tilegpu-pipeline` turns
the loads into cp.async rings, and for sm_90a (`--target sm_90a`, what the
runtime compiles for on an H100/H200) the dot runs on wgmma
([engine.md](engine.md)). f32 dots run on CUDA cores, or with
`ALLOW_TF32=1` on mma.sync tf32 (here) or tf32 wgmma (sm_90a). The matmul's PTX, one K step's operand stores and loads and the first
`mma.sync`:

```
EOF
grep -E "st\.shared\.v4|ldmatrix|mma\.sync" "$dump/matmul.ptx" | sed -n '1,13p'
echo '```'
cat <<'EOF'

## Compile time

A tuner compiles every config of a kernel. `tilec compile --all-configs`
compiles them one after another in one process and prints each stage's time
per config and the medians; the no-ptxas column is ttir + ttgir + llir + ptx
of each config, the cubin column is ptxas. Every config of the matmul,
specialized like Triton's reference kernel (M, N, K and the strides divisible
by 16):

EOF
echo '```'
echo "\$ build/bin/tilec compile --kernel matmul --all-configs --no-cache --arg-values $sizes"
cat "$dump/all-configs.txt"
echo '```'
cat <<'EOF'

For comparison, Triton 3.6 takes 185 ms for the same four stages of one
config (ttir 4, ttgir 35, llir 114, ptx 32 ms, median of its 8 configs,
measured on the GPU machine's host; anchors.md), and 80 ms more for ptxas.

## Block limits

A block tensor has at most 2^20 elements, which the `tile` dialect checks
when a kernel is verified ([tile-dialect.md](tile-dialect.md#limits)). What
one thread block can be given is checked at the end of the ttgir stage, once
tensors have layouts: `tilegpu-check-block-resources`
(`lib/Conversion/TileGPUToLLVM/BlockResources.cpp`) fails at the first op
past a limit (shared memory: at the module's total), and
`convert-tilegpu-to-llvm` checks the same before it writes any code.

- Registers. A thread holds the registers of its tensors' layouts, elements
  per thread times ceil(bits / 32) (a pointer takes two), and the lowering
  writes every op once per register. One tensor may take at most 4096
  registers per thread (`kMaxTensorRegistersPerThread`). The hardware's
  numbers, 255 per thread and 65536 per SM, bound no single tensor:
  `vector_add` with BLOCK=65536 on 4 warps has pointer tensors of 1024
  registers per thread and compiles, in 4.5 s, to 255 registers and 4360 B of
  spill stores, since no tensor is live whole. What grows is the code.
  Measured before the check, to PTX: `vector_add` took 10 s at 4096
  registers per thread (BLOCK=65536 on one warp; then 192 s in ptxas), 222 s
  at 16384 (BLOCK=2^20, 4 warps), and more than 500 s and 1.2 GB at 65536
  (BLOCK=2^20, one warp). 4096 admits the first and refuses the others.
- Shared memory. The dynamic buffer (`tilegpu.shared`, the high-water mark
  of `tilegpu-allocate-shared-memory`, see
  [shared-memory.md](shared-memory.md)) may not exceed what a block of
  `tilegpu.target` can opt in to: 64 KiB on
  sm_75; 163 KiB on sm_80, sm_87; 99 KiB on sm_86, sm_89, sm_120, sm_121;
  227 KiB on sm_90, sm_100, sm_103, sm_110. Another target is an error. A
  conversion whose threads already hold their elements renames registers
  and needs none. The error sits at the allocation that reaches the total.

EOF
echo '```'
for input in block-2p20 transpose-256; do
  echo "\$ build/bin/tilec compile --no-cache --no-cubin test/lit/Tools/Inputs/$input.ttir"
  cat "$dump/$input.txt"
done
echo '```'
cat <<'EOF'

## ttir

One program instance computes 1024 elements: a range, pointer arithmetic, two
masked loads, an add, a masked store. No threads yet.

```mlir
EOF
cat "$dump/vector_add.ttir"
echo '```'
cat <<'EOF'

## ttgir

Every tensor now has a layout. `convert-tile-to-tilegpu` first gave them the
default (one element per thread); `tilegpu-coalesce` saw that the pointers are
contiguous and 16-byte aligned (`tile.divisibility = 16`), and chose
`sizePerThread = [4]`: each thread moves 4 consecutive f32 (16 bytes) per
access, a warp 512 contiguous bytes.

```mlir
EOF
cat "$dump/vector_add.ttgir"
echo '```'
cat <<'EOF'

## llir

`convert-tilegpu-to-llvm` turns each tensor into the registers one thread
holds (here 8: two groups of 4), with coordinates from the layout's
(register, lane, warp) map; loads and stores become predicated PTX accesses.
After tilec's LLVM pass pipeline (excerpt):

```llvm
EOF
sed -n '/^define/,/^}/p' "$dump/vector_add.llir" | sed -n '1,40p'
echo '  ...'
echo '```'
cat <<'EOF'

The mask here is `offs < n_elements`, and `n_elements` carries no divisibility
hint, so the mask may change between any two elements and each access moves one
f32 (`ld.global.b32`). With `tile.divisibility = 16` on `n_elements` the same
kernel gets `ld.global.v4.b32` (see `test/lit/Conversion/tilegpu-to-llvm.mlir`).

## ptx (excerpt)

```
EOF
grep -E "\.version|\.target|\.entry|\.maxntid|\.minnctapersm|ld.global|st.global|add.f32" "$dump/vector_add.ptx" | sed -n '1,14p'
echo '```'
cat <<'EOF'

## json

```json
EOF
cat "$dump/vector_add.json"
echo '```'
} > docs/pipeline.md
