//===- MapBuild.h - What the map builds share ------------------*- C++ -*-===//
//
// Private to tilec_sparse: the calls of the map kernels, the stable radix
// sort, and the scratch regions a build carves its temporaries from, for
// the submanifold maps (SparseTensor.cpp) and the strided ones
// (StridedMaps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_MAPBUILD_H
#define TILEC_SPARSE_LIB_MAPBUILD_H

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Driver.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilec::sparse {

// A pass sorts by one digit of 7 bits, 128 counters a program
// (tile.histogram and tile.bin_rank in shared memory): the rows' 27-bit key
// takes 4 passes, a block's count of offsets (0 to 27) one. Of 4 to 8 bits
// on the H200, 7 gave the shortest map builds when the counts were one-hot
// tiles (docs/bench.md).
inline constexpr int kRadixDigitBits = 7;
inline constexpr int64_t kRadixDigits = int64_t(1) << kRadixDigitBits;

inline int ceilLog2(int64_t value) {
  int log2 = 0;
  while ((int64_t(1) << log2) < value)
    ++log2;
  return log2;
}

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The keys a radix pass's program counts and moves, in one chunk: 128 up to
// 2^16 keys, doubling with the size bucket to 1024 past 2^18, so that a pass
// has at most 512 programs up to 2^19 keys. A program ranks its keys in
// rounds of 128 (tile.bin_rank, a barrier or three a round) and the digit
// counts' scan takes a column a program: small clouds want many short
// programs, large ones fewer columns. Of the bucket (ceil(log2 n)) alone, as
// every size a launch is specialized on, so that a bucket's warmup meets
// every block size its counts launch.
inline int64_t radixPerProgram(int64_t n) {
  return std::clamp<int64_t>(int64_t(1) << std::max(ceilLog2(n) - 9, 0), 128,
                             1024);
}
inline int64_t radixPrograms(int64_t n) { return cdiv(n, radixPerProgram(n)); }
// The most programs a sort of at most n keys launches, what scratch that
// sorts of up to n keys share is sized by: radixPrograms is not monotone (a
// bucket's smallest counts take wider programs than the top of the bucket
// below), but it grows within a bucket, so the most is at a bucket's top or
// at n.
inline int64_t radixProgramsUpTo(int64_t n) {
  int64_t most = radixPrograms(n);
  for (int64_t top = 1; top < n; top *= 2)
    most = std::max(most, radixPrograms(top));
  return most;
}

// What a launch's buckets see of a count: its ceil(log2) (the autotune
// keys) and whether it is 1 or a multiple of 16 (what a specialization may
// see). A build signature made of them precompiles once per buckets.
inline std::string countFacts(int64_t value) {
  return std::to_string(ceilLog2(value)) + (value == 1        ? "=1"
                                            : value % 16 == 0 ? "%16"
                                                              : "");
}

// The calls of a map build, one place for both its launches and their
// precompile.
inline Call makeCall(std::map<std::string, int64_t> sizes,
                     std::map<std::string, int64_t> params = {}) {
  Call call;
  call.sizes = std::move(sizes);
  call.params = std::move(params);
  return call;
}
inline Call keysCall(int64_t n, const std::array<int, 3> &kernel, int64_t v) {
  return makeCall({{"N", n},
                   {"KX", kernel[0]},
                   {"KY", kernel[1]},
                   {"KZ", kernel[2]},
                   {"V", v}});
}
// The passes of a sort of keys of `bits` bits: a digit each, at least one.
inline int radixPassesOver(int64_t bits) {
  return static_cast<int>(std::max<int64_t>(1, cdiv(bits, kRadixDigitBits)));
}
// Over the sort key's min(V, 32) bits.
inline int radixPasses(int64_t v) {
  return radixPassesOver(std::min<int64_t>(v, 32));
}
// Over a block's count of offsets: 1 to V, V + 1 past the live count
// (block_offsets).
inline int blockSortPasses(int64_t v) {
  return radixPassesOver(ceilLog2(v + 2));
}
inline Call digitsCall(int64_t n, int pass) {
  return makeCall({{"N", n}, {"SHIFT", kRadixDigitBits * pass}},
                  {{"BLOCK", radixPerProgram(n)},
                   {"CHUNKS", 1},
                   {"DIGIT_BITS", kRadixDigitBits}});
}
// FIRST: the first pass of a sort whose values are the keys' positions.
inline Call scatterCall(int64_t n, int pass, bool positions) {
  return makeCall({{"N", n}, {"SHIFT", kRadixDigitBits * pass}},
                  {{"BLOCK", radixPerProgram(n)},
                   {"CHUNKS", 1},
                   {"DIGIT_BITS", kRadixDigitBits},
                   {"FIRST", pass == 0 && positions ? 1 : 0}});
}
// The exclusive sums of `rows` vectors of `count` (exclusive_scan's ROWS).
inline Call scanCall(int64_t count, int64_t rows = 1) {
  return makeCall({{"N", count}, {"ROWS", rows}});
}
// The radix sort's scan: a row of its programs' counts per digit.
inline Call digitScanCall(int64_t programs) {
  return scanCall(programs, kRadixDigits);
}
inline Call transposeCall(int64_t n, int64_t v) {
  return makeCall({{"N", n}, {"V", v}});
}
// offset_pair_counts's and offset_pairs's rows a program.
inline constexpr int64_t kPairChunkRows = 1024;
inline Call pairListCall(int64_t n, int64_t v) {
  return makeCall({{"N", n}, {"V", v}}, {{"BLOCK", kPairChunkRows}});
}
inline Call blockListCall(int64_t n, int64_t v, int64_t blockRows) {
  return makeCall({{"N", n}, {"V", v}}, {{"BLOCK_M", blockRows}});
}
// The pair lists of a map of `n` rows of `v` offsets
// (SparseTensor::buildOffsetPairs): the counts of each (offset, row chunk),
// their scan, the lists.
inline int64_t pairCountEntries(int64_t n, int64_t v) {
  return v * cdiv(n, kPairChunkRows);
}
inline std::vector<std::pair<std::string, Call>> pairListCalls(int64_t n,
                                                               int64_t v) {
  return {{"offset_pair_counts", pairListCall(n, v)},
          {"exclusive_scan", scanCall(pairCountEntries(n, v))},
          {"offset_pairs", pairListCall(n, v)}};
}

// The bytes of a radix pass's digit counts over `programs` programs (a row
// of programs per digit, radix_histogram) and of their scans (a row of
// programs + 1 per digit, exclusive_scan with ROWS = kRadixDigits).
inline int64_t digitCountBytes(int64_t programs) {
  return 4 * kRadixDigits * programs;
}
inline int64_t digitScanBytes(int64_t programs) {
  return 4 * kRadixDigits * (programs + 1);
}

// A sorted map of `rows` rows of `v` offsets (order, nbt and the rows'
// masks) in one allocation of the engine's pool.
Result<std::shared_ptr<SortedNeighbourMap>>
allocateSortedMap(SparseEngine &engine, int64_t rows, int64_t v, int64_t pairs,
                  CUstream stream);

// The buffers of a radix sort's passes: keys and values alternate between
// two buffers each, the digit counts of each program and their scan
// (digitCountBytes and digitScanBytes).
struct RadixScratch {
  rt::DevicePtr keysA, keysB, values, hist, histScan;
  // A device word holding the live key count (at most the sort's n).
  rt::DevicePtr count;
};

// Queues a stable sort of the keys at `keys` (a digit a pass, `passes`
// passes; radix_histogram, exclusive_scan, radix_scatter) into `order`:
// the first *scratch.count of them, read on the device, with `n` (at least
// that) sizing the grids, so that a recorded sort serves every count up to
// n. The values are `values` (neither `order` nor scratch.values), else the
// keys' positions (the first pass takes them as such): pass p reads the
// keys of pass p - 1 (p = 0: `keys`) and writes keysA or keysB in turn; the
// values go to scratch.values and `order` in turn, so that the last pass
// writes `order`.
inline Status radixSort(SparseEngine &engine, rt::DevicePtr keys, int64_t n,
                        int passes, rt::DevicePtr order,
                        const RadixScratch &scratch, CUstream stream,
                        std::optional<rt::DevicePtr> values = std::nullopt) {
  int64_t programs = radixPrograms(n);
  rt::DevicePtr keysFrom = keys;
  // Without values the first pass reads none; name a buffer it does not
  // write all the same.
  rt::DevicePtr valsFrom =
      values.value_or(passes % 2 == 0 ? order : scratch.values);
  for (int pass = 0; pass < passes; ++pass) {
    rt::DevicePtr keysTo = pass % 2 == 0 ? scratch.keysA : scratch.keysB;
    rt::DevicePtr valsTo =
        (passes - 1 - pass) % 2 == 0 ? order : scratch.values;
    TILEC_RETURN_IF_ERROR(engine.launch("radix_histogram", digitsCall(n, pass),
                                        {{"keys_ptr", keysFrom},
                                         {"hist_ptr", scratch.hist},
                                         {"count_ptr", scratch.count}},
                                        stream));
    TILEC_RETURN_IF_ERROR(engine.launch(
        "exclusive_scan", digitScanCall(programs),
        {{"in_ptr", scratch.hist}, {"out_ptr", scratch.histScan}}, stream));
    TILEC_RETURN_IF_ERROR(engine.launch("radix_scatter",
                                        scatterCall(n, pass, !values),
                                        {{"keys_in_ptr", keysFrom},
                                         {"vals_in_ptr", valsFrom},
                                         {"keys_out_ptr", keysTo},
                                         {"vals_out_ptr", valsTo},
                                         {"hist_scan_ptr", scratch.histScan},
                                         {"count_ptr", scratch.count}},
                                        stream));
    keysFrom = keysTo;
    valsFrom = valsTo;
  }
  return Status::success();
}

// Where the block sort's buffers sit in its scratch (two key buffers, the
// values between passes, the radix counts and their scan, each at a 16-byte
// boundary), and the scratch's size.
struct BlockSortLayout {
  int64_t keysA, keysB, values, hist, histScan, bytes;
};
inline BlockSortLayout getBlockSortLayout(int64_t blocks) {
  auto aligned = [](int64_t bytes) { return cdiv(bytes, 16) * 16; };
  int64_t programs = radixProgramsUpTo(blocks);
  int64_t keyBytes = aligned(4 * blocks);
  BlockSortLayout layout;
  layout.keysA = 0;
  layout.keysB = keyBytes;
  layout.values = 2 * keyBytes;
  layout.hist = 3 * keyBytes;
  layout.histScan = layout.hist + aligned(digitCountBytes(programs));
  layout.bytes = layout.histScan + digitScanBytes(programs);
  return layout;
}

// The precompile list's calls of radixSort over `n` keys (`positions`: its
// values are the keys' positions).
inline void appendRadixCalls(std::vector<std::pair<std::string, Call>> &calls,
                             int64_t n, int passes, bool positions = true) {
  for (int pass = 0; pass < passes; ++pass) {
    calls.emplace_back("radix_histogram", digitsCall(n, pass));
    calls.emplace_back("exclusive_scan", digitScanCall(radixPrograms(n)));
    calls.emplace_back("radix_scatter", scatterCall(n, pass, positions));
  }
}

// A strided convolution's largest stride, padding and dilation per axis:
// far from 32-bit overflow in its candidates' arithmetic (x + padding,
// kernel * dilation).
inline constexpr int kMaxStridedStep = 1 << 16;

// The launches that sort one map's rows of `g`'s offsets by key and
// transpose it (a strided build's maps, both ways), for the precompile lists
// and the build.
void appendSortedMapCalls(std::vector<std::pair<std::string, Call>> &calls,
                          int64_t rows, const ConvGeometry &g);
// Every launch of a strided build over `n` input voxels of `inputShape`
// (its output grid `outputShape`, `batches` batches) that its first build
// precompiles: the candidates, their sort, the outputs' counts and
// coordinates, then both maps' sorts (appendSortedMapCalls of the input's
// rows; the outputs' rows come at their count). The grids only key the
// kernels: any grid plans the cubins the geometry's builds load.
std::vector<std::pair<std::string, Call>>
stridedBuildCalls(int64_t n, const ConvGeometry &g,
                  const std::array<int64_t, 3> &inputShape,
                  const std::array<int64_t, 3> &outputShape, int64_t batches);

// A region of the engine's scratch buffer: one build's temporaries live
// there, so that a build allocates only the maps it returns.
class Region {
public:
  Region(const rt::Context &context, CUdeviceptr address, size_t bytes)
      : driver(&context.driver()), address(address), bytes(bytes) {}
  rt::DevicePtr ptr() const { return rt::DevicePtr{address}; }
  size_t size() const { return bytes; }
  Status memset8(uint8_t value) const {
    return driver->check(driver->api().cuMemsetD8(address, value, bytes),
                         "cuMemsetD8");
  }
  Status memset8Async(uint8_t value, CUstream stream) const {
    return driver->check(
        driver->api().cuMemsetD8Async(address, value, bytes, stream),
        "cuMemsetD8Async");
  }
  Status copyToHost(void *destination, size_t count) const {
    return driver->check(
        driver->api().cuMemcpyDtoH(destination, address, count),
        "cuMemcpyDtoH");
  }
  Status copyToHostAsync(void *destination, size_t count,
                         CUstream stream) const {
    return driver->check(
        driver->api().cuMemcpyDtoHAsync(destination, address, count, stream),
        "cuMemcpyDtoHAsync");
  }

private:
  const rt::Driver *driver;
  CUdeviceptr address;
  size_t bytes;
};

// Where parts of `sizes` bytes go in one allocation, laid end to end, each
// at a 256-byte boundary and given at least 16 bytes (a kernel gets a valid
// address even for an empty part); `total` is the allocation's size.
inline std::vector<int64_t> packedOffsets(const std::vector<int64_t> &sizes,
                                          int64_t &total) {
  std::vector<int64_t> offsets;
  total = 0;
  for (int64_t size : sizes) {
    offsets.push_back(total);
    total += cdiv(std::max<int64_t>(size, 16), 256) * 256;
  }
  return offsets;
}

// Carves regions of `sizes` bytes (packedOffsets) from one scratch buffer
// of the engine.
inline Result<std::vector<Region>> carve(SparseEngine &engine,
                                         const std::vector<int64_t> &sizes) {
  int64_t total = 0;
  std::vector<int64_t> offsets = packedOffsets(sizes, total);
  Result<rt::DevicePtr> base = engine.scratch(static_cast<size_t>(total));
  if (!base)
    return base.status();
  std::vector<Region> regions;
  for (size_t i = 0; i < sizes.size(); ++i)
    regions.emplace_back(engine.context(), base->address + offsets[i],
                         static_cast<size_t>(sizes[i]));
  return regions;
}

// Where a row block size's lists sit in one allocation (packedOffsets):
// each block's count of offsets (blk_count), the lists at their largest,
// block b's at b * V (every block visiting every offset: no count has to
// come back to the host first, and no scan of the counts places them),
// blk_order, the block sort's scratch, and two count words (the rows', the
// blocks').
struct BlockListLayout {
  int64_t blkOff, blkOrder, sortScratch, countWords, bytes;
};
inline BlockListLayout getBlockListLayout(int64_t blocks, int64_t v) {
  BlockListLayout layout;
  std::vector<int64_t> offsets =
      packedOffsets({4 * blocks, 4 * blocks * v, 4 * blocks,
                     getBlockSortLayout(blocks).bytes, 16},
                    layout.bytes);
  layout.blkOff = offsets[1];
  layout.blkOrder = offsets[2];
  layout.sortScratch = offsets[3];
  layout.countWords = offsets[4];
  return layout;
}
struct BlockListBuffers {
  rt::DevicePtr blkCount, blkOff, blkOrder, sortScratch;
  // Words holding the rows' count (the caller's to set) and the blocks'
  // (block_offsets writes it).
  rt::DevicePtr rowsCount, blocksCount;
};
inline BlockListBuffers blockListBuffers(CUdeviceptr base,
                                         const BlockListLayout &layout) {
  auto at = [base](int64_t offset) { return rt::DevicePtr{base + offset}; };
  return {at(0),
          at(layout.blkOff),
          at(layout.blkOrder),
          at(layout.sortScratch),
          at(layout.countWords),
          at(layout.countWords + 4)};
}

// Queues the lists of the row blocks of `blockRows` over the first
// *rowsCount of `rows` sorted rows (rows sizes the grids: a recorded build
// runs its capacity's blocks, the ones past the count empty): each block's
// count and offsets (block_offsets) and the blocks sorted by their count of
// offsets, stably (blocks past the count have none and sort first). `rowMasks`
// are the rows' masks (neighbour_transpose's).
Status queueBlockLists(SparseEngine &engine, rt::DevicePtr rowMasks,
                       rt::DevicePtr rowsCount, int64_t rows, int64_t v,
                       int64_t blockRows, const BlockListBuffers &lists,
                       CUstream stream);

// The sizes a build of a sorted map queues its kernels for: `capacity`
// voxels (the grids and buffers; the live count is read from a device
// word), the table's slots, the window and the cover rounds.
struct MapBuildShape {
  int64_t capacity = 0;
  int log2Slots = 1;
  Window window;
  int coverRounds = 0;
};
// The temporaries of a build, in this order (mapRegionBytes): the live
// voxel count (a word), the table's statistics (the longest probe sequence
// and the insert's status, then the pair count at byte 16), the insert's
// statuses, the table's keys and values, the neighbour map in voxel order,
// the sort keys, the radix sort's counts, their scan and its ping-pong
// buffers, and the cover rounds' group unions and scores, covering groups
// and sort values.
enum MapRegion {
  kCount,
  kStats,
  kStatuses,
  kKeys,
  kVals,
  kNb,
  kSortKeys,
  kHist,
  kHistScan,
  kKeysOut,
  kValsIn,
  kKeysB,
  kUnions,
  kScores,
  kCover,
  kCoverValues
};
std::vector<int64_t> mapRegionBytes(const MapBuildShape &shape);
// The table's slots (a power of two) for `n` voxels.
int log2TableSlots(int64_t n);
// The table a build of `n` voxels starts with on `engine`: log2TableSlots,
// less the engine's shrink for tests (SparseEngine::setTableShrinkForTesting).
int startingLog2Slots(const SparseEngine &engine, int64_t n);
// The cover rounds of a build (`lean`): none for one group, which has
// nowhere to move its rows to.
int coverRoundsOf(int64_t n, bool lean);
// The statistics' words (kStats), as the host reads them.
struct MapBuildStats {
  int32_t probes[2];
  int32_t unused[2];
  int64_t pairs;
};
// neighbour_keys' pairs_ptr is 16-byte aligned.
static_assert(offsetof(MapBuildStats, pairs) == 16);
// A deferred check copies them to the engine's page-locked memory.
static_assert(sizeof(MapBuildStats) <= SparseEngine::kDeferredStatsBytes);
// voxel_hash_insert's statuses.
enum InsertStatus {
  kInserted = 0,
  kDuplicate = 1,
  kTableFull = 2,
  kOutOfRange = 3
};
// Where a build writes its sorted map (SortedNeighbourMap's order, nbt and
// rowMasks).
struct MapOutputs {
  rt::DevicePtr order, nbt, rowMasks;
};
// Queues a build of the sorted map of the first *regions[kCount] voxels at
// `coords` into `map`: the table, the lookups,
// the sort keys, the rows' sort, the cover rounds and the transpose (every
// memset through the engine, so that a recording takes them too).
Status queueMapKernels(SparseEngine &engine, const MapBuildShape &shape,
                       const std::vector<Region> &regions, rt::DevicePtr coords,
                       const MapOutputs &map, CUstream stream);
// The first voxel whose insertion failed, said with its coordinates.
Status describeInsertError(const Region &statuses, int64_t voxels,
                           rt::DevicePtr coords, const rt::Context &context);
// What a build's statistics say: the table took every voxel (true), a
// probe sequence outgrew the insert's bound (false: build again with a
// larger table), or the error of a duplicate voxel or a coordinate out of
// range (describeInsertError).
Result<bool> checkMapBuild(const MapBuildStats &stats, const Region &statuses,
                           int64_t voxels, rt::DevicePtr coords,
                           const rt::Context &context);
// Copies the build's statistics behind it (SparseEngine::checkedStats),
// waits for `stream`, then checkMapBuild of the build whose temporaries are
// `regions` (mapRegionBytes' order); where the table took every voxel, the
// pair count is set in `map`.
Result<bool> waitAndCheckMapBuild(SparseEngine &engine,
                                  const std::vector<Region> &regions,
                                  int64_t voxels, rt::DevicePtr coords,
                                  CUstream stream, SortedNeighbourMap &map);
// Queues the copy of a build's statistics (`stats`, in the scratch) to
// `deferred`'s host memory behind the build and records its event: the
// check of the build waits for that event, not for the stream.
Status queueStatsCopy(const Region &stats,
                      const SparseEngine::DeferredCheck &deferred,
                      CUstream stream);

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_MAPBUILD_H
