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
// Strides, paddings and dilations stay far from 32-bit overflow in the
// candidates' arithmetic (x + padding, kernel * dilation).
constexpr int kMaxStep = 1 << 16;
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
      if (value > kMaxStep)
        return invalid(std::string("the ") + name + " is " +
                       std::to_string(value) + " along " +
                       std::string(1, "xyz"[axis]) + "; at most 65536");
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

#define TRY_ASSIGN(name, expression)                                           \
  auto name##OrError = (expression);                                           \
  if (!name##OrError)                                                          \
    return name##OrError.status();                                             \
  auto name = std::move(*name##OrError)
#define TRY(expression)                                                        \
  if (Status status = (expression); !status.ok())                              \
  return status

Result<const StridedMaps *>
SparseTensor::strided(const ConvGeometry &geometry,
                      const std::array<int64_t, 3> &spatialShape,
                      int64_t batches, CUstream stream) {
  TRY_ASSIGN(entry, stridedEntry(geometry, spatialShape, batches, stream));
  return &entry->maps;
}

Result<SparseTensor::StridedEntry *>
SparseTensor::stridedEntry(const ConvGeometry &geometry,
                           const std::array<int64_t, 3> &spatialShape,
                           int64_t batches, CUstream stream) {
  auto key = std::make_tuple(geometry, spatialShape, batches);
  if (auto found = strided_.find(key); found != strided_.end())
    return found->second.get();
  noteStream(stream);
  TRY_ASSIGN(entry, buildStrided(geometry, spatialShape, batches, stream));
  return (strided_[key] = std::move(entry)).get();
}

namespace {

// A sorted map of `rows` rows of `v` offsets: order, then nbt, in one
// allocation of the engine's pool.
Result<std::shared_ptr<SortedNeighbourMap>>
allocateSortedMap(SparseEngine &engine, int64_t rows, int64_t v, int64_t pairs,
                  CUstream stream) {
  int64_t bytes = 0;
  std::vector<int64_t> offsets = packedOffsets({4 * rows, 4 * rows * v}, bytes);
  TRY_ASSIGN(storage, engine.allocateMaps(bytes, stream));
  rt::DevicePtr order = storage.ptr();
  rt::DevicePtr nbt{storage.address() + offsets[1]};
  // A strided map has no single kernel size or dilation (its geometry says
  // what it is).
  return std::make_shared<SortedNeighbourMap>(
      SortedNeighbourMap{rows, v, /*kernelSize=*/0, /*dilation=*/0, pairs,
                         order, nbt, std::move(storage)});
}

Status memsetAsync(const rt::Context &context, CUdeviceptr address,
                   uint8_t value, size_t bytes, CUstream stream) {
  const rt::Driver &driver = context.driver();
  return driver.check(
      driver.api().cuMemsetD8Async(address, value, bytes, stream),
      "cuMemsetD8Async");
}

// The launches that sort one map's rows by key and transpose it, for the
// precompile list and the build.
void appendSortedMapCalls(std::vector<std::pair<std::string, Call>> &calls,
                          int64_t rows, const ConvGeometry &g) {
  int64_t v = g.offsets();
  calls.emplace_back("neighbour_keys", keysCall(rows, g.kernel, v));
  appendRadixCalls(calls, rows, radixPasses(v));
  calls.emplace_back("neighbour_transpose", transposeCall(rows, v));
  for (int64_t blockRows : convRowBlocks()) {
    int64_t blocks = cdiv(rows, blockRows);
    for (int fill : {0, 1}) {
      calls.emplace_back("block_offsets",
                         blockListCall(rows, v, blockRows, fill));
      calls.emplace_back("exclusive_scan", scanCall(blocks));
    }
    appendRadixCalls(calls, blocks, blockSortPasses(v));
  }
}

} // namespace

Result<std::unique_ptr<SparseTensor::StridedEntry>>
SparseTensor::buildStrided(const ConvGeometry &g,
                           const std::array<int64_t, 3> &spatialShape,
                           int64_t batches, CUstream stream) {
  const rt::Context &context = engine_->context();
  int64_t n = voxels_;
  TRY_ASSIGN(outShape, checkStrided(g, spatialShape, batches, n));
  auto entry = std::make_unique<StridedEntry>();
  StridedMaps &maps = entry->maps;
  maps.geometry = g;
  maps.inputShape = spatialShape;
  maps.outputShape = outShape;
  maps.batches = batches;
  maps.inputs = n;
  int64_t v = g.offsets(), c = g.candidatesPerVoxel();
  int64_t candidates = n * c;
  int64_t cells = batches * outShape[0] * outShape[1] * outShape[2];

  // The candidates, sorted (the values after the last pass in kSortedVals,
  // the keys in kKeysA or kKeysB), the radix counts, the statistics (the
  // status at 0, the pair count at 16, neighbour_keys' unused counts at 32:
  // 16-byte aligned, as the kernels declare)
  // and the outputs' counts per program and their scan, in the engine's
  // scratch. The maps' row sorts reuse kCandKeys for their keys and the
  // radix buffers (a map has at most `candidates` rows).
  int64_t radixPrograms = cdiv(candidates, kRadixPerProgram);
  int64_t outputPrograms = cdiv(candidates, kOutputBlock);
  enum {
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
    kScan
  };
  TRY_ASSIGN(regions,
             carve(*engine_, {4 * candidates, 4 * candidates, 4 * candidates,
                              4 * candidates, 4 * candidates, 4 * candidates,
                              digitCountBytes(radixPrograms),
                              digitScanBytes(radixPrograms), 48,
                              4 * outputPrograms, 4 * (outputPrograms + 1)}));
  auto at = [&](int region) { return regions[region].ptr(); };
  rt::DevicePtr stats = at(kStats);
  rt::DevicePtr pairCount{stats.address + 16}, unusedCount{stats.address + 32};
  int sortPasses = radixPassesOver(ceilLog2(cells + 1));
  rt::DevicePtr sortedKeys =
      (sortPasses - 1) % 2 == 0 ? at(kKeysA) : at(kKeysB);
  RadixScratch radix{at(kKeysA), at(kKeysB), at(kValsTmp), at(kHist),
                     at(kHistScan)};

  if (n > 0) {
    std::string signature = "strided|" + g.str() + "|" + countFacts(n) + "|" +
                            countFacts(candidates) + "|" +
                            std::to_string(sortPasses);
    if (engine_->firstUseOf(signature)) {
      std::vector<std::pair<std::string, Call>> calls = {
          {"strided_candidates",
           candidatesCall(n, g, spatialShape, outShape, batches)},
          {"output_voxels", outputsCall(candidates, v, outShape, batches, 0)},
          {"exclusive_scan", scanCall(outputPrograms)},
          {"output_voxels", outputsCall(candidates, v, outShape, batches, 1)}};
      appendRadixCalls(calls, candidates, sortPasses, /*positions=*/false);
      appendSortedMapCalls(calls, n, g);
      engine_->precompile(calls);
    }
    auto queueCounts = [&]() -> Status {
      TRY(regions[kStats].memset8Async(0, stream));
      TRY(engine_->launch("strided_candidates",
                          candidatesCall(n, g, spatialShape, outShape, batches),
                          {{"coords_ptr", coords_},
                           {"cand_key_ptr", at(kCandKeys)},
                           {"cand_val_ptr", at(kCandVals)},
                           {"status_ptr", stats}},
                          stream));
      TRY(radixSort(*engine_, at(kCandKeys), candidates, sortPasses,
                    at(kSortedVals), radix, stream, at(kCandVals)));
      // FILL = 0 writes the counts and the pair count only; the maps' names
      // point at buffers it does not write.
      TRY(engine_->launch("output_voxels",
                          outputsCall(candidates, v, outShape, batches, 0),
                          {{"keys_ptr", sortedKeys},
                           {"vals_ptr", at(kSortedVals)},
                           {"counts_ptr", at(kCounts)},
                           {"scan_ptr", at(kScan)},
                           {"out_coords_ptr", at(kScan)},
                           {"nb_ptr", at(kScan)},
                           {"nbi_ptr", at(kScan)},
                           {"pairs_ptr", pairCount},
                           {"status_ptr", stats}},
                          stream));
      TRY(engine_->launch("exclusive_scan", scanCall(outputPrograms),
                          {{"in_ptr", at(kCounts)}, {"out_ptr", at(kScan)}},
                          stream));
      return Status::success();
    };
    // As below: nothing queued outlives a failed build.
    Status queued = queueCounts();
    Status done = engine_->synchronize(stream);
    TRY(queued);
    TRY(done);
  }
  struct {
    int32_t status;
    int32_t unused[3];
    int64_t pairs;
  } counts{};
  static_assert(offsetof(decltype(counts), pairs) == 16);
  int32_t outputs = 0;
  if (n > 0) {
    TRY(regions[kStats].copyToHost(&counts, sizeof(counts)));
    const rt::Driver &driver = context.driver();
    TRY(driver.check(driver.api().cuMemcpyDtoH(
                         &outputs, at(kScan).address + 4 * outputPrograms, 4),
                     "cuMemcpyDtoH"));
  }
  if (counts.status == kOutsideGrid)
    return Status::error(
        ErrorKind::InvalidInput,
        "strided convolution: a voxel lies outside the grid of " +
            std::to_string(batches) + " batches x " +
            std::to_string(spatialShape[0]) + " x " +
            std::to_string(spatialShape[1]) + " x " +
            std::to_string(spatialShape[2]) +
            " (batch and coordinates from 0 up to these)");
  if (int64_t(outputs) * v >= (int64_t(1) << 31))
    return invalid(std::to_string(outputs) + " outputs of " +
                   std::to_string(v) +
                   " offsets each: the map's offsets are 32-bit");
  maps.outputs = outputs;

  // A kernel gets a valid address even for no output.
  TRY_ASSIGN(coords, engine_->allocateMaps(
                         std::max<size_t>(16, 16 * size_t(outputs)), stream));
  maps.outCoords = coords.ptr();
  maps.coordsStorage = std::move(coords);
  TRY_ASSIGN(down,
             allocateSortedMap(*engine_, outputs, v, counts.pairs, stream));
  TRY_ASSIGN(up, allocateSortedMap(*engine_, n, v, counts.pairs, stream));
  maps.down = down;
  maps.up = up;
  if (n == 0)
    return entry;

  // Both maps in voxel order, all -1 first, then written from the sorted
  // candidates; they live until the transposes that read them are done.
  TRY_ASSIGN(nb, engine_->allocateMaps(
                     std::max<size_t>(16, 4 * size_t(outputs) * v), stream));
  TRY_ASSIGN(nbi, engine_->allocateMaps(4 * size_t(n) * v, stream));
  if (outputs > 0 && engine_->firstUseOf("strided-rows|" + g.str() + "|" +
                                         countFacts(outputs))) {
    std::vector<std::pair<std::string, Call>> calls;
    appendSortedMapCalls(calls, outputs, g);
    engine_->precompile(calls);
  }
  auto queueMaps = [&]() -> Status {
    TRY(memsetAsync(context, nb.address(), 0xFF, nb.size(), stream));
    TRY(memsetAsync(context, nbi.address(), 0xFF, nbi.size(), stream));
    TRY(engine_->launch("output_voxels",
                        outputsCall(candidates, v, outShape, batches, 1),
                        {{"keys_ptr", sortedKeys},
                         {"vals_ptr", at(kSortedVals)},
                         {"counts_ptr", at(kCounts)},
                         {"scan_ptr", at(kScan)},
                         {"out_coords_ptr", maps.outCoords},
                         {"nb_ptr", nb.ptr()},
                         {"nbi_ptr", nbi.ptr()},
                         {"pairs_ptr", unusedCount},
                         {"status_ptr", stats}},
                        stream));
    std::pair<SortedNeighbourMap *, const rt::PoolBuffer *> sorts[] = {
        {down.get(), &nb}, {up.get(), &nbi}};
    for (auto [map, unsorted] : sorts) {
      int64_t rows = map->voxels;
      if (rows == 0)
        continue;
      TRY(engine_->launch("neighbour_keys", keysCall(rows, g.kernel, v),
                          {{"nb_ptr", unsorted->ptr()},
                           {"sort_key_ptr", at(kCandKeys)},
                           {"pairs_ptr", unusedCount}},
                          stream));
      TRY(radixSort(*engine_, at(kCandKeys), rows, radixPasses(v), map->order,
                    radix, stream));
      TRY(engine_->launch("neighbour_transpose", transposeCall(rows, v),
                          {{"nb_ptr", unsorted->ptr()},
                           {"order_ptr", map->order},
                           {"nbt_ptr", map->nbt}},
                          stream));
    }
    return Status::success();
  };
  Status queued = queueMaps();
  // The scratch is the next build's once the stream is done with it, and
  // nothing queued may outlive the buffers it uses (freed on return on the
  // legacy stream, which a non-blocking stream does not wait for): the
  // stream is waited for on failure too.
  Status done = engine_->synchronize(stream);
  TRY(queued);
  TRY(done);
  nb.releaseOn(stream);
  nbi.releaseOn(stream);
  TRY(regions[kStats].copyToHost(&counts, sizeof(counts)));
  if (counts.status == kDuplicateVoxel)
    return Status::error(ErrorKind::InvalidInput,
                         "strided convolution: two voxels of the tensor are "
                         "the same; a sparse tensor holds each voxel once");
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
  TRY_ASSIGN(lists, buildBlockLists(up ? entry.maps.up : entry.maps.down,
                                    blockRows, stream));
  return (entry.lists[key] = std::move(lists)).get();
}

Result<const OffsetPairs *>
SparseTensor::stridedPairs(StridedEntry &entry, bool up, CUstream stream) {
  if (auto found = entry.pairs.find(up); found != entry.pairs.end())
    return found->second.get();
  noteStream(stream);
  TRY_ASSIGN(pairs,
             buildOffsetPairs(up ? entry.maps.up : entry.maps.down, stream));
  return (entry.pairs[up] = std::move(pairs)).get();
}

#undef TRY
#undef TRY_ASSIGN

} // namespace tilec::sparse
