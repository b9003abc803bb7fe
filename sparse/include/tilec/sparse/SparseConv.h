//===- SparseConv.h - Sparse tensors and submanifold convolution -*- C++
//-*-===//
//
// Part of tilec_sparse (docs/sparse-conv.md). A SparseTensor is the voxel
// coordinates of a point cloud on the device; it builds its neighbour maps
// on the GPU with tilec's map kernels and caches them per (kernel size,
// dilation, row block), so that the layers of a network that share
// coordinates build them once. submanifoldConv3d runs the masked implicit
// GEMM (kernels/sparse_conv.cpp) over them, tuned on the first call of a
// shape and from the autotune cache after that.
//
// Everything runs on the caller's stream; the maps' buffers come from the
// engine's memory pool, ordered on that stream, and go back to it when the
// tensor is destroyed, after every stream that used them (which must still
// exist then). Not thread-safe: one SparseEngine per thread, or a lock.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_SPARSECONV_H
#define TILEC_SPARSE_SPARSECONV_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Autotuner.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/DevicePool.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/LaunchSequence.h"
#include "tilec/runtime/Workload.h"
#include "tilec/sparse/ConvGeometry.h"

#include <array>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace tilec::sparse {

enum class DType { F16, BF16, F32 };
/// "f16", "bf16", "f32": the kernels' DTYPE.
const char *dtypeName(DType dtype);

/// What the sparse convolution runs on. The provider, autotuner and cache
/// must outlive it.
class MapSequence;

class SparseEngine {
public:
  SparseEngine(rt::KernelProvider &provider, rt::Autotuner &autotuner,
               rt::AutotuneCache &cache);
  ~SparseEngine();

  rt::KernelProvider &provider() { return provider_; }
  rt::Autotuner &autotuner() { return autotuner_; }
  rt::AutotuneCache &cache() { return cache_; }
  const rt::Context &context() const { return provider_.context(); }

  /// A pointer argument of a launch, by the kernel's name for it.
  using PointerArg = std::pair<std::string_view, rt::DevicePtr>;

  /// Launches one of the kernels: the config the autotuner selects for
  /// `call`'s bucket (a map kernel's single config; a tuned kernel's winner,
  /// tuned on `inputs` when no cache or bundle has it), its grid, `pointers`
  /// by argument name and the call's integer arguments. A grid with no
  /// program launches nothing. The pointers are read where the caller
  /// lists them: a map build launches about 30 kernels a new tensor, and a
  /// map of names per launch was a tenth of its host work.
  Status launch(const std::string &kernel, const Call &call,
                std::initializer_list<PointerArg> pointers, CUstream stream,
                const rt::InputsFactory &inputs = {});
  /// The same with the pointers in a map (a call that also tunes on them).
  Status launch(const std::string &kernel, const Call &call,
                const std::map<std::string, rt::DevicePtr> &pointers,
                CUstream stream, const rt::InputsFactory &inputs = {});

  /// Queues a memset of `count` elements of 1 or 4 bytes (`elementBytes`)
  /// on `stream`, or records it while recording.
  Status memset(rt::DevicePtr address, uint32_t value, unsigned elementBytes,
                size_t count, CUstream stream);
  /// While `sequence` is set (not null), launch() and memset() append their
  /// step to it instead of queueing it: a map build recorded once per size
  /// bucket and replayed (docs/sparse-conv.md, "One launch sequence per size
  /// bucket").
  void recordInto(rt::LaunchSequence *sequence) { recording_ = sequence; }

  /// The recorded build of `window`'s maps (`lean` rows) and of the lists of
  /// `blockRows` for the size bucket of `voxels` (MapSequence.h), recorded
  /// on first use and kept for the last few buckets; null where no sequence
  /// serves (too large a bucket, or recording is off).
  Result<MapSequence *> mapSequence(const Window &window, bool lean,
                                    int64_t blockRows, int64_t voxels);
  /// The recorded map builds the engine keeps.
  size_t recordedMapBuilds() const { return mapSequences_.size(); }
  /// Whether map builds are recorded per size bucket and replayed (on by
  /// default); off, every build launches its kernels one by one, as the
  /// buckets too large to record do (the tests check both ways).
  void setRecordedMapBuilds(bool on) { recordMapBuilds_ = on; }
  /// For tests: map builds start with tables 2^`log2` times smaller than
  /// their voxels call for (4: fewer slots than voxels, so that the insert
  /// gives up and the table grows), to reach that path.
  void setTableShrinkForTesting(int log2) { tableShrink_ = log2; }
  int tableShrink() const { return tableShrink_; }

