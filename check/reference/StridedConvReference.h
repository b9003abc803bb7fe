//===- StridedConvReference.h - Strided and inverse convolution -*- C++ -*-===//
//
// The float64 oracle of the sparse convolutions that change a cloud's
// resolution, as spconv defines them (SparseConv3d going down,
// SparseInverseConv3d coming back up with the same indice_key): the output
// voxels, the input->output map of each kernel offset, the forward and the
// gradients. Written from the definition (a dense convolution restricted to
// active voxels), independently of any GPU kernel, so that the GPU's can be
// checked against it element by element.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CHECK_REFERENCE_STRIDEDCONVREFERENCE_H
#define TILEC_CHECK_REFERENCE_STRIDEDCONVREFERENCE_H

#include "SparseConvReference.h"

#include "tilec/contract/Status.h"
#include "tilec/sparse/ConvGeometry.h"
#include "tilec/sparse/VoxelScenes.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace tilec::harness {

using sparse::ConvGeometry;

/// A convolution's voxel map: the output voxels and, per kernel offset,
/// which input voxel each output voxel reads there.
struct HostConvPairs {
  /// (batch, x, y, z) per output voxel, ascending by (batch, x, y, z): an
  /// order fixed by the input, the same in every process.
  std::vector<int32_t> outCoords;
  /// pairs[v]: (input voxel, output voxel) of kernel offset v, ascending by
  /// output voxel (at most one input per output and offset).
  std::vector<std::vector<std::pair<int32_t, int32_t>>> pairs;
  int64_t outputs() const { return static_cast<int64_t>(outCoords.size()) / 4; }
};

/// The strided convolution of `cloud` on a grid of `inputShape` per axis:
/// an output voxel exists where at least one kernel offset reads an input
/// voxel, inside geometry.outputShape(inputShape), batch by batch.
/// Errors: a voxel outside the grid or a batch < 0, duplicate voxels, a
/// geometry with no output grid.
Result<HostConvPairs>
buildHostStridedPairs(const sparse::VoxelCloud &cloud,
                      const std::array<int64_t, 3> &inputShape,
                      const ConvGeometry &geometry);

/// y [outputs, co] = bias + sum over v and the pairs (i, o) of v of
/// x[i, :] . w[co, v, :]; x [inputs, ci], w [co, V, ci], bias [co] or
/// empty.
std::vector<double> hostPairForward(const HostConvPairs &pairs,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co);

/// The inverse convolution over the same map (spconv's SparseInverseConv3d
/// with the strided layer's indice_key): from the strided layer's outputs
/// back to its inputs. y [inputs, co] = bias + sum over v and (i, o) of
/// x[o, :] . w[co, v, :]; x [outputs, ci].
std::vector<double> hostPairInverse(const HostConvPairs &pairs, int64_t inputs,
                                    const std::vector<double> &x,
                                    const std::vector<double> &w,
                                    const std::vector<double> &bias, int64_t ci,
                                    int64_t co);

/// The gradients of hostPairForward for dy [outputs, co]: dx [inputs, ci],
/// dw [co, V, ci], db [co].
HostConvGradients hostPairBackward(const HostConvPairs &pairs, int64_t inputs,
                                   const std::vector<double> &x,
                                   const std::vector<double> &w,
                                   const std::vector<double> &dy, int64_t ci,
                                   int64_t co);

/// What strided_candidates writes for `cloud` (batches [0, batches), grid
/// `inputShape`), computed on the host as its file comment says: per input
/// voxel, `perVoxel` candidates (keys: the output cell, or `cells` for none;
/// values: input * V + offset, or -1).
struct HostStridedCandidates {
  std::vector<int32_t> keys, values;
  int64_t perVoxel = 0, cells = 0;
  std::array<int64_t, 3> outputShape{};
};
Result<HostStridedCandidates>
hostStridedCandidates(const sparse::VoxelCloud &cloud,
                      const std::array<int64_t, 3> &inputShape,
                      const ConvGeometry &geometry, int64_t batches);

/// The two maps of `pairs` over `inputs` input voxels and V offsets: nb
/// [outputs, V] (output o reads input nb[o * V + v] at offset v, or -1) and
/// nbi [inputs, V] (input i is read at offset v by output nbi[i * V + v],
/// or -1).
struct HostPairMaps {
  std::vector<int32_t> nb, nbi;
};
HostPairMaps hostPairMaps(const HostConvPairs &pairs, int64_t inputs);

/// The strided geometry, grid and batch count a reference's call names
/// (KX .. KZ, SX .., PX .., DX .., IX .. IZ, B defaulting to 1).
struct StridedCallShape {
  ConvGeometry geometry;
  std::array<int64_t, 3> inputShape{};
  int64_t batches = 1;
};
Result<StridedCallShape> stridedCallShape(const ReferenceRequest &request);

} // namespace tilec::harness

#endif // TILEC_CHECK_REFERENCE_STRIDEDCONVREFERENCE_H
