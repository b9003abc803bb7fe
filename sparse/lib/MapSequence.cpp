//===- MapSequence.cpp - A size bucket's map build, recorded once ---------===//

#include "MapSequence.h"

#include "tilec/runtime/Driver.h"

#include <algorithm>

namespace tilec::sparse {
namespace {

// The largest bucket recorded: its buffers hold the table, two maps and the
// sort's buffers at the capacity (about 300 bytes a voxel for 27 offsets).
constexpr int64_t kMaxSequenceVoxels = int64_t(1) << 22;
// Buckets kept per engine (a stream's sizes span two or three).
constexpr size_t kMaxMapSequences = 4;

} // namespace

int64_t MapSequence::capacityFor(int64_t voxels, const Window &window) {
  int64_t capacity = int64_t(1) << ceilLog2(voxels);
  if (voxels <= 0 || capacity > kMaxSequenceVoxels ||
      capacity * window.offsets() >= (int64_t(1) << 31))
    return 0;
  return capacity;
}

Result<std::unique_ptr<MapSequence>>
MapSequence::record(SparseEngine &engine, const Window &window, bool lean,
                    int64_t blockRows, int64_t capacity) {
  MapBuildShape shape{capacity, log2TableSlots(capacity), window,
                      coverRoundsOf(capacity, lean)};
  std::unique_ptr<MapSequence> sequence(
      new MapSequence(engine, shape, blockRows));
  int64_t v = window.offsets(), words = cdiv(v, 32);
  int64_t blocks = cdiv(capacity, blockRows);
  BlockListLayout listLayout = getBlockListLayout(blocks, v);
  // The coordinates, the map's order, nbt and masks, the lists, then the
  // build's regions.
  std::vector<int64_t> sizes = {16 * capacity, 4 * capacity, 4 * capacity * v,
                                4 * capacity * words, listLayout.bytes};
  std::vector<int64_t> regionBytes = mapRegionBytes(shape);
  sizes.insert(sizes.end(), regionBytes.begin(), regionBytes.end());
  int64_t total = 0;
  std::vector<int64_t> offsets = packedOffsets(sizes, total);
  TILEC_ASSIGN_OR_RETURN(
      storage, rt::DeviceBuffer::allocate(engine.context(), size_t(total)));
  CUdeviceptr base = storage.address();
  sequence->storage_ = std::move(storage);
  auto at = [&](size_t part) { return rt::DevicePtr{base + offsets[part]}; };
  sequence->coords_ = at(0);
  sequence->map_ = MapOutputs{at(1), at(2), at(3)};
  sequence->lists_ = blockListBuffers(base + offsets[4], listLayout);
  for (size_t i = 0; i < regionBytes.size(); ++i)
    sequence->regions_.emplace_back(engine.context(), base + offsets[5 + i],
                                    size_t(regionBytes[i]));

  // Compiled (or loaded) in parallel before the recording plans each launch.
  engine.precompile(mapBuildCalls(capacity, window, lean));
  sequence->launches_ = std::make_unique<rt::LaunchSequence>(engine.context());
  engine.recordInto(sequence->launches_.get());
  Status recorded =
      queueMapKernels(engine, shape, sequence->regions_, sequence->coords_,
                      sequence->map_, /*stream=*/nullptr);
  if (recorded.ok())
    recorded = queueBlockLists(engine, sequence->map_.rowMasks,
                               sequence->regions_[kCount].ptr(), capacity, v,
                               blockRows, sequence->lists_, nullptr);
  engine.recordInto(nullptr);
  TILEC_RETURN_IF_ERROR(recorded);
  TILEC_RETURN_IF_ERROR(sequence->launches_->instantiate());
  return sequence;
}

Result<std::unique_ptr<NeighbourMaps>>
MapSequence::build(rt::DevicePtr coords, int64_t voxels, CUstream stream) {
  const rt::Context &context = engine_.context();
  const rt::Driver &driver = context.driver();
  int64_t n = voxels, v = shape_.window.offsets(), words = cdiv(v, 32);
  int64_t blocks = cdiv(n, blockRows_);
  int64_t capacityBlocks = cdiv(shape_.capacity, blockRows_);
  TILEC_RETURN_IF_ERROR(engine_.memset(regions_[kCount].ptr(),
                                       static_cast<uint32_t>(n), 4, 1, stream));
  auto copy = [&](rt::DevicePtr to, rt::DevicePtr from, int64_t bytes) {
    return driver.check(driver.api().cuMemcpyDtoDAsync(to.address, from.address,
                                                       size_t(bytes), stream),
                        "cuMemcpyDtoDAsync");
  };
  TILEC_RETURN_IF_ERROR(copy(coords_, coords, 16 * n));
  TILEC_RETURN_IF_ERROR(launches_->replay(stream));

  // The map and the lists in allocations of their own, at the count: the
  // map's parts are the first n rows of the capacity's (nbt's stride is the
  // count), the lists those of the first blocks, whose order is the end of
  // the capacity's (the empty blocks past the count sort first).
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
  TILEC_RETURN_IF_ERROR(copy(map->order, map_.order, 4 * n));
  TILEC_RETURN_IF_ERROR(copy(map->nbt, map_.nbt, 4 * n * v));
  TILEC_RETURN_IF_ERROR(copy(map->rowMasks, map_.rowMasks, 4 * n * words));
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
  TILEC_ASSIGN_OR_RETURN(
      sequence, MapSequence::record(*this, window, lean, blockRows, capacity));
  if (mapSequences_.size() >= kMaxMapSequences)
    mapSequences_.pop_back();
  mapSequences_.insert(mapSequences_.begin(),
                       {std::move(key), std::move(sequence)});
  return mapSequences_.front().second.get();
}

} // namespace tilec::sparse