  /// Queues compiles of the kernels of the `calls` (kernel, call) that have
  /// no launch plan yet and are not loaded for another bucket, in order, on
  /// the provider's compile workers (KernelProvider::compileAhead), before
  /// the candidates queued for later tunings: each launch after it takes
  /// its kernel's compile, done or running, instead of compiling it. A
  /// failed compile is reported by the launch.
  void precompile(const std::vector<std::pair<std::string, Call>> &calls);

  /// Whether `signature` is new to this engine (then it is remembered): a
  /// build whose signature names every bucket its launches fall in
  /// precompiles once per signature, not once per voxel count.
  bool firstUseOf(const std::string &signature);

  /// Ends a first use that predicts (rt::FirstUse::Predict): the
  /// autotuner's retirePredictions(), from which on new keys are tuned, and
  /// this engine's launch plans and the tensors' prepared convolutions are
  /// made again on their next call (they may hold predictions). Returns how
  /// many predictions were dropped.
  size_t retirePredictions();
  /// Counts retirePredictions() calls: a prepared convolution made under an
  /// earlier count is prepared again.
  uint64_t choiceGeneration() const { return choiceGeneration_; }

  /// Waits for `stream` (a checked cuStreamSynchronize).
  Status synchronize(CUstream stream) const;

  /// Where a map build's check waits past the forward convolution's launch
  /// (SparseTensor::settleMaps): page-locked host memory the build's
  /// statistics are copied to behind its kernels and the event recorded
  /// behind the copy. Made on first use and reused: a check is settled
  /// before the call that queued it returns. The statistics fit in
  /// kDeferredStatsBytes.
  struct DeferredCheck {
    void *hostStats = nullptr;
    const rt::Event *copied = nullptr;
  };
  static constexpr size_t kDeferredStatsBytes = 32;
  Result<DeferredCheck> deferredCheck();
  /// How many builds deferredCheck served (what the tests count).
  size_t deferredChecks() const { return deferredChecks_; }
  /// Where a checked build's statistics are copied behind its kernels, so
  /// that the one wait for its stream also brings them
  /// (waitAndCheckMapBuild): the second kDeferredStatsBytes of
  /// deferredCheck's page-locked memory.
  Result<void *> checkedStats();

  /// `bytes` of device memory ordered on `stream`, from the engine's pool
  /// (rt::DevicePool, created on first use): what a tensor's maps live in.
  Result<rt::PoolBuffer> allocateMaps(size_t bytes, CUstream stream);

  /// Orders the legacy default stream after the work queued so far on each
  /// of `streams`, so that memory they used can be freed on it.
  Status orderLegacyStreamAfter(const std::vector<CUstream> &streams);

  /// A device buffer of at least `bytes` for one operation's temporaries,
  /// grown as needed and reused by the next operation (each ends with its
  /// stream synchronized).
  Result<rt::DevicePtr> scratch(size_t bytes);

  /// `kernel`'s description, described once by the autotuner and kept for
  /// the engine's life (never dropped: the pointer stays valid).
  Result<const KernelDescription *> describe(const std::string &kernel);

  /// The autotuner's select() of `call`: where this process has chosen for
  /// its bucket, that choice with its grid, the call keyed and the grid
  /// evaluated through the plan of the call's shape (what a new tensor in a
  /// known bucket asks for, without the description's slower evaluation of
  /// the same expressions); else select() itself, tuning on `inputs`.
  Result<rt::TuneResult> select(const std::string &kernel, const Call &call,
                                const rt::InputsFactory &inputs = {});
  /// Whether select() answers `call` from this process's choice: the
  /// autotuner's hasChoice, keyed through the plan of the call's shape.
  bool hasChoice(const std::string &kernel, const Call &call);

private:
  Status launchWith(const std::string &kernel, const Call &call,
                    const PointerArg *pointers, size_t count, CUstream stream,
                    const rt::InputsFactory &inputs);
  struct LaunchPlan;
  struct BucketPlan;
  struct ShapePlan;
  struct BoundShape;
  struct BoundBucket;
  /// A call evaluated through the plan of its shape.
  struct ShapeEvaluation;
  Result<ShapeEvaluation> evaluateShape(const std::string &kernel,
                                        const Call &call);
  /// This process's choice for `call`'s bucket with its grid, or nothing.
  std::optional<rt::TuneResult> chosen(const std::string &kernel,
                                       const Call &call);
  Result<LaunchPlan *> plan(const std::string &kernel, const Call &call,
                            const rt::InputsFactory &inputs);
  /// The bucket of `call` (selected through the autotuner on first use),
  /// its pack bound for the call's shape and its config's grid plan.
  /// (`evaluated` is `call`'s, evaluated again where the selection ran.)
  Result<BoundBucket> planBucket(const std::string &kernel, const Call &call,
                                 const rt::InputsFactory &inputs,
                                 ShapeEvaluation &evaluated);
  /// The launch plan of `call` (kept under `key`) in `bucket`.
  Result<LaunchPlan *> planLaunch(const std::string &key,
                                  const ShapeEvaluation &evaluated,
                                  const BoundBucket &bucket, const Call &call);
  Result<std::shared_ptr<BoundShape>>
  boundShape(const std::string &key, const BucketPlan &bucket,
             const KernelDescription &description,
             const std::vector<std::pair<std::string, int64_t>> &integers);
  static Result<std::vector<std::pair<size_t, int64_t>>>
  placeIntegers(const BoundShape &bound, const KernelDescription &description,
                const std::vector<std::pair<std::string, int64_t>> &integers);

