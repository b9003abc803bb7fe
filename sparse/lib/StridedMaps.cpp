//===- StridedMaps.cpp - A strided convolution's outputs and maps ---------===//
//
// SparseTensor::strided (docs/sparse-conv.md, "Strided and inverse
// convolutions"), on the GPU: every input voxel's candidate output cells
// (strided_candidates), a stable radix sort of the candidates by cell that
// carries their values, the outputs counted per program (output_voxels with
// FILL = 0, then exclusive_scan), one synchronization for the count, the
// outputs' coordinates and both maps written (output_voxels with FILL = 1),
// and each map's rows sorted by the Gray key of their offsets and
// transposed, as a submanifold map is (neighbour_keys, the radix sort,
// neighbour_transpose). Every step is deterministic: the same voxels give
// the same outputs, in the same order, and the same maps in every process.
//
//===----------------------------------------------------------------------===//

#include "MapBuild.h"
#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

#include <cstddef>

namespace tilec::sparse {
namespace {

// output_voxels' candidates a program.
constexpr int64_t kOutputBlock = 1024;
// Kernel extents a strided convolution takes per axis (the submanifold
// convolution's bound).
constexpr int kMaxKernelExtent = 7;
// Candidates a voxel may have: strided_candidates holds a voxel's in a tile
// row (a 7^3 kernel of stride 1 has 343; a dilation past the stride
// multiplies them).
constexpr int64_t kMaxCandidates = 343;
// strided_candidates' and output_voxels' statuses.
enum StridedStatus { kStridedOk = 0, kOutsideGrid = 1, kDuplicateVoxel = 2 };

Call candidatesCall(int64_t n, const ConvGeometry &g,
                    const std::array<int64_t, 3> &inputShape,
                    const std::array<int64_t, 3> &outputShape,
                    int64_t batches) {
  std::map<std::string, int64_t> sizes = {{"N", n}, {"B", batches}};
  for (int axis = 0; axis < 3; ++axis) {
    std::string name(1, "XYZ"[axis]);
    sizes["K" + name] = g.kernel[axis];
    sizes["S" + name] = g.stride[axis];
    sizes["P" + name] = g.padding[axis];
    sizes["D" + name] = g.dilation[axis];
    sizes["I" + name] = inputShape[axis];
    sizes["O" + name] = outputShape[axis];
  }
  return makeCall(std::move(sizes));
}

Call outputsCall(int64_t candidates, int64_t v,
                 const std::array<int64_t, 3> &outputShape, int64_t batches,
                 int fill) {
  return makeCall({{"N", candidates},
                   {"V", v},
                   {"OX", outputShape[0]},
                   {"OY", outputShape[1]},
                   {"OZ", outputShape[2]},
                   {"B", batches}},
                  {{"BLOCK", kOutputBlock}, {"FILL", fill}});
}

// The cells of `batches` output grids of `outputShape`: the candidates'
// keys.
int64_t outputCells(const std::array<int64_t, 3> &outputShape,
                    int64_t batches) {
  return batches * outputShape[0] * outputShape[1] * outputShape[2];
}

// The candidates' sort: a digit a pass over their keys' bits.
int candidateSortPasses(const std::array<int64_t, 3> &outputShape,
                        int64_t batches) {
  return radixPassesOver(ceilLog2(outputCells(outputShape, batches) + 1));
}

Status invalid(const std::string &why) {
  return Status::error(ErrorKind::InvalidArgument,
                       "strided convolution: " + why);
}

// The geometry, grid and batch count checked against what the kernels
// take; the output grid.
Result<std::array<int64_t, 3>> checkStrided(const ConvGeometry &g,
                                            const std::array<int64_t, 3> &shape,
                                            int64_t batches, int64_t voxels) {
  for (int axis = 0; axis < 3; ++axis) {
    for (auto [name, value] : {std::pair{"stride", g.stride[axis]},
                               std::pair{"padding", g.padding[axis]},
                               std::pair{"dilation", g.dilation[axis]}})
      if (value > kMaxStridedStep)
        return invalid(std::string("the ") + name + " is " +
                       std::to_string(value) + " along " +
                       std::string(1, "xyz"[axis]) + "; at most " +
                       std::to_string(kMaxStridedStep));
    if (g.kernel[axis] > kMaxKernelExtent)
      return invalid("the kernel is " + std::to_string(g.kernel[axis]) +
                     " voxels along " + std::string(1, "xyz"[axis]) +
                     "; at most " + std::to_string(kMaxKernelExtent));
    if (shape[axis] > (int64_t(1) << 16))
      return invalid("the grid is " + std::to_string(shape[axis]) +
                     " voxels along " + std::string(1, "xyz"[axis]) +
                     "; coordinates are below 65536");
  }
  Result<std::array<int64_t, 3>> out = g.outputShape(shape);
  if (!out)
    return invalid(out.message());
  if (batches < 1 || batches > (int64_t(1) << 16))
    return invalid("the batch count is " + std::to_string(batches) +
                   "; from 1 to 65536");
  int64_t cells = batches;
  for (int64_t extent : *out) {
    cells *= extent;
    if (cells >= (int64_t(1) << 31) - 1)
      return invalid(
          "the output grid of " + g.str() + " has " + std::to_string(batches) +
          " x " + std::to_string((*out)[0]) + " x " +
          std::to_string((*out)[1]) + " x " + std::to_string((*out)[2]) +
          " cells; at most 2^31 - 2 (32-bit keys)");
  }
  if (g.candidatesPerVoxel() > kMaxCandidates)
    return invalid(g.str() + " gives each voxel " +
                   std::to_string(g.candidatesPerVoxel()) +
                   " candidate outputs; at most " +
                   std::to_string(kMaxCandidates) +
                   " (a smaller dilation or a larger stride)");
  if (4 * voxels * std::max(g.candidatesPerVoxel(), g.offsets()) >=
      (int64_t(1) << 31))
    return invalid(std::to_string(voxels) + " voxels of " +
                   std::to_string(g.candidatesPerVoxel()) + " candidates and " +
                   std::to_string(g.offsets()) +
                   " offsets each: the candidates' and maps' offsets are "
                   "32-bit");
  return *out;
}

} // namespace

Result<const StridedMaps *>
SparseTensor::strided(const ConvGeometry &geometry,
                      const std::array<int64_t, 3> &spatialShape,
                      int64_t batches, CUstream stream) {
  TILEC_ASSIGN_OR_RETURN(entry,
                         stridedEntry(geometry, spatialShape, batches, stream));
  return &entry->maps;
}

Result<SparseTensor::StridedEntry *>
SparseTensor::stridedEntry(const ConvGeometry &geometry,
                           const std::array<int64_t, 3> &spatialShape,
                           int64_t batches, CUstream stream) {
  // Whoever asks on `stream` may read the maps there (the C API copies the
  // outputs' coordinates on it): their frees wait for it.
  noteStream(stream);
  auto key = std::make_tuple(geometry, spatialShape, batches);
  if (auto found = strided_.find(key); found != strided_.end())
    return found->second.get();
  TILEC_ASSIGN_OR_RETURN(entry,
                         buildStrided(geometry, spatialShape, batches, stream));
  return (strided_[key] = std::move(entry)).get();
}

std::vector<std::pair<std::string, Call>>
stridedBuildCalls(int64_t n, const ConvGeometry &g,
                  const std::array<int64_t, 3> &inputShape,
                  const std::array<int64_t, 3> &outputShape, int64_t batches) {
  int64_t candidates = n * g.candidatesPerVoxel();
  std::vector<std::pair<std::string, Call>> calls = {
      {"strided_candidates",
       candidatesCall(n, g, inputShape, outputShape, batches)},
      {"output_voxels",
       outputsCall(candidates, g.offsets(), outputShape, batches, 0)},
      {"exclusive_scan", scanCall(cdiv(candidates, kOutputBlock))},
      {"output_voxels",
       outputsCall(candidates, g.offsets(), outputShape, batches, 1)}};
  appendRadixCalls(calls, candidates, candidateSortPasses(outputShape, batches),
                   /*positions=*/false);
  appendSortedMapCalls(calls, n, g);
  return calls;
}

void appendSortedMapCalls(std::vector<std::pair<std::string, Call>> &calls,
                          int64_t rows, const ConvGeometry &g) {
  int64_t v = g.offsets();
  calls.emplace_back("neighbour_keys", keysCall(rows, g.kernel, v));
  appendRadixCalls(calls, rows, radixPasses(v));
  calls.emplace_back("neighbour_transpose", transposeCall(rows, v));
  for (int64_t blockRows : convRowBlocks(rows)) {
    calls.emplace_back("block_offsets", blockListCall(rows, v, blockRows));
    appendRadixCalls(calls, cdiv(rows, blockRows), blockSortPasses(v));
  }
}

namespace {

// Where a build's temporaries sit in the engine's scratch: the candidates,
// sorted (the values after the last pass in kSortedVals, the keys in kKeysA
// or kKeysB), the radix counts, the statistics (the status at 0, the pair
// count at 16, neighbour_keys' unused counts at 32: 16-byte aligned, as the
// kernels declare), the outputs' counts per program and their scan, and the
// word the sorts and the map kernels read their live count from (set to
// the whole count before each: these builds are not recorded). The
// maps' row sorts reuse kCandKeys for their keys and the radix buffers (a
// map has at most as many rows as there are candidates).
enum StridedRegion {
  kCandKeys,
  kCandVals,
  kKeysA,
  kKeysB,
  kValsTmp,
  kSortedVals,
  kHist,
  kHistScan,
  kStats,
  kCounts,
  kScan,
  kCountWord
};

// The statistics' words (kStats), as the host reads them.
struct StridedStats {
  int32_t status;
  int32_t unused[3];
  int64_t pairs;
};
static_assert(offsetof(StridedStats, pairs) == 16);

// One build of a strided convolution's maps over `coords` (the file
// comment's steps): its sizes, its scratch, and its two phases, each ended
// by a synchronization of the stream (also on failure: nothing queued may
// outlive the buffers it uses, which a failed build frees on the legacy
// stream, and the scratch is the next build's).
class StridedBuild {
public:
  StridedBuild(SparseEngine &engine, rt::DevicePtr coords, StridedMaps &maps,
               CUstream stream)
      : engine(engine), coords(coords), maps(maps), g(maps.geometry),
        stream(stream), n(maps.inputs), v(g.offsets()),
        candidates(n * g.candidatesPerVoxel()),
        outputPrograms(cdiv(candidates, kOutputBlock)),
        sortPasses(candidateSortPasses(maps.outputShape, maps.batches)) {}

