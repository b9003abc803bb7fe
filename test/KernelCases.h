//===- KernelCases.h - kernel test cases, GPU and interpreter -*- C++ -*-===//
//
// For each kernel in kernels/: several configs, sizes that do and do not
// divide the blocks, every dtype, and for the matmuls odd shapes, padded and
// odd row strides and transposed operands. KernelGpuTest compiles and runs
// each on the GPU; KernelInterpretedTest runs each on the interpreter (no
// GPU), both against the same float64 references.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_KERNELCASES_H
#define TILEC_TEST_KERNELCASES_H

#include "tilec/Harness/KernelHarness.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>
#include <vector>

namespace tilec::test {

struct KernelCase {
  std::string kernel;
  std::string config;
  bool tailSizes;
  /// Sizes and strides over the default or tail sizes ("stride_bk=1,...").
  std::string sizes = "";
  /// On a target with TMA (sm_90a) the kernel must copy blocks with it: its
  /// compile json lists tensor maps, which no other target's does.
  bool copiesWithTma = false;
};

// Readable case descriptions in test logs instead of raw bytes.
inline void PrintTo(const KernelCase &kernelCase, std::ostream *os) {
  *os << kernelCase.kernel << " " << kernelCase.config
      << (kernelCase.tailSizes ? " (tail sizes)" : " (even sizes)") << " "
      << kernelCase.sizes;
}

inline std::string caseName(const testing::TestParamInfo<KernelCase> &info) {
  std::string name = info.param.kernel + "_" + info.param.config +
                     (info.param.tailSizes ? "_tail" : "_even") +
                     (info.param.sizes.empty() ? "" : "_" + info.param.sizes);
  for (char &c : name)
    if (!isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

inline const std::vector<KernelCase> &kernelCases() {
  static const std::vector<KernelCase> cases = {
      KernelCase{"vector_add", "BLOCK=1024", false},
      KernelCase{"vector_add", "BLOCK=1024", true},
      KernelCase{"vector_add", "BLOCK=256,num_warps=2", true},
      KernelCase{"softmax", "BLOCK_N=1024", false},
      KernelCase{"softmax", "BLOCK_N=1024", true},
      KernelCase{"softmax", "BLOCK_N=128,num_warps=1", true, "n_cols=100"},
      // Rows padded apart: the gaps must stay poisoned.
      KernelCase{"softmax", "BLOCK_N=1024", true,
                 "input_row_stride=1003,output_row_stride=1017"},
      // Software pipelining (num_stages > 1) and, on sm_90a, wgmma: two
      // warpgroups along M ([8, 1]) with K of 1, 2 and 5 tiles of 64 (fewer
      // tiles than stages; a last step reading slot 0, whose bytes the
      // epilogue's scratch reuses), two along N ([4, 2]: B's strips start
      // inside a swizzle block), tails, tf32 from rings, and odd strides
      // (the registers-prefetch path). The f16/bf16 cases with rows
      // 16-byte aligned copy by TMA on sm_90a.
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=f16,num_warps=8,"
                 "num_stages=4",
                 false, "M=256,N=256,K=64", true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=f16,num_warps=8,"
                 "num_stages=4",
                 false, "M=256,N=256,K=128", true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=bf16,num_warps=8,"
                 "num_stages=4",
                 false, "M=384,N=256,K=320", true},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16,num_warps=8,"
                 "num_stages=3",
                 true, "", true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,DTYPE=f16,num_warps=8,"
                 "num_stages=3",
                 true, "", true},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "num_stages=3",
                 true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f16,num_stages=4",
                 false, "M=1111,N=2222,K=3333"},
      // f16/bf16 blocks copied by TMA (rows 16-byte aligned): masked
      // tails in M, N and K (zeros from the tensor maps), 128-, 64- and
      // 32-byte swizzles (64-, 32- and 16-wide K steps), B in 64-column
      // boxes, fewer K steps than stages.
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=256,BLOCK_K=64,DTYPE=f16,num_warps=8,"
                 "num_stages=4",
                 false, "M=301,N=520,K=200", true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=bf16,num_warps=4,"
                 "num_stages=3",
                 false, "M=1000,N=1000,K=1000", true},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=128,BLOCK_K=16,DTYPE=f16,num_warps=4,"
                 "num_stages=4",
                 false, "M=96,N=136,K=40", true},
      // tf32 on wgmma from rings: a row-major B computed transposed,
      // D^T = B^T A^T with B^T's fragments in registers (one warpgroup;
      // two along N; 64-wide K steps, two swizzle blocks, with a K tail),
      // and a K-contiguous B (both operands from shared memory).
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=4,num_stages=4",
                 false, "M=256,N=256,K=96"},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=8,num_stages=3",
                 true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=64,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=4,num_stages=3",
                 false, "M=384,N=192,K=200"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=4,num_stages=3",
                 false, "M=256,N=256,K=256,stride_bk=1,stride_bn=256"},
      // tf32 with a row-major B and masked tails in every dimension: odd
      // M, N and K. Where B's rows are only known 4-byte aligned (N = 257,
      // 260: no %16 fact) it keeps the transposing copies; where they copy
      // in 16 bytes (N = 528, N's tail inside a tile) it is computed
      // transposed. Two warpgroups along D^T's
      // rows with 64x256 instructions along M (256x128x32 on 8 warps),
      // one warpgroup with two 64-row repeats (128x128x32 on 4 warps), a
      // 64-row D^T (128x64x32), two warpgroups over 64 columns of N
      // (128x256x32 on 8 warps); and a 128x32 tile, too narrow for D^T,
      // on the transposing copies.
      KernelCase{"matmul",
                 "BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=8,num_stages=3",
                 false, "M=301,N=257,K=199"},
      KernelCase{"matmul",
                 "BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=8,num_stages=3",
                 false, "M=555,N=260,K=203"},
      KernelCase{"matmul",
                 "BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=8,num_stages=3",
                 false, "M=1024,N=512,K=1024"},
      KernelCase{"matmul",
                 "BLOCK_M=256,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=8,num_stages=3",
                 false, "M=301,N=528,K=199"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 false, "M=555,N=528,K=203"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 false, "M=301,N=528,K=199"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 false, "M=301,N=257,K=199"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 true},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 false, "M=555,N=260,K=203"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=8,num_stages=3",
                 false, "M=301,N=257,K=199"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=32,BLOCK_K=32,GROUP_M=8,DTYPE=f32,"
                 "ALLOW_TF32=1,num_warps=4,num_stages=4",
                 false, "M=301,N=257,K=199"},
      KernelCase{"gather_matmul",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16,num_stages=3",
                 true},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", false},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", true},
      KernelCase{"matmul", "BLOCK_M=32,BLOCK_N=64,BLOCK_K=16,DTYPE=f32", true},
      KernelCase{"matmul", "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16",
                 false},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16", true},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,DTYPE=f32,num_warps=8",
                 false},
      // The sparse convolution's map kernels against the host oracle:
      // the table (out-of-range voxels refused), lookups of a 3^3 window
      // and of a 5 x 1 x 3 one dilated along x, the radix sort's counts
      // and stable moves
      // (several programs, the first pass), the prefix sums, the
      // transposed map, the row blocks' offsets, and the groups' unions
      // and each row's covering group (its window ending inside the
      // groups at 40001 rows, a narrower window too).
      KernelCase{"voxel_hash_insert", "num_warps=4", false},
      KernelCase{"voxel_hash_insert", "num_warps=4", true},
      KernelCase{"voxel_neighbours", "num_warps=4", false},
      // The tails' 5 x 1 x 3 window: 15 offsets, 7 looked up and the
      // centre, with programs of 64 entries (8 voxels; the 3^3 window's
      // 14 entries a voxel start programs inside a voxel, 256 entries a
      // program, and the 1 x 3 x 3 one's 5 too).
      KernelCase{"voxel_neighbours", "LOOKUPS=64,num_warps=4", true},
      KernelCase{"voxel_neighbours", "num_warps=4", false,
                 "KX=1,KY=3,KZ=3,DX=1,DY=2,DZ=1"},
      KernelCase{"neighbour_keys", "num_warps=4", false},
      KernelCase{"neighbour_keys", "VP=128,BLOCK=16,num_warps=4", true},
      // A non-cubic window's rows, and a strided convolution's (2^3).
      KernelCase{"neighbour_keys", "num_warps=4", false, "KX=3,KY=1,KZ=3"},
      KernelCase{"neighbour_keys", "num_warps=4", false, "KX=2,KY=2,KZ=2"},
      KernelCase{"block_offsets", "num_warps=4", false, "V=8"},
      // A strided convolution's candidates (3^3 / 2, and 2 x 3 x 1 of
      // strides (2, 1, 3) with padding and a dilation), its outputs'
      // counts and its map from the sorted candidates.
      KernelCase{"strided_candidates", "num_warps=4", false},
      KernelCase{"strided_candidates", "CP=8,BLOCK=128,num_warps=4", true},
      KernelCase{"output_voxels", "num_warps=8", false},
      KernelCase{"output_voxels", "num_warps=8", true},
      KernelCase{"output_voxels", "FILL=1,num_warps=8", false},
      KernelCase{"output_voxels", "FILL=1,BLOCK=256,num_warps=8", true},
      KernelCase{"radix_histogram", "num_warps=4", false},
      KernelCase{"radix_histogram", "num_warps=4", true},
      KernelCase{"radix_scatter", "num_warps=4", false},
      KernelCase{"radix_scatter", "FIRST=1,num_warps=4", true},
      // Wider digits, as the maps sort with: 128 rows of counts.
      KernelCase{"radix_histogram",
                 "DIGIT_BITS=7,BLOCK=128,CHUNKS=1,num_warps=4", true},
      KernelCase{"radix_scatter", "DIGIT_BITS=7,BLOCK=128,CHUNKS=1,num_warps=4",
                 false},
      KernelCase{"radix_scatter",
                 "DIGIT_BITS=6,BLOCK=256,CHUNKS=2,FIRST=1,num_warps=4", true},
      KernelCase{"exclusive_scan", "num_warps=8", false},
      KernelCase{"exclusive_scan", "num_warps=8", true},
      KernelCase{"neighbour_transpose", "num_warps=4", false},
      KernelCase{"neighbour_transpose", "VP=128,BLOCK=32,num_warps=4", true},
      // The lists at their stride (the entries past a block's count left
      // poisoned), and with CHECK_COUNTS=1 the counts the same launch
      // writes.
      KernelCase{"block_offsets", "num_warps=4", false},
      KernelCase{"block_offsets", "num_warps=4", false, "CHECK_COUNTS=1"},
      KernelCase{"block_offsets", "VP=128,ROW_TILE=16,num_warps=4", true},
      KernelCase{"block_offsets", "VP=128,ROW_TILE=16,num_warps=4", true,
                 "CHECK_COUNTS=1"},
      KernelCase{"block_offsets", "BLOCK_M=128,num_warps=4", false},
      KernelCase{"block_offsets", "BLOCK_M=128,num_warps=4", false,
                 "CHECK_COUNTS=1"},
      // A live count below the grid's rows (a recorded build of a larger
      // bucket): a block past it reads V + 1, the block cut by it lists the
      // live rows' offsets only.
      KernelCase{"block_offsets", "num_warps=4", false,
                 "LIVE=2000,CHECK_COUNTS=1"},
      KernelCase{"block_offsets", "BLOCK_M=128,num_warps=4", false,
                 "LIVE=2000"},
      KernelCase{"mask_unions", "num_warps=2", false},
      KernelCase{"mask_unions", "num_warps=2", true},
      KernelCase{"mask_cover", "num_warps=4", false},
      KernelCase{"mask_cover", "num_warps=4", true},
      KernelCase{"mask_cover", "WINDOW=3,TILE=16,num_warps=4", true},
      // The sparse convolution over host-built maps (shell voxels):
      // channels that divide the blocks and not (3 -> 17), wgmma with one
      // and two warpgroups, bf16, tf32 and f32, bias, a 5^3 kernel, a
      // dilation, rows of X and Y padded apart.
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=bf16,HAS_BIAS=1,"
                 "num_warps=8,num_stages=3",
                 false, "CI=128,CO=192"},
      // Two blocks an SM (.minnctapersm 2: registers capped at 128).
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,num_warps=8,num_stages=3,"
                 "min_blocks_per_sm=2",
                 false, "N=300,CI=128,CO=128"},
      // Each warpgroup skips the offsets its 64 rows do not have.
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=bf16,HAS_BIAS=1,"
                 "SKIP_ROW_GROUPS=1,num_warps=8,num_stages=3",
                 false, "CI=128,CO=192"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,SKIP_ROW_GROUPS=1,"
                 "num_warps=4,num_stages=3",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=4,num_stages=4",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "HAS_BIAS=1,num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,DTYPE=f32,num_warps=4,"
                 "num_stages=2",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,HAS_BIAS=1,num_warps=4,"
                 "num_stages=3",
                 false, "N=2000,CI=32,CO=48,V=125"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16,num_warps=4,"
                 "num_stages=4",
                 false, "N=5000,V=27,DIL=2"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3",
                 false, "stride_x=80,stride_y=100"},
      // The weights transposed without the mirror (a strided
      // convolution's input gradient), rows of X counted apart.
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,TRANSPOSE_W=2,num_warps=4,"
                 "num_stages=3",
                 true, "NI=1000"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=bf16,TRANSPOSE_W=2,"
                 "num_warps=8,num_stages=3",
                 false, "CI=128,CO=192"},
      // A strided convolution's call: 8 offsets (a 2^3 kernel), X of
      // other rows than Y, on a random map of that shape.
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,HAS_BIAS=1,num_warps=4,"
                 "num_stages=3",
                 false, "N=2000,NI=5000,V=8,CI=32,CO=48"},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3",
                 false, "V=8"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,num_warps=4,num_stages=3",
                 false, "N=1,CI=16,CO=16"},
      // Row blocks in halves (SPLIT_K = 2): the halves' partials meet in
      // the second to arrive; masked channels (3 -> 17), two column tiles
      // with bias on two warpgroups, tf32, padded rows, and one voxel
      // (its second half has no offset: its partials are zeros).
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,SPLIT_K=2,num_warps=4,"
                 "num_stages=3",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=128,HAS_BIAS=1,SPLIT_K=2,"
                 "num_warps=8,num_stages=3",
                 false, "CI=128,CO=192"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "SPLIT_K=2,num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16,SPLIT_K=2,"
                 "num_warps=4,num_stages=3",
                 false, "stride_x=80,stride_y=100"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,SPLIT_K=2,num_warps=4,"
                 "num_stages=3",
                 false, "N=1,CI=16,CO=16"},
      // The input gradient (the forward with the weights mirrored and
      // transposed): wgmma, masked channels, bf16 on two warpgroups,
      // tf32, halves, a 5^3 kernel with a dilation.
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,TRANSPOSE_W=1,num_warps=4,"
                 "num_stages=3",
                 false},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,TRANSPOSE_W=1,num_warps=4,"
                 "num_stages=3",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=64,DTYPE=bf16,TRANSPOSE_W=1,"
                 "num_warps=8,num_stages=3",
                 false, "CI=128,CO=192"},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "TRANSPOSE_W=1,SPLIT_K=2,num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,DTYPE=f32,TRANSPOSE_W=1,"
                 "num_warps=4,num_stages=2",
                 true},
      KernelCase{"sparse_conv_fwd",
                 "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16,TRANSPOSE_W=1,"
                 "num_warps=4,num_stages=4",
                 false, "N=2000,CI=32,CO=48,V=125,DIL=2"},
      // The weight gradient's pieces: the offsets' pair lists, each
      // part's sums (dY read column-wise, masked channels, bf16, f32 and
      // tf32, a 5^3 kernel), the parts added in order, dY's column sums.
      KernelCase{"offset_pair_counts", "num_warps=4", false},
      KernelCase{"offset_pair_counts", "BLOCK=128,num_warps=4", true},
      KernelCase{"offset_pairs", "num_warps=4", false},
      KernelCase{"offset_pairs", "BLOCK=128,num_warps=4", true},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=32,BLOCK_N=32,BLOCK_K=32,num_warps=4,num_stages=3",
                 true},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=bf16,num_warps=8,"
                 "num_stages=3",
                 false, "CI=128,CO=192"},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1,"
                 "num_warps=4,num_stages=3",
                 false},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=32,BLOCK_N=32,BLOCK_K=16,DTYPE=f32,num_warps=4,"
                 "num_stages=2",
                 true},
      KernelCase{"sparse_conv_wgrad",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=64,num_warps=4,num_stages=3",
                 false, "N=2000,CI=32,CO=48,V=125,stride_x=40,stride_dy=64"},
      KernelCase{"split_sum", "num_warps=4", false},
      KernelCase{"split_sum", "DTYPE=bf16,num_warps=4", true},
      KernelCase{"column_sums", "num_warps=4", false},
      KernelCase{"column_sums", "DTYPE=f32,BLOCK_R=16,BLOCK_C=32,num_warps=4",
                 true},
      KernelCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16",
                 false},
      KernelCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16",
                 true},
      KernelCase{"gather_matmul", "BLOCK_M=32,BLOCK_N=32,BLOCK_K=16,DTYPE=f32",
                 true},
      KernelCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16",
                 true},
      // General strides. Odd shapes whose row strides are not multiples
      // of 16 (refused before the strides were arguments).
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", false,
                 "M=1000,N=1000,K=1000"},
      KernelCase{"matmul", "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16",
                 false, "M=1000,N=1000,K=1000"},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32", true,
                 "K=211"},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1",
                 false, "M=1000,N=1000,K=1000"},
      // tf32 on tensor cores (tf32 tolerance; wgmma on sm_90a from 64
      // rows, mma.sync m16n8k8 below and elsewhere): the 128x128 tile on
      // a large aligned problem (its float64 reference stays a few
      // seconds) and at sizes odd in every dimension, tails, and a
      // K-contiguous B.
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1",
                 false, "M=2048,N=2048,K=1024"},
      KernelCase{"matmul",
                 "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1",
                 false, "M=1111,N=2222,K=3333"},
      KernelCase{"matmul",
                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1",
                 true},
      KernelCase{"matmul",
                 "BLOCK_M=32,BLOCK_N=64,BLOCK_K=16,DTYPE=f32,ALLOW_TF32=1",
                 true, "stride_bk=1,stride_bn=208"},
      // Padded rows: A's and C's row strides larger than the row.
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", true,
                 "stride_am=221,stride_cm=183"},
      // A transposed B (K-contiguous) and a transposed A (M-contiguous),
      // aligned and odd, every dtype.
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", false,
                 "stride_bk=1,stride_bn=512"},
      KernelCase{"matmul", "BLOCK_M=128,BLOCK_N=128,BLOCK_K=32,DTYPE=f16",
                 false, "stride_bk=1,stride_bn=512"},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", true,
                 "stride_bk=1,stride_bn=208"},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=bf16", false,
                 "stride_bk=1,stride_bn=512"},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", false,
                 "M=1000,N=1000,K=1000,stride_bk=1,stride_bn=1000"},
      KernelCase{"matmul", "BLOCK_M=32,BLOCK_N=64,BLOCK_K=16,DTYPE=f32", true,
                 "stride_bk=1,stride_bn=208"},
      KernelCase{"matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16", true,
                 "stride_am=1,stride_ak=203"},
      KernelCase{"gather_matmul", "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f16",
                 true, "stride_bk=1,stride_bn=208,stride_am=221"}};
  return cases;
}

/// The harness's request for `kernelCase` (seed 1): its config parsed, its
/// sizes over the kernel's default or tail sizes.
inline Result<harness::RunRequest>
requestOf(const KernelCase &kernelCase, const KernelDescription &description) {
  auto config = description.parseConfig(kernelCase.config);
  if (!config)
    return config.status();
  harness::RunRequest request =
      harness::requestFor(description, kernelCase.tailSizes);
  request.call.types = config->types;
  request.call.params = config->params;
  request.config = *config;
  auto sizes = parseNamedIntegers(kernelCase.sizes);
  if (!sizes)
    return sizes.status();
  for (const auto &[name, value] : *sizes)
    request.call.sizes[name] = value;
  return request;
}

} // namespace tilec::test

#endif // TILEC_TEST_KERNELCASES_H