  rt::KernelProvider &provider_;
  rt::Autotuner &autotuner_;
  rt::AutotuneCache &cache_;
  std::optional<rt::DeviceBuffer> scratch_;
  std::unique_ptr<rt::DevicePool> pool_;
  /// Recorded on a stream for the legacy default stream to wait for.
  std::optional<rt::Event> ordering_;
  /// By kernel and call: a repeated launch sets its pointers and goes.
  std::map<std::string, std::unique_ptr<LaunchPlan>> plans_;
  /// By kernel and (specialized) autotune key: a call of a new size in a
  /// bucket the autotuner already chose for binds its integers, computes
  /// its grid and goes, without the autotuner.
  std::map<std::string, std::unique_ptr<BucketPlan>> buckets_;
  /// By kernel and call shape (its sizes' names, parameters and types): a
  /// call of a new size takes its key, arguments and grid from the shape's
  /// plan (tilec::CallPlan), expressions parsed once.
  std::map<std::string, std::unique_ptr<ShapePlan>> shapes_;
  /// By bucket and call shape: the pack every call of both shares.
  std::map<std::string, std::shared_ptr<BoundShape>> bound_;
  uint64_t choiceGeneration_ = 0;
  /// The signatures firstUseOf has seen.
  std::set<std::string> signatures_;
  /// The map kernels' descriptions, by kernel.
  std::map<std::string, KernelDescription> descriptions_;
  /// Where launch() and memset() record instead of queueing, if anywhere.
  rt::LaunchSequence *recording_ = nullptr;
  /// The recorded map builds, the most recently used first, and the
  /// scratch they all use.
  std::vector<std::pair<std::string, std::unique_ptr<MapSequence>>>
      mapSequences_;
  std::optional<rt::DeviceBuffer> sequenceScratch_;
  bool recordMapBuilds_ = true;
  int tableShrink_ = 0;
  /// Makes hostStats_ on first use.
  Status allocateHostStats();
  /// deferredCheck's and checkedStats' memory (cuMemHostAlloc'd, freed with
  /// the engine) and deferredCheck's event.
  void *hostStats_ = nullptr;
  std::optional<rt::Event> statsCopied_;
  size_t deferredChecks_ = 0;
};

/// A neighbour map in the masked GEMM's row order (docs/sparse-conv.md): a
/// submanifold window's over a tensor's voxels, or one side of a strided
/// convolution's.
struct SortedNeighbourMap {
  int64_t voxels = 0, offsets = 0;
  /// (voxel, offset) pairs with a neighbour.
  int64_t activePairs = 0;
  /// Sorted row r is voxel order[r]; nbt[v * N + r] its neighbour at offset
  /// v, or -1; rowMasks[r * W + v / 32] has bit v % 32 set where that is
  /// not -1 (W = cdiv(V, 32) words a row, what the row blocks' lists read).
  /// All live in `storage` (one allocation a map).
  rt::DevicePtr order, nbt, rowMasks;
  rt::PoolBuffer storage;
};

/// The maps of one (kernel size, dilation, row block): the shared sorted
/// map and the row blocks' offset lists (block b visits
/// blk_off[b * V .. b * V + blk_count[b]), entries v | groups << 16 with
/// bit g of groups for the block's rows [64 g, 64 g + 64) that have a
/// neighbour at offset v; the entries past a block's count are unwritten),
/// and the order the convolution runs the blocks in (blk_order: by
/// ascending count of offsets, stably; run from the end).
struct NeighbourMaps {
  std::shared_ptr<const SortedNeighbourMap> map;
  int64_t blockRows = 0, blocks = 0;
  rt::DevicePtr blkCount, blkOff, blkOrder;
  /// One allocation for the lists: blk_count, blk_off, blk_order, the block
  /// sort's keys and counts and its count words (kept until the kernels are
  /// done); a replayed build's holds blk_count and blk_order (of its
  /// bucket's capacity of blocks, the live blocks' order first) and blk_off
  /// alone.
  rt::PoolBuffer storage;
};