  // Carves the scratch; precompiles the first build of these buckets.
  Status prepare() {
    int64_t sortPrograms = radixProgramsUpTo(candidates);
    int64_t c4 = 4 * candidates;
    Result<std::vector<Region>> carved =
        carve(engine, {c4, c4, c4, c4, c4, c4, digitCountBytes(sortPrograms),
                       digitScanBytes(sortPrograms), 48, 4 * outputPrograms,
                       4 * (outputPrograms + 1), 16});
    if (!carved)
      return carved.status();
    regions = std::move(*carved);
    if (n > 0 && engine.firstUseOf("strided|" + g.str() + "|" + countFacts(n) +
                                   "|" + countFacts(candidates) + "|" +
                                   std::to_string(sortPasses)))
      engine.precompile(stridedBuildCalls(n, g, maps.inputShape,
                                          maps.outputShape, maps.batches));
    return Status::success();
  }

  // Phase 1: the candidates, their sort, the outputs counted; the counts
  // and statistics back on the host.
  Status countOutputs() {
    if (n == 0)
      return Status::success();
    Status queued = queueCounts();
    Status done = engine.synchronize(stream);
    TILEC_RETURN_IF_ERROR(queued);
    TILEC_RETURN_IF_ERROR(done);
    TILEC_RETURN_IF_ERROR(regions[kStats].copyToHost(&stats, sizeof(stats)));
    int32_t outputs = 0;
    const rt::Driver &driver = engine.context().driver();
    TILEC_RETURN_IF_ERROR(
        driver.check(driver.api().cuMemcpyDtoH(
                         &outputs, at(kScan).address + 4 * outputPrograms, 4),
                     "cuMemcpyDtoH"));
    if (stats.status == kOutsideGrid)
      return Status::error(
          ErrorKind::InvalidInput,
          "strided convolution: a voxel lies outside the grid of " +
              std::to_string(maps.batches) + " batches x " +
              std::to_string(maps.inputShape[0]) + " x " +
              std::to_string(maps.inputShape[1]) + " x " +
              std::to_string(maps.inputShape[2]) +
              " (batch and coordinates from 0 up to these)");
    if (int64_t(outputs) * v >= (int64_t(1) << 31))
      return invalid(std::to_string(outputs) + " outputs of " +
                     std::to_string(v) +
                     " offsets each: the map's offsets are 32-bit");
    maps.outputs = outputs;
    return Status::success();
  }

