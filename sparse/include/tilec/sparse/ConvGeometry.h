//===- ConvGeometry.h - A convolution's kernel, stride, padding, dilation -*-
// C++ -*-===//
//
// Part of tilec_sparse. One owner for how a sparse convolution that changes
// a cloud's resolution indexes (spconv's SparseConv3d, PyTorch's Conv3d):
// the output grid, the kernel's offsets and their order, and the strided
// maps' candidates (docs/sparse-conv.md, "Strided and inverse
// convolutions"). The float64 oracle (check/reference) and the GPU maps
// read the same object.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_CONVGEOMETRY_H
#define TILEC_SPARSE_CONVGEOMETRY_H

#include "tilec/contract/Status.h"

#include <array>
#include <cstdint>
#include <string>
#include <tuple>

namespace tilec::sparse {

/// A convolution's geometry per axis (x, y, z). Output voxel o reads, at
/// kernel offset k of the axis, the input voxel o * stride - padding +
/// k * dilation: a dense convolution's indexing (spconv's, PyTorch's).
struct ConvGeometry {
  std::array<int, 3> kernel{3, 3, 3}, stride{1, 1, 1}, padding{0, 0, 0},
      dilation{1, 1, 1};

  /// Kx * Ky * Kz; offset (kx, ky, kz) is v = (kx * Ky + ky) * Kz + kz, the
  /// order of the weights' [Co, Kx, Ky, Kz, Ci].
  int64_t offsets() const;
  /// floor((in + 2 padding - dilation (kernel - 1) - 1) / stride) + 1 per
  /// axis; an error where an axis has no output or a value is out of range
  /// (kernel, stride, dilation >= 1, padding >= 0).
  Result<std::array<int64_t, 3>>
  outputShape(const std::array<int64_t, 3> &inputShape) const;
  /// The outputs that can read one input voxel along `axis`: (kernel - 1)
  /// * dilation // stride + 1 (strided_candidates' CA).
  int64_t candidatesAlong(int axis) const;
  /// Their product: the candidates a voxel has (strided_candidates' C).
  int64_t candidatesPerVoxel() const;
  /// "k3x3x3,s2x2x2,p1x1x1,d1x1x1": for keys and messages.
  std::string str() const;

  friend bool operator<(const ConvGeometry &a, const ConvGeometry &b) {
    return std::tie(a.kernel, a.stride, a.padding, a.dilation) <
           std::tie(b.kernel, b.stride, b.padding, b.dilation);
  }
  friend bool operator==(const ConvGeometry &a, const ConvGeometry &b) {
    return !(a < b) && !(b < a);
  }
};

/// A submanifold convolution's window per axis (x, y, z): an odd kernel
/// extent from 1 to 7 and a dilation of at least 1. Offset (kx, ky, kz) of
/// the voxel at p reads the voxel at p + ((kx, ky, kz) - kernel / 2) *
/// dilation; the offsets run in the weights' [Co, Kx, Ky, Kz, Ci] order. The
/// window is symmetric: voxel j is at offset v of voxel i exactly when i is
/// at offset V - 1 - v of j (what the maps' half lookups and the input
/// gradient use).
struct Window {
  std::array<int, 3> kernel{3, 3, 3}, dilation{1, 1, 1};

  /// kernel^3 with one dilation on every axis.
  static Window cube(int kernel, int dilation = 1) {
    return Window{{kernel, kernel, kernel}, {dilation, dilation, dilation}};
  }
  bool isCube() const;
  /// The same window with dilation 1 along the axes of extent 1, where a
  /// dilation changes nothing: what maps and prepared calls are keyed by,
  /// so that equal windows share them.
  Window normalized() const;
  /// Kx * Ky * Kz.
  int64_t offsets() const;
  /// An InvalidArgument error naming the axis out of range, prefixed with
  /// `function`.
  Status check(const std::string &function) const;
  /// "k3x3x3,d1x1x1": for keys and messages.
  std::string str() const;

  friend bool operator<(const Window &a, const Window &b) {
    return std::tie(a.kernel, a.dilation) < std::tie(b.kernel, b.dilation);
  }
  friend bool operator==(const Window &a, const Window &b) {
    return a.kernel == b.kernel && a.dilation == b.dilation;
  }
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_CONVGEOMETRY_H