/// Each offset's (voxel, neighbour) pairs of a sorted map, listed on the GPU
/// (offset_pairs.cpp): offset v's pairs are [start[v], start[v + 1]),
/// in[p] the neighbour, out[p] the voxel around it, in sorted row order.
struct OffsetPairs {
  std::shared_ptr<const SortedNeighbourMap> map;
  rt::DevicePtr start, in, out;
  /// One allocation: the counts and their scan, start, in and out.
  rt::PoolBuffer storage;
};

/// A strided convolution's output voxels and the maps between them and its
/// input tensor's voxels, built on the GPU (SparseTensor::strided;
/// docs/sparse-conv.md, "Strided and inverse convolutions"). The inverse
/// convolution (spconv's SparseInverseConv3d over the strided layer's
/// indice_key) runs over the same maps, the other way.
struct StridedMaps {
  ConvGeometry geometry;
  std::array<int64_t, 3> inputShape{}, outputShape{};
  int64_t batches = 0, inputs = 0, outputs = 0;
  /// outputs x (batch, x, y, z) int32 in ascending order: the same outputs
  /// in the same order in every process.
  rt::DevicePtr outCoords;
  /// Rows: the outputs, offset v of output o the input it reads there (the
  /// strided convolution's map; its pairs give the weight gradient).
  std::shared_ptr<const SortedNeighbourMap> down;
  /// Rows: the inputs, offset v of input i the output that reads it there
  /// (the inverse convolution's map, and the strided one's input gradient).
  /// Both are sorted like a submanifold map (by the Gray key of the rows'
  /// offsets).
  std::shared_ptr<const SortedNeighbourMap> up;
  rt::PoolBuffer coordsStorage;
};

struct ConvArguments;
struct ConvBackwardArguments;
struct StridedConvArguments;
struct StridedConvBackwardArguments;
/// A convolution call ready to launch: its tuned kernel, grid and packed
/// arguments over one tensor's maps (SubmanifoldConv.cpp).
struct PreparedConv;

/// How a tensor's maps order the rows of the masked GEMM (docs/sparse-conv.md,
/// "The row order" and "Rows moved to lean groups").
enum class RowOrder {
  /// Sorted by the neighbour bitmask's key: the faster map build.
  Key,
  /// Then each row moved to the leanest group of rows that runs its
  /// offsets (kCoverRounds rounds): 3.7-5.6% less GEMM work at 128 rows on
  /// surfaces and street scenes, little on random clouds, for 0.05-0.4 ms
  /// more GPU time in the map build on the H200. Both orders share the
  /// convolution's tuned winners.
  LeanGroups,
  /// LeanGroups where the convolution that first builds the maps has
  /// CI * CO >= kLeanGroupsMinChannels (its few percent of a layer pay the
  /// round back within a few layers), else Key; maps built without a
  /// convolution (tilec_sparse_tensor_build_maps) take Key. The default.
  Auto,
};

/// RowOrder::Auto's threshold on CI * CO: at 256 x 256 a layer's ~3% saved
/// repays the cover round's map time in about five layers; at 128 x 128 it
/// would take about twenty (docs/sparse-conv.md, "Rows moved to lean
/// groups").
inline constexpr int64_t kLeanGroupsMinChannels = 256 * 256;

/// A sparse tensor holds fewer voxels than this.
inline constexpr int64_t kVoxelLimit = int64_t(1) << 28;

class SparseTensor {
public:
  ~SparseTensor();
  SparseTensor(SparseTensor &&) noexcept;
  SparseTensor &operator=(SparseTensor &&) noexcept;

  /// `coords`: `voxels` x (batch, x, y, z) int32 on the device, each voxel
  /// once, coordinates in [0, 2^16). The memory stays the caller's.
  static Result<SparseTensor> create(SparseEngine &engine, rt::DevicePtr coords,
                                     int64_t voxels);

  int64_t voxels() const { return voxels_; }
  rt::DevicePtr coords() const { return coords_; }

  /// The rows' order of the maps this tensor builds; set before the first
  /// maps are built (an error after: the built maps keep theirs).
  Status setRowOrder(RowOrder order);
  RowOrder rowOrder() const { return rowOrder_; }