  // Phase 2: the outputs' coordinates and both maps, sorted and
  // transposed into their own allocations; a duplicate voxel is an error.
  Status writeMaps() {
    // A kernel gets a valid address even for no output.
    Result<rt::PoolBuffer> coordsStorage = engine.allocateMaps(
        std::max<size_t>(16, 16 * size_t(maps.outputs)), stream);
    if (!coordsStorage)
      return coordsStorage.status();
    maps.outCoords = coordsStorage->ptr();
    maps.coordsStorage = std::move(*coordsStorage);
    Result<std::shared_ptr<SortedNeighbourMap>> down =
        allocateSortedMap(engine, maps.outputs, v, stats.pairs, stream);
    if (!down)
      return down.status();
    Result<std::shared_ptr<SortedNeighbourMap>> up =
        allocateSortedMap(engine, n, v, stats.pairs, stream);
    if (!up)
      return up.status();
    maps.down = *down;
    maps.up = *up;
    if (n == 0)
      return Status::success();
    // Both maps in voxel order, all -1 first, then written from the sorted
    // candidates; they live until the transposes that read them are done.
    Result<rt::PoolBuffer> nb = engine.allocateMaps(
        std::max<size_t>(16, 4 * size_t(maps.outputs) * v), stream);
    if (!nb)
      return nb.status();
    Result<rt::PoolBuffer> nbi = engine.allocateMaps(4 * size_t(n) * v, stream);
    if (!nbi)
      return nbi.status();
    if (maps.outputs > 0 && engine.firstUseOf("strided-rows|" + g.str() + "|" +
                                              countFacts(maps.outputs))) {
      std::vector<std::pair<std::string, Call>> calls;
      appendSortedMapCalls(calls, maps.outputs, g);
      engine.precompile(calls);
    }
    Status queued = queueMaps(*nb, *nbi, **down, **up);
    Status done = engine.synchronize(stream);
    TILEC_RETURN_IF_ERROR(queued);
    TILEC_RETURN_IF_ERROR(done);
    nb->releaseOn(stream);
    nbi->releaseOn(stream);
    TILEC_RETURN_IF_ERROR(regions[kStats].copyToHost(&stats, sizeof(stats)));
    if (stats.status == kDuplicateVoxel)
      return Status::error(ErrorKind::InvalidInput,
                           "strided convolution: two voxels of the tensor are "
                           "the same; a sparse tensor holds each voxel once");
    return Status::success();
  }

private:
  rt::DevicePtr at(StridedRegion region) const { return regions[region].ptr(); }
  rt::DevicePtr statsAt(int64_t offset) const {
    return rt::DevicePtr{at(kStats).address + offset};
  }
  rt::DevicePtr sortedKeys() const {
    return (sortPasses - 1) % 2 == 0 ? at(kKeysA) : at(kKeysB);
  }
  RadixScratch radix() const {
    return {at(kKeysA), at(kKeysB),    at(kValsTmp),
            at(kHist),  at(kHistScan), at(kCountWord)};
  }
  // The live count the next sort or map kernel reads.
  Status setCount(int64_t count) {
    return engine.memset(at(kCountWord), static_cast<uint32_t>(count), 4, 1,
                         stream);
  }
  Call stridedCandidatesCall() const {
    return candidatesCall(n, g, maps.inputShape, maps.outputShape,
                          maps.batches);
  }
  Call outputVoxelsCall(int fill) const {
    return outputsCall(candidates, v, maps.outputShape, maps.batches, fill);
  }

