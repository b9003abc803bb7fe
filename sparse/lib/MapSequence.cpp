//===- MapSequence.cpp - A size bucket's map build, recorded once ---------===//

#include "MapSequence.h"

#include "tilec/runtime/Driver.h"

#include <algorithm>

namespace tilec::sparse {
namespace {

// The largest bucket recorded. A replay runs the capacity's programs, and
// those past the count still do part of their work: on an H100 (paired
// builds of fresh 60-100% subsets in one process, docs/bench.md) a replay
// took 0.044 ms off a build of the 16k bucket (0.235 -> 0.192 ms) and added
// 0.056 ms at 256k and 0.100 ms at 512k, where the kernels, not the host,
// bound the build. Larger buckets wait for those programs to exit at once.
constexpr int64_t kMaxSequenceVoxels = int64_t(1) << 15;
// Buckets kept per engine (a graph each; the scratch is shared).
constexpr size_t kMaxMapSequences = 16;

// Where a sequence's buffers sit in its scratch (packedOffsets): the
// coordinates, the map's order, the lists, two placeholders (the addresses
// the recording gives nbt and the row masks, which each build sets to the
// tensor's), then the build's regions (mapRegionBytes).
enum SequencePart { kCoords, kOrder, kLists, kNbt, kRowMasks, kRegions };

std::vector<int64_t> sequenceParts(const MapBuildShape &shape,
                                   int64_t blockRows) {
  int64_t capacity = shape.capacity, v = shape.window.offsets();
  std::vector<int64_t> sizes = {
      16 * capacity, 4 * capacity,
      getBlockListLayout(cdiv(capacity, blockRows), v).bytes, 16, 16};
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
  std::unique_ptr<MapSequence> sequence(
      new MapSequence(engine, shape, blockRows));
  int64_t v = window.offsets();
  int64_t total = 0;
  std::vector<int64_t> sizes = sequenceParts(shape, blockRows);
  std::vector<int64_t> offsets = packedOffsets(sizes, total);
  auto at = [&](size_t part) {
    return rt::DevicePtr{scratch.address + offsets[part]};
  };
  sequence->coords_ = at(kCoords);
  sequence->order_ = at(kOrder);
  sequence->lists_ = blockListBuffers(
      at(kLists).address, getBlockListLayout(cdiv(capacity, blockRows), v));
  for (size_t part = kRegions; part < sizes.size(); ++part)
    sequence->regions_.emplace_back(engine.context(), at(part).address,
                                    size_t(sizes[part]));
  MapOutputs map{sequence->order_, at(kNbt), at(kRowMasks)};

  // Compiled (or loaded) in parallel before the recording plans each launch.
  engine.precompile(mapBuildCalls(capacity, window, lean));
  sequence->launches_ = std::make_unique<rt::LaunchSequence>(engine.context());
  engine.recordInto(sequence->launches_.get());
  Status recorded = queueMapKernels(engine, shape, sequence->regions_,
                                    sequence->coords_, map, nullptr);
  if (recorded.ok())
    recorded =
        queueBlockLists(engine, map.rowMasks, sequence->regions_[kCount].ptr(),
                        capacity, v, blockRows, sequence->lists_, nullptr);
  engine.recordInto(nullptr);
  TILEC_RETURN_IF_ERROR(recorded);
  TILEC_RETURN_IF_ERROR(sequence->launches_->instantiate());
  sequence->nbtPlaces_ = sequence->launches_->placesOf(map.nbt.address);
  sequence->rowMaskPlaces_ =
      sequence->launches_->placesOf(map.rowMasks.address);
  return sequence;
}

Result<std::unique_ptr<NeighbourMaps>>
MapSequence::build(rt::DevicePtr coords, int64_t voxels, CUstream stream) {
  const rt::Context &context = engine_.context();
  const rt::Driver &driver = context.driver();
  int64_t n = voxels, v = shape_.window.offsets();
  int64_t blocks = cdiv(n, blockRows_);
  int64_t capacityBlocks = cdiv(shape_.capacity, blockRows_);
  // The map and the lists in allocations of their own, at the count: nbt
  // and the row masks written there by the replay (nbt's stride is the
  // count), the order and the lists copied, the lists those of the first
  // blocks, whose order is the end of the capacity's (the empty blocks past
  // the count sort first).
  TILEC_ASSIGN_OR_RETURN(map, allocateSortedMap(engine_, n, v,
                                                /*pairs=*/0, stream));
  int64_t listBytes = 0;
  std::vector<int64_t> listOffsets =
      packedOffsets({4 * (blocks + 1), 4 * blocks * v, 4 * blocks}, listBytes);
  TILEC_ASSIGN_OR_RETURN(listStorage,
                         engine_.allocateMaps(size_t(listBytes), stream));
  auto listAt = [&](size_t part) {
    return rt::DevicePtr{listStorage.address() + listOffsets[part]};
  };
  TILEC_RETURN_IF_ERROR(launches_->setPointer(nbtPlaces_, map->nbt.address));
  TILEC_RETURN_IF_ERROR(
      launches_->setPointer(rowMaskPlaces_, map->rowMasks.address));

  TILEC_RETURN_IF_ERROR(engine_.memset(regions_[kCount].ptr(),
                                       static_cast<uint32_t>(n), 4, 1, stream));
  auto copy = [&](rt::DevicePtr to, rt::DevicePtr from, int64_t bytes) {
    return driver.check(driver.api().cuMemcpyDtoDAsync(to.address, from.address,
                                                       size_t(bytes), stream),
                        "cuMemcpyDtoDAsync");
  };
  TILEC_RETURN_IF_ERROR(copy(coords_, coords, 16 * n));
  TILEC_RETURN_IF_ERROR(launches_->replay(stream));
  TILEC_RETURN_IF_ERROR(copy(map->order, order_, 4 * n));
  TILEC_RETURN_IF_ERROR(copy(listAt(0), lists_.blkStart, 4 * (blocks + 1)));
  TILEC_RETURN_IF_ERROR(copy(listAt(1), lists_.blkOff, 4 * blocks * v));
  TILEC_RETURN_IF_ERROR(
      copy(listAt(2),
           rt::DevicePtr{lists_.blkOrder.address +
                         4 * uint64_t(capacityBlocks - blocks)},
           4 * blocks));
  TILEC_RETURN_IF_ERROR(engine_.synchronize(stream));

  MapBuildStats stats{};
  TILEC_RETURN_IF_ERROR(regions_[kStats].copyToHost(&stats, sizeof(stats)));
  if (stats.probes[1] == kDuplicate || stats.probes[1] == kOutOfRange)
    return describeInsertError(regions_[kStatuses], n, coords, context);
  if (stats.probes[1] != kInserted)
    return std::unique_ptr<NeighbourMaps>();
  map->activePairs = stats.pairs;
  rt::DevicePtr blkStart = listAt(0), blkOff = listAt(1), blkOrder = listAt(2);
  return std::make_unique<NeighbourMaps>(
      NeighbourMaps{std::move(map), blockRows_, blocks, blkStart, blkOff,
                    blkOrder, std::move(listStorage)});
}

Result<MapSequence *> SparseEngine::mapSequence(const Window &window, bool lean,
                                                int64_t blockRows,
                                                int64_t voxels) {
  int64_t capacity = MapSequence::capacityFor(voxels, window);
  if (capacity == 0)
    return static_cast<MapSequence *>(nullptr);
  std::string key = window.str() + (lean ? "|lean|" : "|key|") +
                    std::to_string(blockRows) + "|" + std::to_string(capacity);
  auto found =
      std::find_if(mapSequences_.begin(), mapSequences_.end(),
                   [&](const auto &entry) { return entry.first == key; });
  if (found != mapSequences_.end()) {
    // The most recently used first.
    std::rotate(mapSequences_.begin(), found, found + 1);
    return mapSequences_.front().second.get();
  }
  // One scratch for every sequence (each build ends synchronized); a
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
