//===- TensorMap.h - TMA tensor maps of 2-D tiles ---------------*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
// A tensor map (CUtensorMap, 128 bytes) describes a 2-D row-major array in
// global memory and the box of it one Hopper TMA copy
// (cp.async.bulk.tensor) moves into shared memory, with the shared-memory
// swizzle the copy applies. A kernel reads it from a 64-byte aligned
// parameter. The rules below are the driver's (cuTensorMapEncodeTiled),
// checked here first so that a call that breaks one is told which, with
// the numbers, instead of CUDA_ERROR_INVALID_VALUE.
//
// Elements outside the array (a box that overhangs the last rows or
// columns) arrive as zeros, so a kernel's masked tails need no predicate.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_TENSORMAP_H
#define TILEC_RUNTIME_TENSORMAP_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/DevicePtr.h"
#include "tilec/runtime/Driver.h"

#include <cuda.h>

#include <cstdint>

namespace tilec::rt {

enum class TmaElement { F16, BF16, F32, I32 };
/// 2 or 4.
int64_t tmaElementBytes(TmaElement element);

/// The shared-memory swizzle of the copied box: the same 16-byte chunk
/// permutation within 32, 64 or 128 bytes as a wgmma matrix descriptor's
/// swizzle mode (a 128-byte swizzled destination is 1024-byte aligned).
enum class TmaSwizzle { None, Bytes32, Bytes64, Bytes128 };

/// A row-major array of `rows` x `cols` elements, rows `rowStrideBytes`
/// apart from `base`, copied in boxes of `boxRows` x `boxCols`.
struct TiledArray2D {
  DevicePtr base;
  TmaElement element = TmaElement::F16;
  uint64_t rows = 0, cols = 0;
  uint64_t rowStrideBytes = 0;
  uint32_t boxRows = 0, boxCols = 0;
  TmaSwizzle swizzle = TmaSwizzle::Bytes128;
};

/// The first rule of cuTensorMapEncodeTiled that `array` breaks, said with
/// its numbers: base and row stride multiples of 16 bytes, the stride at
/// least a row and below 2^40, dimensions from 1 to 2^32, box sides from 1
/// to 256, a box row a multiple of 16 bytes and within the swizzle's span.
Status checkTiledArray2D(const TiledArray2D &array);

/// The tensor map of `array` (checked first): L2 promotion of 128 bytes,
/// zeros outside the array, element strides of 1.
Result<CUtensorMap> encodeTiledArray2D(const Driver &driver,
                                       const TiledArray2D &array);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_TENSORMAP_H
