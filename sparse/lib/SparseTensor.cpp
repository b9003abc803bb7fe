//===- SparseTensor.cpp - Neighbour maps built on the GPU -----------------===//
//
// The map kernels of kernels/ in order (docs/sparse-conv.md): the voxel
// hash table (voxel_hash_insert), the neighbour map and sort keys
// (voxel_neighbours), a stable radix sort of the keys (radix_histogram,
// exclusive_scan, radix_scatter; 4 bits a pass), the map in sorted order
// (neighbour_transpose), and the row blocks' offset lists (block_offsets,
// exclusive_scan, block_offsets). Every step is deterministic, so the same
// coordinates give the same maps in every process.
//
//===----------------------------------------------------------------------===//

#include "PreparedConv.h"

#include "tilec/sparse/SparseConv.h"

#include "tilec/runtime/Driver.h"

#include <array>
#include <cstring>
#include <optional>

namespace tilec::sparse {
namespace {

// voxel_hash_insert's statuses.
enum InsertStatus {
  kInserted = 0,
  kDuplicate = 1,
  kTableFull = 2,
  kOutOfRange = 3
};

// A table at most half full, and at most this many doublings when a probe
// sequence runs past voxel_hash_insert's MAX_PROBES.
constexpr int kTableGrowths = 3;
constexpr int64_t kRadixPerProgram = 256 * 16;

int ceilLog2(int64_t value) {
  int log2 = 0;
  while ((int64_t(1) << log2) < value)
    ++log2;
  return log2;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Result<rt::DeviceBuffer> allocate(const rt::Context &context, int64_t bytes) {
  // Never empty: a kernel still gets a valid address.
  return rt::DeviceBuffer::allocate(
      context, static_cast<size_t>(std::max<int64_t>(bytes, 16)));
}

Status synchronize(const rt::Context &context, CUstream stream) {
  const rt::Driver &driver = context.driver();
  return driver.check(driver.api().cuStreamSynchronize(stream),
                      "cuStreamSynchronize");
}

// The first voxel whose insertion failed, said with its coordinates.
Status describeInsertError(const rt::DeviceBuffer &statuses, int64_t voxels,
                           rt::DevicePtr coords, const rt::Context &context) {
  std::vector<int32_t> status(voxels), xyz(4 * voxels);
  if (Status copied = statuses.copyToHost(status); !copied.ok())
    return copied;
  const rt::Driver &driver = context.driver();
  if (Status copied =
          driver.check(driver.api().cuMemcpyDtoH(xyz.data(), coords.address,
                                                 xyz.size() * sizeof(int32_t)),
                       "cuMemcpyDtoH");
      !copied.ok())
    return copied;
  for (int64_t i = 0; i < voxels; ++i) {
    if (status[i] != kDuplicate && status[i] != kOutOfRange)
      continue;
    std::string where = "voxel " + std::to_string(i) + " (" +
                        std::to_string(xyz[4 * i]) + ", " +
                        std::to_string(xyz[4 * i + 1]) + ", " +
                        std::to_string(xyz[4 * i + 2]) + ", " +
                        std::to_string(xyz[4 * i + 3]) + ")";
    if (status[i] == kOutOfRange)
      return Status::error(where + ": batch and coordinates must be in "
                                   "[0, 65536)");
    for (int64_t j = 0; j < voxels; ++j)
      if (j != i && std::memcmp(&xyz[4 * j], &xyz[4 * i], 16) == 0)
        return Status::error(where + " is also voxel " + std::to_string(j) +
                             ": a sparse tensor holds each voxel once");
    return Status::error(where + " is a duplicate voxel");
  }
  return Status::error("voxel_hash_insert reported an error but no voxel "
                       "carries it");
}

} // namespace

SparseTensor::SparseTensor(SparseEngine &engine, rt::DevicePtr coords,
                           int64_t voxels)
    : engine_(&engine), coords_(coords), voxels_(voxels) {}
SparseTensor::~SparseTensor() = default;
SparseTensor::SparseTensor(SparseTensor &&) noexcept = default;
SparseTensor &SparseTensor::operator=(SparseTensor &&) noexcept = default;

Result<SparseTensor> SparseTensor::create(SparseEngine &engine,
                                          rt::DevicePtr coords,
                                          int64_t voxels) {
  if (voxels < 0)
    return Status::error("a sparse tensor has a voxel count >= 0, got " +
                         std::to_string(voxels));
  if (voxels >= (int64_t(1) << 28))
    return Status::error("a sparse tensor holds fewer than 2^28 voxels, got " +
                         std::to_string(voxels));
  if (voxels > 0 && (coords.address == 0 || coords.address % 16 != 0))
    return Status::error("the coordinates must be a 16-byte aligned device "
                         "pointer");
  return SparseTensor(engine, coords, voxels);
}

Result<const NeighbourMaps *> SparseTensor::maps(int kernelSize, int dilation,
                                                 int64_t blockRows,
                                                 CUstream stream) {
  if (kernelSize < 1 || kernelSize % 2 == 0 || kernelSize > 7)
    return Status::error("kernel size " + std::to_string(kernelSize) +
                         ": odd, from 1 to 7");
  if (dilation < 1)
    return Status::error("dilation " + std::to_string(dilation) +
                         ": at least 1");
  auto key = std::make_tuple(kernelSize, dilation, blockRows);
  if (auto found = maps_.find(key); found != maps_.end())
    return found->second.get();
  Result<std::unique_ptr<NeighbourMaps>> built =
      buildMaps(kernelSize, dilation, blockRows, stream);
  if (!built)
    return built.status();
  return (maps_[key] = std::move(*built)).get();
}

Result<std::unique_ptr<NeighbourMaps>>
SparseTensor::buildMaps(int kernelSize, int dilation, int64_t blockRows,
                        CUstream stream) {
  const rt::Context &context = engine_->context();
  int64_t n = voxels_, v = int64_t(kernelSize) * kernelSize * kernelSize;
  int64_t blocks = cdiv(n, blockRows);
  int64_t activePairs = 0;
  auto assemble = [&](rt::DeviceBuffer order, rt::DeviceBuffer nbt,
                      rt::DeviceBuffer blkStart, rt::DeviceBuffer blkOff) {
    return std::make_unique<NeighbourMaps>(
        NeighbourMaps{n, v, blockRows, blocks, kernelSize, dilation,
                      activePairs, std::move(order), std::move(nbt),
                      std::move(blkStart), std::move(blkOff)});
  };
#define TRY_ASSIGN(name, expression)                                           \
  auto name##OrError = (expression);                                           \
  if (!name##OrError)                                                          \
    return name##OrError.status();                                             \
  auto name = std::move(*name##OrError)
#define TRY(expression)                                                        \
  if (Status status = (expression); !status.ok())                              \
  return status

  TRY_ASSIGN(order, allocate(context, 4 * n));
  TRY_ASSIGN(nbt, allocate(context, 4 * n * v));
  TRY_ASSIGN(blkStart, allocate(context, 4 * (blocks + 1)));
  if (n == 0) {
    TRY_ASSIGN(blkOff, allocate(context, 4));
    TRY(blkStart.memset32(0));
    return assemble(std::move(order), std::move(nbt), std::move(blkStart),
                    std::move(blkOff));
  }

  // The hash table: at most half full; a probe sequence longer than the
  // insert kernel's bound grows it.
  int log2Slots = std::max(1, ceilLog2(2 * n));
  TRY_ASSIGN(statuses, allocate(context, 4 * n));
  TRY_ASSIGN(probes, allocate(context, 8));
  std::optional<rt::DeviceBuffer> keys, vals;
  for (int growth = 0;; ++growth, ++log2Slots) {
    if (log2Slots > 30)
      return Status::error("the voxel table outgrew 2^30 slots");
    TRY_ASSIGN(k, allocate(context, int64_t(8) << log2Slots));
    TRY_ASSIGN(t, allocate(context, int64_t(4) << log2Slots));
    TRY(k.memset8(0xFF));
    TRY(probes.memset32(0));
    Call insert;
    insert.sizes = {{"N", n}, {"LOG2_T", log2Slots}};
    TRY(engine_->launch("voxel_hash_insert", insert,
                        {{"coords_ptr", coords_},
                         {"keys_ptr", k.ptr()},
                         {"vals_ptr", t.ptr()},
                         {"status_ptr", statuses.ptr()},
                         {"probes_ptr", probes.ptr()}},
                        stream));
    TRY(synchronize(context, stream));
    std::array<int32_t, 2> probeStats{};
    TRY(probes.copyToHost(probeStats.data(), sizeof(probeStats)));
    if (probeStats[1] == kDuplicate || probeStats[1] == kOutOfRange)
      return describeInsertError(statuses, n, coords_, context);
    if (probeStats[1] == kInserted) {
      keys = std::move(k);
      vals = std::move(t);
      break;
    }
    if (growth == kTableGrowths)
      return Status::error("the voxel table found no free slot after " +
                           std::to_string(kTableGrowths) + " doublings");
  }

  // The neighbour map, the sort keys and the pair count.
  TRY_ASSIGN(nb, allocate(context, 4 * n * v));
  TRY_ASSIGN(sortKeys, allocate(context, 4 * n));
  TRY_ASSIGN(pairs, allocate(context, 8));
  TRY(pairs.memset32(0));
  Call lookup;
  lookup.sizes = {{"N", n},
                  {"LOG2_T", log2Slots},
                  {"KS", kernelSize},
                  {"DIL", dilation},
                  {"V", v}};
  TRY(engine_->launch("voxel_neighbours", lookup,
                      {{"coords_ptr", coords_},
                       {"keys_ptr", keys->ptr()},
                       {"vals_ptr", vals->ptr()},
                       {"probes_ptr", probes.ptr()},
                       {"nb_ptr", nb.ptr()},
                       {"sort_key_ptr", sortKeys.ptr()},
                       {"pairs_ptr", pairs.ptr()}},
                      stream));

  // Rows sorted by key, stably: 4 bits a pass over the key's min(V, 32)
  // bits; the last pass writes the order.
  int64_t programs = cdiv(n, kRadixPerProgram);
  TRY_ASSIGN(hist, allocate(context, 4 * 16 * programs));
  TRY_ASSIGN(histScan, allocate(context, 4 * (16 * programs + 1)));
  TRY_ASSIGN(keysOut, allocate(context, 4 * n));
  TRY_ASSIGN(valsIn, allocate(context, 4 * n));
  rt::DeviceBuffer *keysFrom = &sortKeys, *keysTo = &keysOut;
  rt::DeviceBuffer *valsFrom = &valsIn, *valsTo = &order;
  int passes = static_cast<int>(cdiv(std::min<int64_t>(v, 32), 4));
  // The passes alternate buffers; start so that the last one ends in order.
  if (passes % 2 == 0)
    std::swap(valsFrom, valsTo);
  for (int pass = 0; pass < passes; ++pass) {
    Call digits;
    digits.sizes = {{"N", n}, {"SHIFT", 4 * pass}};
    TRY(engine_->launch(
        "radix_histogram", digits,
        {{"keys_ptr", keysFrom->ptr()}, {"hist_ptr", hist.ptr()}}, stream));
    Call scan;
    scan.sizes = {{"N", 16 * programs}};
    TRY(engine_->launch("exclusive_scan", scan,
                        {{"in_ptr", hist.ptr()}, {"out_ptr", histScan.ptr()}},
                        stream));
    Call scatter = digits;
    scatter.params = {{"FIRST", pass == 0 ? 1 : 0}};
    TRY(engine_->launch("radix_scatter", scatter,
                        {{"keys_in_ptr", keysFrom->ptr()},
                         {"vals_in_ptr", valsFrom->ptr()},
                         {"keys_out_ptr", keysTo->ptr()},
                         {"vals_out_ptr", valsTo->ptr()},
                         {"hist_scan_ptr", histScan.ptr()}},
                        stream));
    std::swap(keysFrom, keysTo);
    std::swap(valsFrom, valsTo);
  }

  Call transpose;
  transpose.sizes = {{"N", n}, {"V", v}};
  TRY(engine_->launch("neighbour_transpose", transpose,
                      {{"nb_ptr", nb.ptr()},
                       {"order_ptr", order.ptr()},
                       {"nbt_ptr", nbt.ptr()}},
                      stream));

  // The row blocks' offset lists: counts, their starts, then the lists.
  TRY_ASSIGN(counts, allocate(context, 4 * blocks));
  Call offsetLists;
  offsetLists.sizes = {{"N", n}, {"V", v}};
  offsetLists.params = {{"BLOCK_M", blockRows}, {"FILL", 0}};
  std::map<std::string, rt::DevicePtr> blockBuffers = {
      {"nbt_ptr", nbt.ptr()},
      {"counts_ptr", counts.ptr()},
      {"blk_start_ptr", blkStart.ptr()},
      {"blk_off_ptr", counts.ptr()}};
  TRY(engine_->launch("block_offsets", offsetLists, blockBuffers, stream));
  Call startScan;
  startScan.sizes = {{"N", blocks}};
  TRY(engine_->launch("exclusive_scan", startScan,
                      {{"in_ptr", counts.ptr()}, {"out_ptr", blkStart.ptr()}},
                      stream));
  TRY(synchronize(context, stream));
  int32_t listed = 0;
  TRY(blkStart.copyToHost(&listed, 4, 4 * blocks));
  TRY(pairs.copyToHost(&activePairs, 8));
  TRY_ASSIGN(blkOff, allocate(context, 4 * int64_t(listed)));
  offsetLists.params["FILL"] = 1;
  blockBuffers["blk_off_ptr"] = blkOff.ptr();
  TRY(engine_->launch("block_offsets", offsetLists, blockBuffers, stream));
  // The temporaries are freed on return; they must be idle by then.
  TRY(synchronize(context, stream));
#undef TRY
#undef TRY_ASSIGN
  return assemble(std::move(order), std::move(nbt), std::move(blkStart),
                  std::move(blkOff));
}

} // namespace tilec::sparse