  /// The maps for (window, blockRows), built on `stream` on first use; row
  /// blocks of one window share the sorted map. The first build of a
  /// window queues the sorted map
  /// and the block lists, then synchronizes the stream once (the voxel
  /// table's statistics say whether it took every voxel); later row blocks
  /// queue their lists without waiting.
  /// Duplicate voxels and coordinates out of range are errors.
  /// `channels`: CI * CO of the convolution that asks, which decides
  /// RowOrder::Auto (0: none).
  Result<const NeighbourMaps *> maps(const Window &window, int64_t blockRows,
                                     CUstream stream, int64_t channels = 0);
  /// maps() of a kernelSize^3 window with one dilation.
  Result<const NeighbourMaps *> maps(int kernelSize, int dilation,
                                     int64_t blockRows, CUstream stream,
                                     int64_t channels = 0) {
    return maps(Window::cube(kernelSize, dilation), blockRows, stream,
                channels);
  }

  /// maps() of every row block in `blockRows` over `window`, built and
  /// queued on `stream` behind one unchecked build of the sorted map, with
  /// one synchronization at the end (not one per row block): what a
  /// tensor's maps for every convolution that may run over them cost.
  Status buildRowBlockMaps(const Window &window,
                           const std::vector<int64_t> &blockRows,
                           CUstream stream, int64_t channels = 0);

  /// The outputs and maps of the strided convolution `geometry` over this
  /// tensor's voxels, on a grid of `spatialShape` voxels per axis holding
  /// `batches` batches (every voxel must lie in it: an error says which
  /// does not), built on `stream` on first use and kept with the tensor.
  /// The build synchronizes the stream twice: for the outputs' count, and
  /// at its end (its temporaries are the engine's scratch).
  Result<const StridedMaps *> strided(const ConvGeometry &geometry,
                                      const std::array<int64_t, 3> &spatialShape,
                                      int64_t batches, CUstream stream);

private:
  friend Status submanifoldConv3d(SparseEngine &, SparseTensor &,
                                  const ConvArguments &, CUstream);
  friend Status stridedConv3d(SparseEngine &, SparseTensor &,
                              const StridedConvArguments &, CUstream);
  friend Status stridedConv3dBackward(SparseEngine &, SparseTensor &,
                                      const StridedConvBackwardArguments &,
                                      CUstream);
  /// A strided convolution's maps with what is built over them on use.
  struct StridedEntry;
  Result<StridedEntry *> stridedEntry(const ConvGeometry &geometry,
                                      const std::array<int64_t, 3> &spatialShape,
                                      int64_t batches, CUstream stream);
  Result<std::unique_ptr<StridedEntry>>
  buildStrided(const ConvGeometry &geometry,
               const std::array<int64_t, 3> &spatialShape, int64_t batches,
               CUstream stream);
  /// The row blocks' lists over one of a strided convolution's maps (`up`:
  /// the inputs' rows), queued on first use.
  Result<const NeighbourMaps *> stridedLists(StridedEntry &entry, bool up,
                                             int64_t blockRows,
                                             CUstream stream);
  /// The masked implicit GEMM of `arguments` over one of a strided
  /// convolution's maps (`up`: rows are the inputs, X the outputs), with
  /// sparse_conv_fwd's TRANSPOSE_W = `weightForm`; prepared once per call
  /// shape.
  Status stridedGemm(SparseEngine &engine, StridedEntry &entry,
                     const ConvArguments &arguments, bool up, int weightForm,
                     CUstream stream);
  /// The pair lists of one of a strided convolution's maps.
  Result<const OffsetPairs *> stridedPairs(StridedEntry &entry, bool up,
                                           CUstream stream);
  /// Lists each offset's pairs of `map` on `stream`.
  Result<std::unique_ptr<OffsetPairs>>
  buildOffsetPairs(std::shared_ptr<const SortedNeighbourMap> map,
                   CUstream stream);
  friend Status submanifoldConv3dBackward(SparseEngine &, SparseTensor &,
                                          const ConvBackwardArguments &,
                                          CUstream);
  SparseTensor(SparseEngine &engine, rt::DevicePtr coords, int64_t voxels);
  /// Remembers that work on `stream` reads the maps.
  void noteStream(CUstream stream);
  /// Frees the maps once the work queued so far on every stream that read
  /// them is done (on the legacy default stream, which waits for each).
  void releaseMaps();
  /// maps(); with `deferCheck`, a build it needs is queued unchecked
  /// (settleMaps checks it): what a convolution's first call asks for, so
  /// that its kernel is queued behind the build before the host waits.
  Result<const NeighbourMaps *>
  findOrBuildMaps(const Window &window, int64_t blockRows, CUstream stream,
                  int64_t channels, bool deferCheck);
  /// The check of the build findOrBuildMaps(deferCheck) queued, if any:
  /// true when the maps stand (their pair count set), false when they were
  /// dropped because the table took not every voxel (build them again,
  /// checked), or the error of a duplicate voxel or a coordinate out of
  /// range (the maps dropped).
  Result<bool> settleMaps();
  /// A build whose check waits (settleMaps): its maps' key, the insert's
  /// statuses (what an error names), its stream and where its statistics
  /// are copied.
  struct PendingCheck {
    std::pair<Window, int64_t> key;
    std::pair<CUdeviceptr, size_t> statuses;
    CUstream stream = nullptr;
    SparseEngine::DeferredCheck check;
  };
  /// Builds the sorted map of `window` and the lists of `blockRows` over it
  /// (one synchronization at the end); with `deferred`, none: the build is
  /// queued unchecked and what its check needs is set there.
  Result<std::unique_ptr<NeighbourMaps>> buildMaps(const Window &window,
                                                   bool lean, int64_t blockRows,
                                                   CUstream stream,
                                                   PendingCheck *deferred);
  /// Queues the row blocks' lists over `map`.
  Result<std::unique_ptr<NeighbourMaps>>
  buildBlockLists(std::shared_ptr<const SortedNeighbourMap> map,
                  int64_t blockRows, CUstream stream);
  /// The pair lists of `window`, listed on `stream` on first use over the
  /// sorted map (built first if there is none).
  Result<const OffsetPairs *> offsetPairs(const Window &window,
                                          CUstream stream);