  Status queueCounts() {
    TILEC_RETURN_IF_ERROR(regions[kStats].memset8Async(0, stream));
    TILEC_RETURN_IF_ERROR(engine.launch("strided_candidates",
                                        stridedCandidatesCall(),
                                        {{"coords_ptr", coords},
                                         {"cand_key_ptr", at(kCandKeys)},
                                         {"cand_val_ptr", at(kCandVals)},
                                         {"status_ptr", at(kStats)}},
                                        stream));
    TILEC_RETURN_IF_ERROR(setCount(candidates));
    TILEC_RETURN_IF_ERROR(radixSort(engine, at(kCandKeys), candidates,
                                    sortPasses, at(kSortedVals), radix(),
                                    stream, at(kCandVals)));
    // FILL = 0 writes the counts and the pair count only; the maps' names
    // point at buffers it does not write.
    TILEC_RETURN_IF_ERROR(engine.launch("output_voxels", outputVoxelsCall(0),
                                        {{"keys_ptr", sortedKeys()},
                                         {"vals_ptr", at(kSortedVals)},
                                         {"counts_ptr", at(kCounts)},
                                         {"scan_ptr", at(kScan)},
                                         {"out_coords_ptr", at(kScan)},
                                         {"nb_ptr", at(kScan)},
                                         {"nbi_ptr", at(kScan)},
                                         {"pairs_ptr", statsAt(16)},
                                         {"status_ptr", at(kStats)}},
                                        stream));
    return engine.launch("exclusive_scan", scanCall(outputPrograms),
                         {{"in_ptr", at(kCounts)}, {"out_ptr", at(kScan)}},
                         stream);
  }

