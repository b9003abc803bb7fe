//===- SparseTensor.cpp - Neighbour maps built on the GPU -----------------===//
//
// The map kernels of kernels/ in order (docs/sparse-conv.md): the voxel
// hash table (voxel_hash_insert), the neighbour map (voxel_neighbours), the
// rows' sort keys (neighbour_keys), a stable radix sort of the keys
// (radix_histogram, exclusive_scan, radix_scatter; 7 bits a pass), each row
// moved to the leanest group of rows that runs its offsets (mask_unions,
// mask_cover and the same radix sort by the group), the map in sorted order
// (neighbour_transpose), the row blocks' offset lists and their counts
// (block_offsets) and the blocks sorted by their count of offsets (the same
// radix sort). Every step is deterministic, so the same coordinates give the
// same maps in every process. A build of a small bucket replays the bucket's
// recorded launches instead (MapSequence.h); the kernels read the live voxel
// count from a device word either way.
//
//===----------------------------------------------------------------------===//

#include "MapBuild.h"
#include "MapSequence.h"
#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Driver.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <optional>

namespace tilec::sparse {
namespace {

// A table at most a quarter full: voxel_neighbours walks every lookup as
// far as the longest insertion's probe sequence, which at a load near 1/2
// is 3x as long as at 1/4 (37 against 12 slots for 500k random voxels).
// With one slot a lookup step, 1/8 took 1% to 14% off the map build on the
// H200 (fresh tensors of 60-100% subsets of the res-64 and
// res-256 shells and of 500k random voxels; docs/bench.md); with four a
// step (kVoxelProbeWidth) the longer sequences cost a quarter of the steps
// and the table half the memory (25 MB at 500k voxels, half an H100's L2). At
// most kTableGrowths doublings when a sequence runs past voxel_hash_insert's
// MAX_PROBES.
constexpr int kTableSlotsPerVoxel = 4;
constexpr int kTableGrowths = 3;

Call insertCall(int64_t n, int log2Slots, int64_t v) {
  return makeCall({{"N", n}, {"LOG2_T", log2Slots}, {"V", v}});
}
Call lookupCall(int64_t n, int log2Slots, const Window &window) {
  return makeCall({{"N", n},
                   {"LOG2_T", log2Slots},
                   {"KX", window.kernel[0]},
                   {"KY", window.kernel[1]},
                   {"KZ", window.kernel[2]},
                   {"DX", window.dilation[0]},
                   {"DY", window.dilation[1]},
                   {"DZ", window.dilation[2]},
                   {"V", window.offsets()}});
}
Call unionsCall(int64_t n) {
  return makeCall({{"N", n}}, {{"ROWS", kCoverRows}});
}
Call coverCall(int64_t n) {
  return makeCall({{"N", n}}, {{"ROWS", kCoverRows}, {"WINDOW", kCoverWindow}});
}
// Over a row's covering group (below cdiv(n, kCoverRows)).
int coverSortPasses(int64_t n) {
  return radixPassesOver(ceilLog2(cdiv(n, kCoverRows)));
}
} // namespace

Result<bool> checkMapBuild(const MapBuildStats &stats, const Region &statuses,
                           int64_t voxels, rt::DevicePtr coords,
                           const rt::Context &context) {
  if (stats.probes[1] == kDuplicate || stats.probes[1] == kOutOfRange)
    return describeInsertError(statuses, voxels, coords, context);
  return stats.probes[1] == kInserted;
}

Result<bool> waitAndCheckMapBuild(SparseEngine &engine,
                                  const std::vector<Region> &regions,
                                  int64_t voxels, rt::DevicePtr coords,
                                  CUstream stream, SortedNeighbourMap &map) {
  // Copied behind the build into page-locked memory: the one wait for the
  // stream brings the statistics too (not a second, blocking copy after it).
  TILEC_ASSIGN_OR_RETURN(host, engine.checkedStats());
  TILEC_RETURN_IF_ERROR(
      regions[kStats].copyToHostAsync(host, sizeof(MapBuildStats), stream));
  TILEC_RETURN_IF_ERROR(engine.synchronize(stream));
  MapBuildStats stats{};
  std::memcpy(&stats, host, sizeof(stats));
  TILEC_ASSIGN_OR_RETURN(inserted,
                         checkMapBuild(stats, regions[kStatuses], voxels,
                                       coords, engine.context()));
  if (inserted)
    map.activePairs = stats.pairs;
  return inserted;
}

Status queueStatsCopy(const Region &stats,
                      const SparseEngine::DeferredCheck &deferred,
                      CUstream stream) {
  TILEC_RETURN_IF_ERROR(
      stats.copyToHostAsync(deferred.hostStats, sizeof(MapBuildStats), stream));
  return deferred.copied->record(stream);
}

Status describeInsertError(const Region &statuses, int64_t voxels,
                           rt::DevicePtr coords, const rt::Context &context) {
  std::vector<int32_t> status(voxels), xyz(4 * voxels);
  TILEC_RETURN_IF_ERROR(
      statuses.copyToHost(status.data(), status.size() * sizeof(int32_t)));
  const rt::Driver &driver = context.driver();
  TILEC_RETURN_IF_ERROR(
      driver.check(driver.api().cuMemcpyDtoH(xyz.data(), coords.address,
                                             xyz.size() * sizeof(int32_t)),
                   "cuMemcpyDtoH"));
  for (int64_t i = 0; i < voxels; ++i) {
    if (status[i] != kDuplicate && status[i] != kOutOfRange)
      continue;
    std::string where = "voxel " + std::to_string(i) + " (" +
                        std::to_string(xyz[4 * i]) + ", " +
                        std::to_string(xyz[4 * i + 1]) + ", " +
                        std::to_string(xyz[4 * i + 2]) + ", " +
                        std::to_string(xyz[4 * i + 3]) + ")";
    if (status[i] == kOutOfRange)
      return Status::error(ErrorKind::InvalidInput,
                           where + ": batch and coordinates must be in "
                                   "[0, 65536)");
    for (int64_t j = 0; j < voxels; ++j)
      if (j != i && std::memcmp(&xyz[4 * j], &xyz[4 * i], 16) == 0)
        return Status::error(ErrorKind::InvalidInput,
                             where + " is also voxel " + std::to_string(j) +
                                 ": a sparse tensor holds each voxel once");
    return Status::error(ErrorKind::InvalidInput,
                         where + " is a duplicate voxel");
  }
  return Status::error("voxel_hash_insert reported an error but no voxel "
                       "carries it");
}

Result<std::shared_ptr<SortedNeighbourMap>>
allocateSortedMap(SparseEngine &engine, int64_t rows, int64_t v, int64_t pairs,
                  CUstream stream) {
  int64_t bytes = 0;
  std::vector<int64_t> offsets =
      packedOffsets({4 * rows, 4 * rows * v, 4 * rows * cdiv(v, 32)}, bytes);
  TILEC_ASSIGN_OR_RETURN(storage, engine.allocateMaps(bytes, stream));
  rt::DevicePtr order = storage.ptr();
  rt::DevicePtr nbt{storage.address() + offsets[1]};
  rt::DevicePtr rowMasks{storage.address() + offsets[2]};
  return std::make_shared<SortedNeighbourMap>(SortedNeighbourMap{
      rows, v, pairs, order, nbt, rowMasks, std::move(storage)});
}

SparseTensor::SparseTensor(SparseEngine &engine, rt::DevicePtr coords,
                           int64_t voxels)
    : engine_(&engine), coords_(coords), voxels_(voxels) {}
SparseTensor::~SparseTensor() { releaseMaps(); }
SparseTensor::SparseTensor(SparseTensor &&) noexcept = default;
SparseTensor &SparseTensor::operator=(SparseTensor &&other) noexcept {
  if (this != &other) {
    releaseMaps();
    engine_ = other.engine_;
    coords_ = other.coords_;
    voxels_ = other.voxels_;
    rowOrder_ = other.rowOrder_;
    sorted_ = std::move(other.sorted_);
    maps_ = std::move(other.maps_);
    pairs_ = std::move(other.pairs_);
    convs_ = std::move(other.convs_);
    strided_ = std::move(other.strided_);
    streams_ = std::move(other.streams_);
    pending_ = std::move(other.pending_);
  }
  return *this;
}

void SparseTensor::noteStream(CUstream stream) {
  if (std::find(streams_.begin(), streams_.end(), stream) == streams_.end())
    streams_.push_back(stream);
}

void SparseTensor::releaseMaps() {
  if (streams_.empty())
    return;
  // Without the ordering (no event could be made or recorded) the frees
  // wait for the whole device instead.
  if (!engine_->orderLegacyStreamAfter(streams_).ok())
    (void)engine_->context().driver().api().cuCtxSynchronize();
  convs_.clear();
  strided_.clear();
  pairs_.clear();
  maps_.clear();
  sorted_.clear();
  streams_.clear();
}

Result<SparseTensor> SparseTensor::create(SparseEngine &engine,
                                          rt::DevicePtr coords,
                                          int64_t voxels) {
  if (voxels < 0)
    return Status::error("a sparse tensor has a voxel count >= 0, got " +
                         std::to_string(voxels));
  if (voxels >= kVoxelLimit)
    return Status::error("a sparse tensor holds fewer than 2^28 voxels, got " +
                         std::to_string(voxels));
  if (voxels > 0 && (coords.address == 0 || coords.address % 16 != 0))
    return Status::error("the coordinates must be a 16-byte aligned device "
                         "pointer");
  return SparseTensor(engine, coords, voxels);
}

Status SparseTensor::setRowOrder(RowOrder order) {
  if (order != rowOrder_ && !sorted_.empty())
    return Status::error("the row order is set before the first maps are "
                         "built; this tensor's maps are built");
  rowOrder_ = order;
  return Status::success();
}

Result<const NeighbourMaps *> SparseTensor::maps(const Window &asked,
                                                 int64_t blockRows,
                                                 CUstream stream,
                                                 int64_t channels) {
  return findOrBuildMaps(asked, blockRows, stream, channels,
                         /*deferCheck=*/false);
}

Result<const NeighbourMaps *> SparseTensor::findOrBuildMaps(const Window &asked,
                                                            int64_t blockRows,
                                                            CUstream stream,
                                                            int64_t channels,
                                                            bool deferCheck) {
  TILEC_RETURN_IF_ERROR(asked.check("sparse tensor maps"));
  // Maps asked for checked are checked first (one deferred build at a time).
  if (pending_ && !deferCheck)
    TILEC_RETURN_IF_ERROR(settleMaps().status());
  Window window = asked.normalized();
  auto key = std::make_pair(window, blockRows);
  if (auto found = maps_.find(key); found != maps_.end())
    return found->second.get();
  noteStream(stream);
  bool lean =
      rowOrder_ == RowOrder::LeanGroups ||
      (rowOrder_ == RowOrder::Auto && channels >= kLeanGroupsMinChannels);
  auto sorted = sorted_.find(window);
  PendingCheck deferred{key, {0, 0}, stream, {}};
  bool defer = deferCheck && sorted == sorted_.end() && !pending_;
  Result<std::unique_ptr<NeighbourMaps>> built =
      sorted != sorted_.end()
          ? buildBlockLists(sorted->second, blockRows, stream)
          : buildMaps(window, lean, blockRows, stream,
                      defer ? &deferred : nullptr);
  if (!built)
    return built.status();
  if (sorted == sorted_.end())
    sorted_[window] = (*built)->map;
  if (deferred.check.copied)
    pending_ = deferred;
  return (maps_[key] = std::move(*built)).get();
}

Result<bool> SparseTensor::settleMaps() {
  if (!pending_)
    return true;
  PendingCheck pending = *pending_;
  pending_.reset();
  const rt::Context &context = engine_->context();
  Status copied = pending.check.copied->synchronize();
  MapBuildStats stats{};
  std::memcpy(&stats, pending.check.hostStats, sizeof(stats));
  Region statuses(context, pending.statuses.first, pending.statuses.second);
  Result<bool> inserted =
      copied.ok() ? checkMapBuild(stats, statuses, voxels_, coords_, context)
                  : Result<bool>(copied);
  auto found = maps_.find(pending.key);
  assert(found != maps_.end() && "the pending maps are the tensor's");
  if (inserted && *inserted) {
    // Made mutable by allocateSortedMap; the pair count is known only now.
    std::const_pointer_cast<SortedNeighbourMap>(found->second->map)
        ->activePairs = stats.pairs;
    return true;
  }
  // Not maps to keep (a bad input, a table to grow, or a device error):
  // dropped with every row block's lists queued over them, freed once the
  // kernels queued over them on the build's stream are done; if that wait
  // fails, kept allocated (leaked) instead, since kernels may still read
  // them.
  const rt::Driver &driver = context.driver();
  Status done = driver.check(driver.api().cuStreamSynchronize(pending.stream),
                             "cuStreamSynchronize");
  std::vector<std::unique_ptr<NeighbourMaps>> dropped;
  for (auto entry = maps_.begin(); entry != maps_.end();) {
    if (entry->first.first == pending.key.first) {
      dropped.push_back(std::move(entry->second));
      entry = maps_.erase(entry);
    } else {
      ++entry;
    }
  }
  sorted_.erase(pending.key.first);
  if (!done.ok()) {
    for (std::unique_ptr<NeighbourMaps> &maps : dropped)
      (void)maps.release();
    return done;
  }
  return inserted;
}

Status SparseTensor::buildRowBlockMaps(const Window &window,
                                       const std::vector<int64_t> &blockRows,
                                       CUstream stream, int64_t channels) {
  // Every row block queued behind one unchecked build, then one wait; a
  // table that took not every voxel grows in a second, checked pass.
  for (bool deferCheck : {true, false}) {
    for (int64_t rows : blockRows)
      TILEC_RETURN_IF_ERROR(
          findOrBuildMaps(window, rows, stream, channels, deferCheck).status());
    TILEC_ASSIGN_OR_RETURN(settled, settleMaps());
    if (settled)
      return Status::success();
  }
  // Not reached: the second pass checks its build before it returns.
  return Status::error("sparse tensor maps: the voxel table did not grow");
}

namespace {

// The smallest bucket-defining facts of a map build's launches: for each
// voxel-like count they take (the voxels, the radix programs, the cover
// groups, each row block's blocks and programs), its ceil(log2) (the
// autotune keys) and whether it is 1 or a multiple of 16 (what a
// specialization may see), with the window, the table and the cover rounds.
// Builds of one signature launch in the same buckets, so the first of them
// precompiles for all; a signature finer than the buckets only precompiles
// more often, never less.
std::string buildSignature(int64_t n, int log2Slots, const Window &window,
                           int coverRounds) {
  std::string signature = window.str() + "," + std::to_string(log2Slots) + "," +
                          std::to_string(coverRounds);
  auto count = [&](int64_t value) { signature += "|" + countFacts(value); };
  count(n);
  count(radixPrograms(n));
  count(cdiv(n, kCoverRows));
  for (int64_t rows : convRowBlocks(n)) {
    count(cdiv(n, rows));
    count(radixPrograms(cdiv(n, rows)));
  }
  return signature;
}

// Every kernel call a build of these buckets may make: the table, the
// lookups, the sort keys and the sort, the cover rounds, each row block's
// lists (convRowBlocks(n)) and their sort.
std::vector<std::pair<std::string, Call>>
mapBuildCalls(int64_t n, int log2Slots, const Window &window, int coverRounds) {
  int64_t v = window.offsets();
  std::vector<std::pair<std::string, Call>> calls = {
      {"voxel_hash_insert", insertCall(n, log2Slots, v)},
      {"voxel_neighbours", lookupCall(n, log2Slots, window)},
      {"neighbour_keys", keysCall(n, window.kernel, v)},
      {"neighbour_transpose", transposeCall(n, v)}};
  appendRadixCalls(calls, n, radixPasses(v));
  if (coverRounds > 0) {
    calls.emplace_back("mask_unions", unionsCall(n));
    calls.emplace_back("mask_cover", coverCall(n));
    appendRadixCalls(calls, n, coverSortPasses(n), /*positions=*/false);
  }
  for (int64_t rows : convRowBlocks(n)) {
    calls.emplace_back("block_offsets", blockListCall(n, v, rows));
    appendRadixCalls(calls, cdiv(n, rows), blockSortPasses(v));
  }
  return calls;
}

} // namespace

int log2TableSlots(int64_t n) {
  return std::max(1, ceilLog2(kTableSlotsPerVoxel * n));
}

int startingLog2Slots(const SparseEngine &engine, int64_t n) {
  return std::max(1, log2TableSlots(n) - engine.tableShrink());
}

int coverRoundsOf(int64_t n, bool lean) {
  return lean && cdiv(n, kCoverRows) > 1 ? kCoverRounds : 0;
}

std::vector<std::pair<std::string, Call>>
mapBuildCalls(int64_t voxels, const Window &window, bool lean) {
  return mapBuildCalls(voxels, log2TableSlots(voxels), window,
                       coverRoundsOf(voxels, lean));
}

std::vector<int64_t> mapRegionBytes(const MapBuildShape &shape) {
  int64_t n = shape.capacity, v = shape.window.offsets();
  int64_t programs = radixProgramsUpTo(n);
  int64_t coverGroups = cdiv(n, kCoverRows);
  return {16,
          32,
          4 * n,
          int64_t(8) << shape.log2Slots,
          int64_t(4) << shape.log2Slots,
          4 * n * v,
          4 * n,
          digitCountBytes(programs),
          digitScanBytes(programs),
          4 * n,
          4 * n,
          4 * n,
          4 * coverGroups,
          4 * coverGroups,
          4 * n,
          4 * n};
}

Status queueMapKernels(SparseEngine &engine, const MapBuildShape &shape,
                       const std::vector<Region> &regions, rt::DevicePtr coords,
                       const MapOutputs &map, CUstream stream) {
  int64_t n = shape.capacity, v = shape.window.offsets();
  int log2Slots = shape.log2Slots;
  auto at = [&](MapRegion region) { return regions[region].ptr(); };
  auto fill = [&](MapRegion region, uint8_t value) {
    return engine.memset(at(region), value, 1, regions[region].size(), stream);
  };
  rt::DevicePtr count = at(kCount), probes = at(kStats);
  rt::DevicePtr pairs{probes.address + offsetof(MapBuildStats, pairs)};
  TILEC_RETURN_IF_ERROR(fill(kKeys, 0xFF));
  TILEC_RETURN_IF_ERROR(fill(kStats, 0));
  // The table, and the neighbour map's live rows all -1 (the lookups write
  // the hits of the window's upper half from the other voxel); then the
  // lookups, the sort keys and the pair count.
  TILEC_RETURN_IF_ERROR(engine.launch("voxel_hash_insert",
                                      insertCall(n, log2Slots, v),
                                      {{"coords_ptr", coords},
                                       {"keys_ptr", at(kKeys)},
                                       {"vals_ptr", at(kVals)},
                                       {"status_ptr", at(kStatuses)},
                                       {"probes_ptr", probes},
                                       {"nb_ptr", at(kNb)},
                                       {"count_ptr", count}},
                                      stream));
  TILEC_RETURN_IF_ERROR(engine.launch("voxel_neighbours",
                                      lookupCall(n, log2Slots, shape.window),
                                      {{"coords_ptr", coords},
                                       {"keys_ptr", at(kKeys)},
                                       {"vals_ptr", at(kVals)},
                                       {"probes_ptr", probes},
                                       {"nb_ptr", at(kNb)},
                                       {"count_ptr", count}},
                                      stream));
  TILEC_RETURN_IF_ERROR(engine.launch("neighbour_keys",
                                      keysCall(n, shape.window.kernel, v),
                                      {{"nb_ptr", at(kNb)},
                                       {"sort_key_ptr", at(kSortKeys)},
                                       {"pairs_ptr", pairs},
                                       {"count_ptr", count}},
                                      stream));

  // Rows sorted by key, stably (radixPasses); the keys stay for the cover
  // rounds.
  RadixScratch radixScratch{at(kKeysOut), at(kKeysB),    at(kValsIn),
                            at(kHist),    at(kHistScan), count};
  TILEC_RETURN_IF_ERROR(radixSort(engine, at(kSortKeys), n, radixPasses(v),
                                  map.order, radixScratch, stream));
  // Then each row moved to the leanest group of rows that runs its offsets
  // (mask_cover), stably, in rounds.
  for (int round = 0; round < shape.coverRounds; ++round) {
    TILEC_RETURN_IF_ERROR(engine.launch("mask_unions", unionsCall(n),
                                        {{"order_ptr", map.order},
                                         {"sort_key_ptr", at(kSortKeys)},
                                         {"unions_ptr", at(kUnions)},
                                         {"scores_ptr", at(kScores)},
                                         {"count_ptr", count}},
                                        stream));
    TILEC_RETURN_IF_ERROR(engine.launch("mask_cover", coverCall(n),
                                        {{"order_ptr", map.order},
                                         {"sort_key_ptr", at(kSortKeys)},
                                         {"unions_ptr", at(kUnions)},
                                         {"scores_ptr", at(kScores)},
                                         {"cover_ptr", at(kCover)},
                                         {"values_ptr", at(kCoverValues)},
                                         {"count_ptr", count}},
                                        stream));
    TILEC_RETURN_IF_ERROR(radixSort(engine, at(kCover), n, coverSortPasses(n),
                                    map.order, radixScratch, stream,
                                    at(kCoverValues)));
  }
  return engine.launch("neighbour_transpose", transposeCall(n, v),
                       {{"nb_ptr", at(kNb)},
                        {"order_ptr", map.order},
                        {"nbt_ptr", map.nbt},
                        {"row_masks_ptr", map.rowMasks},
                        {"count_ptr", count}},
                       stream);
}

Status queueBlockLists(SparseEngine &engine, rt::DevicePtr rowMasks,
                       rt::DevicePtr rowsCount, int64_t rows, int64_t v,
                       int64_t blockRows, const BlockListBuffers &lists,
                       CUstream stream) {
  int64_t blocks = cdiv(rows, blockRows);
  TILEC_RETURN_IF_ERROR(engine.launch("block_offsets",
                                      blockListCall(rows, v, blockRows),
                                      {{"row_masks_ptr", rowMasks},
                                       {"blk_count_ptr", lists.blkCount},
                                       {"blk_off_ptr", lists.blkOff},
                                       {"blocks_ptr", lists.blocksCount},
                                       {"count_ptr", rowsCount}},
                                      stream));
  // A stable sort of (count, block) by count; the counts are read, not
  // written.
  BlockSortLayout layout = getBlockSortLayout(blocks);
  auto at = [&](int64_t offset) {
    return rt::DevicePtr{lists.sortScratch.address + offset};
  };
  return radixSort(
      engine, lists.blkCount, blocks, blockSortPasses(v), lists.blkOrder,
      RadixScratch{at(layout.keysA), at(layout.keysB), at(layout.values),
                   at(layout.hist), at(layout.histScan), lists.blocksCount},
      stream);
}

Result<std::unique_ptr<NeighbourMaps>>
SparseTensor::buildMaps(const Window &window, bool lean, int64_t blockRows,
                        CUstream stream, PendingCheck *deferred) {
  int64_t n = voxels_, v = window.offsets();
  if (n == 0)
    deferred = nullptr; // nothing to check
  if (deferred) {
    TILEC_ASSIGN_OR_RETURN(check, engine_->deferredCheck());
    deferred->check = check;
  }
  auto deferTo = [&](const Region &statuses) {
    deferred->statuses = {statuses.ptr().address, statuses.size()};
  };
  // A bucket's recorded build, replayed (MapSequence.h), where it serves.
  if (n > 0) {
    TILEC_ASSIGN_OR_RETURN(sequence,
                           engine_->mapSequence(window, lean, blockRows, n));
    if (sequence) {
      TILEC_ASSIGN_OR_RETURN(
          built, sequence->build(coords_, n, stream,
                                 deferred ? &deferred->check : nullptr));
      if (built && deferred)
        deferTo(sequence->statuses());
      if (built)
        return built;
    }
  }
  // The pair count is set once the build is done.
  TILEC_ASSIGN_OR_RETURN(map, allocateSortedMap(*engine_, n, v,
                                                /*pairs=*/0, stream));
  if (n == 0)
    return buildBlockLists(map, blockRows, stream);

  // The hash table: at most a quarter full; a probe sequence longer than the
  // insert kernel's bound grows it. The temporaries live in the engine's
  // scratch (mapRegionBytes).
  MapBuildShape shape{n, startingLog2Slots(*engine_, n), window,
                      coverRoundsOf(n, lean)};
  // A first build of its buckets compiles a dozen small kernels
  // (specializations of the map kernels for these sizes): in parallel,
  // before the first launch.
  if (engine_->firstUseOf(
          buildSignature(n, shape.log2Slots, window, shape.coverRounds)))
    engine_->precompile(
        mapBuildCalls(n, shape.log2Slots, window, shape.coverRounds));

  // Every step is queued at once, the block lists too; the one
  // synchronization at the end (or the deferred check, settleMaps, before
  // the scratch is used again) says whether the table took every voxel
  // (else it grows and the steps run again) and how many pairs there are.
  for (int growth = 0;; ++growth, ++shape.log2Slots) {
    if (shape.log2Slots > 30)
      return Status::error("the voxel table outgrew 2^30 slots");
    TILEC_ASSIGN_OR_RETURN(regions, carve(*engine_, mapRegionBytes(shape)));
    TILEC_RETURN_IF_ERROR(engine_->memset(
        regions[kCount].ptr(), static_cast<uint32_t>(n), 4, 1, stream));
    TILEC_RETURN_IF_ERROR(queueMapKernels(
        *engine_, shape, regions, coords_,
        MapOutputs{map->order, map->nbt, map->rowMasks}, stream));
    // The lists read the map in the stream's order; they are dropped and
    // queued again when the table grows.
    TILEC_ASSIGN_OR_RETURN(lists, buildBlockLists(map, blockRows, stream));
    if (deferred) {
      TILEC_RETURN_IF_ERROR(
          queueStatsCopy(regions[kStats], deferred->check, stream));
      deferTo(regions[kStatuses]);
      return lists;
    }
    TILEC_ASSIGN_OR_RETURN(
        inserted,
        waitAndCheckMapBuild(*engine_, regions, n, coords_, stream, *map));
    // Inserted: the scratch is free for the next build (the stream is idle).
    if (inserted)
      return lists;
    if (growth == kTableGrowths)
      return Status::error("the voxel table found no free slot after " +
                           std::to_string(kTableGrowths) + " doublings");
  }
}

Result<std::unique_ptr<NeighbourMaps>>
SparseTensor::buildBlockLists(std::shared_ptr<const SortedNeighbourMap> map,
                              int64_t blockRows, CUstream stream) {
  int64_t n = map->voxels, v = map->offsets;
  int64_t blocks = cdiv(n, blockRows);
  // In one allocation (getBlockListLayout), kept with the maps so that
  // nothing is freed while the kernels run.
  BlockListLayout layout = getBlockListLayout(blocks, v);
  TILEC_ASSIGN_OR_RETURN(storage, engine_->allocateMaps(layout.bytes, stream));
  BlockListBuffers lists = blockListBuffers(storage.address(), layout);
  // No voxels, no blocks: nothing to list.
  if (n > 0) {
    TILEC_RETURN_IF_ERROR(engine_->memset(
        lists.rowsCount, static_cast<uint32_t>(n), 4, 1, stream));
    TILEC_RETURN_IF_ERROR(queueBlockLists(*engine_, map->rowMasks,
                                          lists.rowsCount, n, v, blockRows,
                                          lists, stream));
  }
  return std::make_unique<NeighbourMaps>(
      NeighbourMaps{std::move(map), blockRows, blocks, lists.blkCount,
                    lists.blkOff, lists.blkOrder, std::move(storage)});
}

Result<const OffsetPairs *> SparseTensor::offsetPairs(const Window &asked,
                                                      CUstream stream) {
  Window window = asked.normalized();
  if (auto found = pairs_.find(window); found != pairs_.end())
    return found->second.get();
  auto sorted = sorted_.find(window);
  if (sorted == sorted_.end()) {
    TILEC_ASSIGN_OR_RETURN(
        built, maps(window, convRowBlocks(voxels()).front(), stream));
    (void)built;
    sorted = sorted_.find(window);
  }
  noteStream(stream);
  TILEC_ASSIGN_OR_RETURN(pairs, buildOffsetPairs(sorted->second, stream));
  return (pairs_[window] = std::move(pairs)).get();
}

Result<std::unique_ptr<OffsetPairs>>
SparseTensor::buildOffsetPairs(std::shared_ptr<const SortedNeighbourMap> map,
                               CUstream stream) {
  int64_t n = map->voxels, v = map->offsets;
  int64_t counts = pairCountEntries(n, v);
  // The counts per (offset, row chunk), their scan, the starts and the
  // pairs (the build counted them), in one allocation.
  int64_t bytes = 0;
  std::vector<int64_t> offsets =
      packedOffsets({4 * counts, 4 * (counts + 1), 4 * (v + 1),
                     4 * map->activePairs, 4 * map->activePairs},
                    bytes);
  TILEC_ASSIGN_OR_RETURN(storage, engine_->allocateMaps(bytes, stream));
  // The storage moves into the pairs below: its address first.
  CUdeviceptr base = storage.address();
  auto at = [base](int64_t offset) { return rt::DevicePtr{base + offset}; };
  auto pairs = std::make_unique<OffsetPairs>(OffsetPairs{
      map, at(offsets[2]), at(offsets[3]), at(offsets[4]), std::move(storage)});
  if (n == 0) {
    const rt::Driver &driver = engine_->context().driver();
    TILEC_RETURN_IF_ERROR(
        driver.check(driver.api().cuMemsetD8Async(pairs->start.address, 0,
                                                  4 * (v + 1), stream),
                     "cuMemsetD8Async"));
    return pairs;
  }
  if (engine_->firstUseOf("offset_pairs|" + std::to_string(v) + "|" +
                          std::to_string(ceilLog2(n)) + "|" +
                          std::to_string(ceilLog2(counts))))
    engine_->precompile(pairListCalls(n, v));
  TILEC_RETURN_IF_ERROR(engine_->launch(
      "offset_pair_counts", pairListCall(n, v),
      {{"nbt_ptr", map->nbt}, {"counts_ptr", at(offsets[0])}}, stream));
  TILEC_RETURN_IF_ERROR(engine_->launch(
      "exclusive_scan", scanCall(counts),
      {{"in_ptr", at(offsets[0])}, {"out_ptr", at(offsets[1])}}, stream));
  TILEC_RETURN_IF_ERROR(engine_->launch("offset_pairs", pairListCall(n, v),
                                        {{"nbt_ptr", map->nbt},
                                         {"order_ptr", map->order},
                                         {"scan_ptr", at(offsets[1])},
                                         {"pair_start_ptr", pairs->start},
                                         {"pair_in_ptr", pairs->in},
                                         {"pair_out_ptr", pairs->out}},
                                        stream));
  return pairs;
}

} // namespace tilec::sparse