  SparseEngine *engine_;
  rt::DevicePtr coords_;
  int64_t voxels_;
  RowOrder rowOrder_ = RowOrder::Auto;
  std::map<Window, std::shared_ptr<const SortedNeighbourMap>> sorted_;
  std::map<std::pair<Window, int64_t>, std::unique_ptr<NeighbourMaps>> maps_;
  /// The build whose check waits, if any (one at a time: settled before
  /// the call that queued it returns).
  std::optional<PendingCheck> pending_;
  std::map<Window, std::unique_ptr<OffsetPairs>> pairs_;
  /// By the call's shape: a repeated call packs its four pointers and
  /// launches, nothing else.
  std::map<std::string, std::unique_ptr<PreparedConv>> convs_;
  /// By (geometry, grid, batches).
  std::map<std::tuple<ConvGeometry, std::array<int64_t, 3>, int64_t>,
           std::unique_ptr<StridedEntry>>
      strided_;
  /// The streams that ran work on the maps (noteStream). They must outlive
  /// the tensor: its destruction orders the maps' frees after them.
  std::vector<CUstream> streams_;
};

struct ConvArguments {
  /// x: [N, ci] (rows xRowStride apart, default ci), weight: [co, kx, ky,
  /// kz, ci] contiguous (the window's extents), bias: [co] or null, y: [N,
  /// co] (rows yRowStride apart, default co); all of `dtype`, 16-byte
  /// aligned.
  rt::DevicePtr x, weight, bias, y;
  int64_t ci = 0, co = 0;
  int64_t xRowStride = 0, yRowStride = 0;
  /// The row strides in effect: the given ones, else dense rows.
  int64_t xStride() const { return xRowStride ? xRowStride : ci; }
  int64_t yStride() const { return yRowStride ? yRowStride : co; }
  /// The window: 3^3 by default; any odd extents per axis, a dilation per
  /// axis.
  Window window;
  DType dtype = DType::F16;
  bool allowTf32 = false;
  /// The input gradient's form (submanifoldConv3dBackward sets it): weight
  /// is a forward convolution's [ci, k, k, k, co] (this call's ci is the
  /// forward's co), read mirrored and transposed per offset.
  bool transposeWeight = false;
};

/// The gradients of the convolution `forward` describes (its y and bias are
/// not read) for dy = dL/dy [N, co], rows dyRowStride apart (default co).
/// Each gradient is computed where its pointer is set: dx [N, ci] (rows
/// dxRowStride apart, default ci) in the dtype, overwritten; dw [co, k, k, k,
/// ci] and db [co] overwritten, in the dtype, or f32 with weightGradF32
/// (fp16 weight gradients overflow in mixed-precision training). Every sum
/// runs in a fixed order: the same input gives the same bits in every
/// process (docs/sparse-conv.md, "Training").
struct ConvBackwardArguments {
  ConvArguments forward;
  rt::DevicePtr dy;
  int64_t dyRowStride = 0;
  rt::DevicePtr dx, dw, db;
  int64_t dxRowStride = 0;
  bool weightGradF32 = false;
  int64_t dyStride() const { return dyRowStride ? dyRowStride : forward.co; }
  int64_t dxStride() const { return dxRowStride ? dxRowStride : forward.ci; }
};

