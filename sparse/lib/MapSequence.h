//===- MapSequence.h - A size bucket's map build, recorded once -*- C++ -*-===//
//
// Private to tilec_sparse. A stream of point clouds of new sizes builds
// maps for a new voxel count every frame; launched one by one, a build is
// about 30 driver calls, each with the engine's plan of the launch, and the
// GPU waits for the host between its short kernels. The map kernels read
// their live count from a device word and size their grids by a capacity
// (kernels/*.cpp, count_ptr), so one build of a bucket's capacity (the
// next power of two) serves every count in it: recorded once
// (SparseEngine::recordInto) into buffers of its own, instantiated as a
// CUDA graph, and replayed for each tensor with its count written first
// and its maps copied out after: about ten driver calls a build.
// docs/sparse-conv.md, "One launch sequence per size bucket".
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_MAPSEQUENCE_H
#define TILEC_SPARSE_LIB_MAPSEQUENCE_H

#include "MapBuild.h"

#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/LaunchSequence.h"

#include <memory>

namespace tilec::sparse {

class MapSequence {
public:
  // The capacity of `voxels`'s bucket (the next power of two), or 0 where
  // none serves: a map of the capacity's would pass the kernels' 32-bit
  // offsets, or the bucket holds more than kMaxSequenceVoxels.
  static int64_t capacityFor(int64_t voxels, const Window &window);
  // Records the build of `window`'s sorted map (`lean` rows: the cover
  // rounds) and of the lists of `blockRows` over `capacity` voxels.
  static Result<std::unique_ptr<MapSequence>>
  record(SparseEngine &engine, const Window &window, bool lean,
         int64_t blockRows, int64_t capacity);

  // The maps of the `voxels` (at most the capacity) at `coords`: one replay,
  // the maps copied into their own allocations, one synchronization. Null
  // when the table took not every voxel (a probe sequence too long for the
  // insert's bound: the caller builds the growing way); an error for a
  // duplicate voxel or a coordinate out of range, as a build says it.
  Result<std::unique_ptr<NeighbourMaps>> build(rt::DevicePtr coords,
                                               int64_t voxels, CUstream stream);

  int64_t capacity() const { return shape_.capacity; }

private:
  MapSequence(SparseEngine &engine, const MapBuildShape &shape,
              int64_t blockRows)
      : engine_(engine), shape_(shape), blockRows_(blockRows) {}

  SparseEngine &engine_;
  MapBuildShape shape_;
  int64_t blockRows_;
  // Every buffer the recorded launches use, in one allocation: the
  // coordinates copied in, the build's regions, its map at the capacity
  // and the lists of the capacity's blocks.
  std::optional<rt::DeviceBuffer> storage_;
  rt::DevicePtr coords_;
  std::vector<Region> regions_;
  MapOutputs map_;
  BlockListBuffers lists_;
  std::unique_ptr<rt::LaunchSequence> launches_;
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_MAPSEQUENCE_H