  Status queueMaps(const rt::PoolBuffer &nb, const rt::PoolBuffer &nbi,
                   const SortedNeighbourMap &down,
                   const SortedNeighbourMap &up) {
    TILEC_RETURN_IF_ERROR(engine.memset(nb.ptr(), 0xFF, 1, nb.size(), stream));
    TILEC_RETURN_IF_ERROR(
        engine.memset(nbi.ptr(), 0xFF, 1, nbi.size(), stream));
    TILEC_RETURN_IF_ERROR(engine.launch("output_voxels", outputVoxelsCall(1),
                                        {{"keys_ptr", sortedKeys()},
                                         {"vals_ptr", at(kSortedVals)},
                                         {"counts_ptr", at(kCounts)},
                                         {"scan_ptr", at(kScan)},
                                         {"out_coords_ptr", maps.outCoords},
                                         {"nb_ptr", nb.ptr()},
                                         {"nbi_ptr", nbi.ptr()},
                                         {"pairs_ptr", statsAt(32)},
                                         {"status_ptr", at(kStats)}},
                                        stream));
    TILEC_RETURN_IF_ERROR(sortRows(nb.ptr(), down));
    return sortRows(nbi.ptr(), up);
  }

  // A map's rows sorted by the Gray key of their offsets, and transposed.
  Status sortRows(rt::DevicePtr unsorted, const SortedNeighbourMap &map) {
    int64_t rows = map.voxels;
    if (rows == 0)
      return Status::success();
    TILEC_RETURN_IF_ERROR(setCount(rows));
    TILEC_RETURN_IF_ERROR(engine.launch("neighbour_keys",
                                        keysCall(rows, g.kernel, v),
                                        {{"nb_ptr", unsorted},
                                         {"sort_key_ptr", at(kCandKeys)},
                                         {"pairs_ptr", statsAt(32)},
                                         {"count_ptr", at(kCountWord)}},
                                        stream));
    TILEC_RETURN_IF_ERROR(radixSort(engine, at(kCandKeys), rows, radixPasses(v),
                                    map.order, radix(), stream));
    return engine.launch("neighbour_transpose", transposeCall(rows, v),
                         {{"nb_ptr", unsorted},
                          {"order_ptr", map.order},
                          {"nbt_ptr", map.nbt},
                          {"row_masks_ptr", map.rowMasks},
                          {"count_ptr", at(kCountWord)}},
                         stream);
  }

  SparseEngine &engine;
  rt::DevicePtr coords;
  StridedMaps &maps;
  const ConvGeometry &g;
  CUstream stream;
  int64_t n, v, candidates, outputPrograms;
  int sortPasses;
  std::vector<Region> regions;
  StridedStats stats{};
};

} // namespace

Result<std::unique_ptr<SparseTensor::StridedEntry>>
SparseTensor::buildStrided(const ConvGeometry &g,
                           const std::array<int64_t, 3> &spatialShape,
                           int64_t batches, CUstream stream) {
  TILEC_ASSIGN_OR_RETURN(outShape,
                         checkStrided(g, spatialShape, batches, voxels_));
  auto entry = std::make_unique<StridedEntry>();
  StridedMaps &maps = entry->maps;
  maps.geometry = g;
  maps.inputShape = spatialShape;
  maps.outputShape = outShape;
  maps.batches = batches;
  maps.inputs = voxels_;
  StridedBuild build(*engine_, coords_, maps, stream);
  TILEC_RETURN_IF_ERROR(build.prepare());
  TILEC_RETURN_IF_ERROR(build.countOutputs());
  TILEC_RETURN_IF_ERROR(build.writeMaps());
  return entry;
}

Result<const NeighbourMaps *> SparseTensor::stridedLists(StridedEntry &entry,
                                                         bool up,
                                                         int64_t blockRows,
                                                         CUstream stream) {
  auto key = std::make_pair(up, blockRows);
  if (auto found = entry.lists.find(key); found != entry.lists.end())
    return found->second.get();
  noteStream(stream);
  TILEC_ASSIGN_OR_RETURN(
      lists,
      buildBlockLists(up ? entry.maps.up : entry.maps.down, blockRows, stream));
  return (entry.lists[key] = std::move(lists)).get();
}

Result<const OffsetPairs *>
SparseTensor::stridedPairs(StridedEntry &entry, bool up, CUstream stream) {
  if (auto found = entry.pairs.find(up); found != entry.pairs.end())
    return found->second.get();
  noteStream(stream);
  TILEC_ASSIGN_OR_RETURN(
      pairs, buildOffsetPairs(up ? entry.maps.up : entry.maps.down, stream));
  return (entry.pairs[up] = std::move(pairs)).get();
}

} // namespace tilec::sparse