/// A strided convolution (spconv's SparseConv3d) or its inverse
/// (SparseInverseConv3d with the strided layer's indice_key) over the maps
/// of `geometry` on `input`'s voxels (SparseTensor::strided with the same
/// geometry, grid and batches; built on first use).
struct StridedConvArguments {
  /// x, weight [co, kx, ky, kz, ci] (the geometry's kernel), bias, y, the
  /// channels, row strides, dtype and tf32 as for a submanifold
  /// convolution; window and transposeWeight are not read.
  /// The strided convolution reads x [inputs, ci] and writes y [outputs,
  /// co]; the inverse reads x [outputs, ci] and writes y [inputs, co].
  ConvArguments conv;
  ConvGeometry geometry;
  std::array<int64_t, 3> spatialShape{};
  int64_t batches = 1;
  bool inverse = false;
};

/// The gradients of the convolution `forward` describes: `gradients` as for
/// a submanifold convolution (its `forward` is not read; dy has y's rows,
/// dx x's, dw the weight's shape [co, kx, ky, kz, ci]). dx is the forward
/// kernel over the other map with the weights transposed per offset
/// (TRANSPOSE_W = 2), dw each offset's pairs reduced in fixed parts, db the
/// column sums of dy: the same bits in every process.
struct StridedConvBackwardArguments {
  StridedConvArguments forward;
  ConvBackwardArguments gradients;
};

Status stridedConv3d(SparseEngine &engine, SparseTensor &input,
                     const StridedConvArguments &arguments, CUstream stream);
Status stridedConv3dBackward(SparseEngine &engine, SparseTensor &input,
                             const StridedConvBackwardArguments &arguments,
                             CUstream stream);

/// The weight gradient's partition of each offset's pairs into `parts`
/// parts of `pairsPerPart` (sparse_conv_wgrad's SPLITS and SPLIT_PAIRS):
/// a function of the call's sizes alone, so that the sums run in the same
/// order whatever config runs them.
struct WeightGradSplit {
  int64_t parts = 1, pairsPerPart = 1;
};
WeightGradSplit weightGradSplit(int64_t voxels, int64_t offsets, int64_t ci,
                                int64_t co);

/// What sparse_conv_fwd with SPLIT_K = 2 needs besides y, for `blocks` row
/// blocks of `blockRows` and `co` output channels: the halves' f32 partial
/// sums (ws_ptr) and an i32 arrival count per tile (arrivals_ptr; tiles as
/// narrow as the kernel's narrowest BLOCK_N, 16), zero before a launch.
struct SplitWorkspaceSize {
  int64_t partialFloats = 0, arrivalCounts = 0;
};
SplitWorkspaceSize splitWorkspaceSize(int64_t blocks, int64_t blockRows,
                                      int64_t co);

/// The rows' order after the sort by the Gray key (docs/sparse-conv.md,
/// "Rows moved to lean groups"): kCoverRounds rounds, each mask_unions over
/// groups of kCoverRows sorted rows, mask_cover within kCoverWindow groups
/// of a row's own, and a stable sort of the rows by the group chosen.
inline constexpr int kCoverRounds = 1;
inline constexpr int64_t kCoverRows = 64;
inline constexpr int64_t kCoverWindow = 256;

/// The row blocks a convolution of `rows` output rows tunes over (the maps
/// are built per row block): each is tuned over the kernel's other
/// parameters and the faster one runs. 64-row blocks alone up to 4096 rows
/// (ceil(log2 rows) <= 12), where they won every key tuned on the H200 (36
/// of 36 in the autotune caches of 2026-12-05, by 3% or more); 64 and 128
/// above. A function of the rows' bucket (the autotune key's LOG2_N), so
/// that every size of a bucket tunes, builds and packs the same row blocks.
const std::vector<int64_t> &convRowBlocks(int64_t rows);
/// The one row block of convRowBlocks(`rows`) a first use that predicts
/// runs (rt::FirstUse::Predict).
int64_t predictedRowBlock(int64_t rows);

/// The kernel calls a first build of the maps of `window` over `voxels`
/// voxels precompiles (the cover rounds where `lean`): every call a build
/// of those buckets may make, both row blocks' lists with both fills
/// included. `tilec bench plans` plans them.
std::vector<std::pair<std::string, Call>>
mapBuildCalls(int64_t voxels, const Window &window, bool lean);

/// y = submanifold convolution of x over `tensor`'s voxels (see the file
/// comment); errors name the argument that is wrong. A first call over maps
/// not built yet queues the kernel before it checks their build (a
/// duplicate voxel or a coordinate out of range fails the call after y may
/// have been written).
Status submanifoldConv3d(SparseEngine &engine, SparseTensor &tensor,
                         const ConvArguments &arguments, CUstream stream);

