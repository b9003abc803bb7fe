//===- MapSequence.cpp - A size bucket's map build, recorded once ---------===//

#include "MapSequence.h"

#include <algorithm>

namespace tilec::sparse {
namespace {

// The largest bucket recorded. A replay saves the host's launches but runs
// the capacity's memsets and scans: paired against 71ab9cf's launched build
// on an H100 (docs/bench.md), it took 0.107 ms off the res-64 shell's
// (16k bucket) and added 0.036 ms at the res-256 shell (256k) and 0.055 ms
// at 500k voxels, where the kernels, not the host, bound the build. Up to
// 128k the kernels (about half the res-256 shell's 257 us) take less time
// than the host takes to queue them one by one (0.43-0.85 ms a build under
// the profiler); paired on another H100, the res-128 shell (64k bucket)
// built 0.057 ms faster replayed. Recorded up to 2^19 again on an H100
// (2026-12-07), the larger buckets neither lost nor won beyond the noise of
// identical code. Once the radix passes counted in shared memory (their
// kernels 0.1 ms shorter at 500k voxels), recording up to 2^19 took 0.146
// ms off a 1x64 frame and 0.136 ms off an 8x128 frame at the res-256 shell
// (paired medians, H100; docs/bench.md, "Counting and ranking in shared
// memory"): the host's launches, not the kernels, bound those builds.
constexpr int64_t kMaxSequenceVoxels = int64_t(1) << 19;
// Buckets kept per engine (a graph each; the scratch is shared).
constexpr size_t kMaxMapSequences = 16;

// Where a sequence's buffers sit in its scratch (packedOffsets): the lists,
// four placeholders (the addresses the recording gives the coordinates and
// the map's order, nbt and row masks, which each build points at the
// tensor's), then the build's regions (mapRegionBytes). The lists' counts,
// offsets and block order, too, are recorded here and written into the
// tensor's own storage in every build.
enum SequencePart { kLists, kCoords, kOrder, kNbt, kRowMasks, kRegions };

std::vector<int64_t> sequenceParts(const MapBuildShape &shape,
                                   int64_t blockRows) {
  int64_t capacity = shape.capacity, v = shape.window.offsets();
  std::vector<int64_t> sizes = {
      getBlockListLayout(cdiv(capacity, blockRows), v).bytes, 16, 16, 16, 16};
  std::vector<int64_t> regions = mapRegionBytes(shape);
  sizes.insert(sizes.end(), regions.begin(), regions.end());
  return sizes;
}

MapBuildShape shapeOf(const Window &window, int64_t capacity, bool lean) {
  return MapBuildShape{capacity, log2TableSlots(capacity), window,
                       coverRoundsOf(capacity, lean)};
}

} // namespace

int64_t MapSequence::capacityFor(int64_t voxels, const Window &window) {
  if (voxels <= 0)
    return 0;
  int64_t capacity = int64_t(1) << ceilLog2(voxels);
  if (capacity > kMaxSequenceVoxels ||
      capacity * window.offsets() >= (int64_t(1) << 31))
    return 0;
  return capacity;
}

int64_t MapSequence::scratchBytes(const Window &window, int64_t blockRows,
                                  int64_t capacity, bool lean) {
  int64_t total = 0;
  packedOffsets(sequenceParts(shapeOf(window, capacity, lean), blockRows),
                total);
  return total;
}

Result<std::unique_ptr<MapSequence>>
MapSequence::record(SparseEngine &engine, const Window &window, bool lean,
                    int64_t blockRows, int64_t capacity,
                    rt::DevicePtr scratch) {
  MapBuildShape shape = shapeOf(window, capacity, lean);
  shape.log2Slots = startingLog2Slots(engine, capacity);
  std::unique_ptr<MapSequence> sequence(
      new MapSequence(engine, shape, blockRows));
  int64_t v = window.offsets();
  int64_t total = 0;
  std::vector<int64_t> sizes = sequenceParts(shape, blockRows);
  std::vector<int64_t> offsets = packedOffsets(sizes, total);
  auto at = [&](size_t part) {
    return rt::DevicePtr{scratch.address + offsets[part]};
  };
  sequence->lists_ = blockListBuffers(
      at(kLists).address, getBlockListLayout(cdiv(capacity, blockRows), v));
  for (size_t part = kRegions; part < sizes.size(); ++part)
    sequence->regions_.emplace_back(engine.context(), at(part).address,
                                    size_t(sizes[part]));
  MapOutputs map{at(kOrder), at(kNbt), at(kRowMasks)};

  // Compiled (or loaded) in parallel before the recording plans each launch.
  engine.precompile(mapBuildCalls(capacity, window, lean));
  sequence->launches_ = std::make_unique<rt::LaunchSequence>(engine.context());
  engine.recordInto(sequence->launches_.get());
  Status recorded = queueMapKernels(engine, shape, sequence->regions_,
                                    at(kCoords), map, nullptr);
  if (recorded.ok())
    recorded =
        queueBlockLists(engine, map.rowMasks, sequence->regions_[kCount].ptr(),
                        capacity, v, blockRows, sequence->lists_, nullptr);
  engine.recordInto(nullptr);
  TILEC_RETURN_IF_ERROR(recorded);
  TILEC_RETURN_IF_ERROR(sequence->launches_->instantiate());
  const rt::LaunchSequence &launches = *sequence->launches_;
  MapSequence::Places &places = sequence->places_;
  places.coords = launches.placesOf(at(kCoords).address);
  places.order = launches.placesOf(map.order.address);
  places.nbt = launches.placesOf(map.nbt.address);
  places.rowMasks = launches.placesOf(map.rowMasks.address);
  places.blkCount = launches.placesOf(sequence->lists_.blkCount.address);
  places.blkOff = launches.placesOf(sequence->lists_.blkOff.address);
  places.blkOrder = launches.placesOf(sequence->lists_.blkOrder.address);
  return sequence;
}

Result<std::unique_ptr<NeighbourMaps>>
MapSequence::build(rt::DevicePtr coords, int64_t voxels, CUstream stream,
                   const SparseEngine::DeferredCheck *deferred) {
  int64_t n = voxels, v = shape_.window.offsets();
  int64_t blocks = cdiv(n, blockRows_);
  int64_t capacityBlocks = cdiv(shape_.capacity, blockRows_);
  // The map and the lists in allocations of their own, written there by
  // the replay: nbt's stride is the count, and the order, nbt, the row
  // masks and the offsets are written at the live rows and blocks only;
  // the counts and the block order cover the capacity's blocks (the block
  // sort reads every count, and block_offsets gives each block past the
  // count one that sorts it after the live ones, so that the live blocks'
  // order is the start of the capacity's).
  TILEC_ASSIGN_OR_RETURN(map, allocateSortedMap(engine_, n, v,
                                                /*pairs=*/0, stream));
  int64_t listBytes = 0;
  std::vector<int64_t> listOffsets = packedOffsets(
      {4 * capacityBlocks, 4 * blocks * v, 4 * capacityBlocks}, listBytes);
  TILEC_ASSIGN_OR_RETURN(listStorage,
                         engine_.allocateMaps(size_t(listBytes), stream));
  auto listAt = [&](size_t part) {
    return rt::DevicePtr{listStorage.address() + listOffsets[part]};
  };
  rt::DevicePtr blkCount = listAt(0), blkOff = listAt(1), blkOrder = listAt(2);
  // The coordinates are read in place (a tensor's are 16-byte aligned, as
  // the recording's placeholder was).
  TILEC_RETURN_IF_ERROR(
      launches_->setPointers({{places_.coords, coords.address},
                              {places_.order, map->order.address},
                              {places_.nbt, map->nbt.address},
                              {places_.rowMasks, map->rowMasks.address},
                              {places_.blkCount, blkCount.address},
                              {places_.blkOff, blkOff.address},
                              {places_.blkOrder, blkOrder.address}}));
  TILEC_RETURN_IF_ERROR(engine_.memset(regions_[kCount].ptr(),
                                       static_cast<uint32_t>(n), 4, 1, stream));
  TILEC_RETURN_IF_ERROR(launches_->replay(stream));
  auto maps = [&] {
    return std::make_unique<NeighbourMaps>(
        NeighbourMaps{std::move(map), blockRows_, blocks, blkCount, blkOff,
                      blkOrder, std::move(listStorage)});
  };
  if (deferred) {
    TILEC_RETURN_IF_ERROR(queueStatsCopy(regions_[kStats], *deferred, stream));
    return maps();
  }
  TILEC_ASSIGN_OR_RETURN(inserted, waitAndCheckMapBuild(engine_, regions_, n,
                                                        coords, stream, *map));
  if (!inserted)
    return std::unique_ptr<NeighbourMaps>();
  return maps();
}

Result<MapSequence *> SparseEngine::mapSequence(const Window &window, bool lean,
                                                int64_t blockRows,
                                                int64_t voxels) {
  int64_t capacity =
      recordMapBuilds_ ? MapSequence::capacityFor(voxels, window) : 0;
  if (capacity == 0)
    return static_cast<MapSequence *>(nullptr);
  // (A test's smaller tables record sequences of their own.)
  std::string key =
      window.str() + (lean ? "|lean|" : "|key|") + std::to_string(blockRows) +
      "|" + std::to_string(capacity) +
      (tableShrink_ ? "|shrink" + std::to_string(tableShrink_) : "");
  auto found =
      std::find_if(mapSequences_.begin(), mapSequences_.end(),
                   [&](const auto &entry) { return entry.first == key; });
  if (found != mapSequences_.end()) {
    // The most recently used first.
    std::rotate(mapSequences_.begin(), found, found + 1);
    return mapSequences_.front().second.get();
  }
  // One scratch for every sequence (each build is synchronized, or its
  // deferred check settled, before the next one starts); a
  // sequence that needs more than it has drops the others, whose launches
  // point into it, and a quarter more is taken so that the next buckets
  // up fit too.
  size_t bytes =
      size_t(MapSequence::scratchBytes(window, blockRows, capacity, lean));
  if (!sequenceScratch_ || sequenceScratch_->size() < bytes) {
    mapSequences_.clear();
    sequenceScratch_.reset();
    TILEC_ASSIGN_OR_RETURN(
        scratch, rt::DeviceBuffer::allocate(context(), bytes + bytes / 4));
    sequenceScratch_ = std::move(scratch);
  }
  TILEC_ASSIGN_OR_RETURN(
      sequence, MapSequence::record(*this, window, lean, blockRows, capacity,
                                    sequenceScratch_->ptr()));
  if (mapSequences_.size() >= kMaxMapSequences)
    mapSequences_.pop_back();
  mapSequences_.insert(mapSequences_.begin(),
                       {std::move(key), std::move(sequence)});
  return mapSequences_.front().second.get();
}

} // namespace tilec::sparse
