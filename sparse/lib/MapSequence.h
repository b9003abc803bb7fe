//===- MapSequence.h - A size bucket's map build, recorded once -*- C++ -*-===//
//
// Private to tilec_sparse. A stream of point clouds of new sizes builds
// maps for a new voxel count every frame; launched one by one, a build is
// about 30 driver calls, each with the engine's plan of the launch, and the
// GPU waits for the host between its short kernels. The map kernels read
// their live count from a device word and size their grids by a capacity
// (kernels/*.cpp, count_ptr), so one build of a bucket's capacity serves
// every count in it: recorded once (SparseEngine::recordInto), instantiated
// as a CUDA graph, and replayed for each tensor with its count written
// first and its launches pointed at the tensor's coordinates and at its own
// storage for the map and the lists they write (graph nodes updated in
// place): four driver calls and the node updates a build.
// docs/sparse-conv.md, "One launch sequence per size bucket".
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_MAPSEQUENCE_H
#define TILEC_SPARSE_LIB_MAPSEQUENCE_H

#include "MapBuild.h"

#include "tilec/runtime/LaunchSequence.h"

#include <memory>

namespace tilec::sparse {

class MapSequence {
public:
  // The capacity of `voxels`'s bucket: the next power of two, the kernels'
  // own buckets (finer capacities, an eighth of an octave, made a stream of
  // new sizes record a bucket most frames: the frames bench's median frame
  // took 1.4x as long on the H100; the programs past the count return at
  // once), or 0 where none serves: a map of the capacity's would pass the
  // kernels' 32-bit offsets, or the capacity is over kMaxSequenceVoxels.
  static int64_t capacityFor(int64_t voxels, const Window &window);
  // The bytes of scratch a sequence of `capacity` uses.
  static int64_t scratchBytes(const Window &window, int64_t blockRows,
                              int64_t capacity, bool lean);
  // Records the build of `window`'s sorted map (`lean` rows: the cover
  // rounds) and of the lists of `blockRows` over `capacity` voxels, its
  // temporaries in `scratch` (scratchBytes of them, shared by every
  // sequence of the engine: each build is synchronized, or its deferred
  // check settled, before the next one starts).
  static Result<std::unique_ptr<MapSequence>>
  record(SparseEngine &engine, const Window &window, bool lean,
         int64_t blockRows, int64_t capacity, rt::DevicePtr scratch);

  // The maps of the `voxels` (at most the capacity) at `coords`: one replay,
  // then one synchronization. Null when the table took not every voxel (a
  // probe sequence too long for the insert's bound: the caller builds the
  // growing way); an error for a duplicate voxel or a coordinate out of
  // range, as a build says it. With `deferred`, no synchronization: the
  // statistics are copied there behind the replay (queueStatsCopy) and the
  // maps returned unchecked, their pair count unset; the caller checks
  // them (checkMapBuild over statuses()) before this sequence's next build.
  Result<std::unique_ptr<NeighbourMaps>>
  build(rt::DevicePtr coords, int64_t voxels, CUstream stream,
        const SparseEngine::DeferredCheck *deferred = nullptr);
  // The insert's statuses of the last build, what an error names.
  const Region &statuses() const { return regions_[kStatuses]; }

private:
  MapSequence(SparseEngine &engine, const MapBuildShape &shape,
              int64_t blockRows)
      : engine_(engine), shape_(shape), blockRows_(blockRows) {}

  SparseEngine &engine_;
  MapBuildShape shape_;
  int64_t blockRows_;
  // In the shared scratch: the build's regions and the lists of the
  // capacity's blocks as recorded (their sort; each build points the
  // counts and the offsets at its own storage).
  std::vector<Region> regions_;
  BlockListBuffers lists_;
  std::unique_ptr<rt::LaunchSequence> launches_;
  // The launch arguments that take each build's coordinates and write its
  // tensor's map and lists.
  struct Places {
    std::vector<rt::LaunchSequence::Place> coords, order, nbt, rowMasks,
        blkCount, blkOff, blkOrder;
  };
  Places places_;
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_MAPSEQUENCE_H