/// The gradients of a convolution over `tensor`'s voxels
/// (ConvBackwardArguments): dx is the forward kernel over the same maps with
/// the weights mirrored and transposed (TRANSPOSE_W), dw sparse_conv_wgrad
/// over the offsets' pair lists and split_sum, db column_sums and split_sum.
Status submanifoldConv3dBackward(SparseEngine &engine, SparseTensor &tensor,
                                 const ConvBackwardArguments &arguments,
                                 CUstream stream);

/// The kernel submanifoldConv3d tunes, and its call for each row block of
/// convRowBlocks(voxels) (in that order) over `voxels` voxels: the keys a
/// convolution fills in the autotune cache.
std::vector<std::pair<std::string, Call>>
convKernelCalls(const ConvArguments &arguments, int64_t voxels);

/// A layer a network will run, as far as it is known before it runs, for
/// compileLayersAhead: `layer` (its channels, window, dtype, bias; `voxels`
/// the count its first call is expected to see, which picks the tunings'
/// size bucket, row blocks and split candidates), whether it is a strided
/// or inverse convolution (its input gradient reads the weight transposed,
/// not mirrored; `kernelSize` may be even there), and which gradients
/// training will ask of it. A strided layer that builds its maps (not an
/// inverse one, which reuses them) may give its stride and padding: its
/// build's own kernels, which they specialize, are then planned too.
struct LayerPlan {
  rt::ConvLayer layer;
  bool strided = false;
  bool inputGradient = false;
  bool weightGradient = false;
  /// Per axis (x, y, z); a stride of 0 on any axis: not given.
  std::array<int, 3> stride{0, 0, 0}, padding{0, 0, 0};
};

/// The kernel calls the first calls of `plans` would tune, in order: each
/// layer's forward row blocks, then its input gradient's row blocks and its
/// weight gradient, as the convolution and its backward build them, each
/// once. Under rt::FirstUse::Predict, each layer's predicted row block
/// alone, at its planned count and then at one count of each smaller power
/// of two down to 2^6 (the levels after strided layers run on fewer
/// voxels, and a prediction changes with the count's power of two).
Result<std::vector<std::pair<std::string, Call>>>
layerPlanCalls(const std::vector<LayerPlan> &plans,
               rt::FirstUse firstUse = rt::FirstUse::Tune);

/// The single-config kernels' calls the plans' first calls make besides
/// the convolutions, at each layer's planned count, each once: a
/// submanifold layer's maps (with the cover rounds where its channels ask
/// for them), a strided layer's build where the plan gives its stride and
/// padding (else its maps' sorts), and with the weight gradient its pair
/// lists and the gradients' sums. A count only keys them, except the radix
/// sorts' programs, which take keys by the count's size bucket: the builds
/// are listed at the planned count and at each halving of it, so that the
/// cubins planned at a count serve every smaller one of the same window and
/// types (and, for a strided build, of any grid): compileLayersAhead
/// compiles each once, at the start, instead of when the first tensor of a
/// new window or level needs it.
std::vector<std::pair<std::string, Call>>
layerSingleConfigCalls(const std::vector<LayerPlan> &plans);

/// Queues the candidates of every call of layerPlanCalls(plans, the
/// autotuner's first use) that the autotuner would tune
/// (Autotuner::compileAhead: no memo, pin, bundle or autotune cache entry
/// answers it) on the provider's compile workers, in order, and returns how
/// many compiles it queued. Before them, the map kernels the layers' first
/// calls launch (each window's maps, the weight gradients' pair lists and
/// sums) are queued too, at the front (SparseEngine::precompile), and are
/// not counted. A network's first pass
/// then finds each layer's candidates compiled, on every core, while the
/// layers before it tune, instead of compiling them layer by layer. Where
/// no call of the first layer would be tuned (the caches, a bundle or pins
/// answer it), nothing is queued: the network was most likely tuned
/// before, and later layers' planned sizes (a guess where a strided layer
/// changes the count) would key calls that never come.
Result<size_t> compileLayersAhead(SparseEngine &engine,
                                  const std::vector<LayerPlan> &plans);

/// The layer a convolution over `voxels` voxels is, as a workload records
/// it (tilec/runtime/Workload.h: the window's extent and dilation per
/// axis), and the arguments of a layer (no buffers).
rt::ConvLayer convLayerOf(const ConvArguments &arguments, int64_t voxels);
Result<ConvArguments> convArgumentsOf(const rt::ConvLayer &layer);

} // namespace tilec::sparse

#endif // TILEC_SPARSE_SPARSECONV_H
