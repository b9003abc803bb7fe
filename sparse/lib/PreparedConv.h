//===- PreparedConv.h - A convolution call ready to launch ------*- C++ -*-===//
//
// Private to tilec_sparse: what a convolution keeps per (tensor, call shape)
// so that a repeated call sets four pointers and launches, how it prepares
// one over any maps, and what a tensor keeps per strided convolution.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_PREPAREDCONV_H
#define TILEC_SPARSE_LIB_PREPAREDCONV_H

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"
#include "tilec/sparse/SparseConv.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilec::sparse {

/// The kernels of the convolution (forward and input gradient) and of its
/// weight gradient.
inline constexpr const char *kConvKernel = "sparse_conv_fwd";
inline constexpr const char *kWgradKernel = "sparse_conv_wgrad";

/// What sparse_conv_fwd with SPLIT_K = 2 writes besides y: the halves'
/// partial sums and the tiles' arrival counts (zero before a launch and
/// after it).
struct SplitWorkspace {
  rt::DeviceBuffer partials, arrivals;
};

/// What every convolution call needs of `arguments` (channels, kernel size,
/// dilation, tf32 only for f32): an InvalidArgument error prefixed with
/// `function`, the name the caller reports under. submanifoldConv3d and
/// submanifoldConv3dBackward check the rest of their own arguments.
Status checkConvShape(const ConvArguments &arguments,
                      const std::string &function);

/// A named device pointer of a call.
using NamedPointer = std::pair<const char *, rt::DevicePtr>;
/// Each of `read` must be a 16-byte aligned device pointer (the kernels
/// load 16 bytes at a time; where a call reads nothing of one, its caller
/// passes any aligned address), each of `given` 16-byte aligned where it is
/// not 0: else an InvalidArgument error prefixed with `function` that names
/// the first that is not.
Status checkDevicePointers(const std::string &function,
                           std::initializer_list<NamedPointer> read,
                           std::initializer_list<NamedPointer> given = {});

/// A strided convolution's arguments checked (channels, tf32, row strides,
/// the pointers that x's and y's `xRows` and `yRows` rows need), errors
/// prefixed with `function`.
Status checkStridedConv(const StridedConvArguments &arguments, int64_t xRows,
                        int64_t yRows, const std::string &function);

struct PreparedConv {
  PreparedConv(std::shared_ptr<const rt::Kernel> kernel, rt::Dim3 grid,
               rt::ArgPack pack)
      : kernel(std::move(kernel)), grid(grid), pack(std::move(pack)) {}

  std::shared_ptr<const rt::Kernel> kernel;
  rt::Dim3 grid;
  rt::ArgPack pack;
  // Where x, weight, bias, y and the split workspace go in the pack (with
  // SPLIT_K = 1 the workspace's slots keep an address that is never read).
  size_t x = 0, weight = 0, bias = 0, y = 0, partials = 0, arrivals = 0;
  bool hasBias = false;
  /// The winner splits its row blocks: its workspace (from the tuning, else
  /// allocated at the first call), and what orders the calls that share
  /// it: a launch on another stream than the last one's waits for it.
  bool split = false;
  SplitWorkspaceSize splitSize;
  std::optional<SplitWorkspace> workspace;
  std::optional<rt::Event> lastLaunch;
  CUstream lastStream = nullptr;
  /// The engine's choiceGeneration() it was prepared under.
  uint64_t generation = 0;
};

/// The convolution `convs` holds prepared under `key`, or null. One
/// prepared before `engine`'s last retirePredictions() may run a
/// prediction: it is dropped, to be prepared again.
PreparedConv *
findPreparedConv(std::map<std::string, std::unique_ptr<PreparedConv>> &convs,
                 const std::string &key, const SparseEngine &engine);

/// A strided convolution's maps (SparseTensor::strided) and what is built
/// over them on use: each direction's row block lists and pair lists (by
/// `up`), and the prepared convolutions (by call shape and direction).
struct SparseTensor::StridedEntry {
  StridedMaps maps;
  std::map<std::pair<bool, int64_t>, std::unique_ptr<NeighbourMaps>> lists;
  std::map<bool, std::unique_ptr<OffsetPairs>> pairs;
  std::map<std::string, std::unique_ptr<PreparedConv>> convs;
};

/// sparse_conv_fwd's call for `rows` output rows over maps of `offsets`
/// offsets, X of `inputRows` rows, before a row block (BLOCK_M) is chosen;
/// `weightForm` is its TRANSPOSE_W (0 forward, 1 mirrored and transposed,
/// 2 transposed).
Call convCall(const ConvArguments &arguments, int64_t rows, int64_t offsets,
              int64_t inputRows, int weightForm);

/// sparse_conv_fwd's calls of `call` for each row block of
/// convRowBlocks(N of the call): what prepareConv tunes when it has no
/// choice for them; under rt::FirstUse::Predict, the call of the predicted
/// row block alone.
std::vector<std::pair<std::string, Call>>
rowBlockCalls(const Call &call, rt::FirstUse firstUse = rt::FirstUse::Tune);

/// The forward call that computes dx from dy: dy as X, dx as Y, the channels
/// swapped, no bias. How it reads the weights transposed is its caller's.
ConvArguments inputGradientCall(const ConvBackwardArguments &a);

/// sparse_conv_wgrad's call over `v` offsets' pair lists, `n` bounding every
/// list and the rows of x and dy.
Call weightGradCall(int64_t n, int64_t v, const ConvBackwardArguments &a);

/// The bias gradient's row chunks over `n` rows (column_sums' parts): at
/// least kMinBiasRows rows a chunk, at most kMaxBiasParts chunks.
int64_t biasGradRows(int64_t n);
int64_t biasGradParts(int64_t n);
/// column_sums' call: dy's `co` columns over `n` rows, in biasGradParts(n)
/// parts.
Call columnSumsCall(int64_t n, int64_t co, int64_t dyStride,
                    const std::string &dtype);
/// split_sum's call: `parts` f32 partial sums of `total` elements added in
/// order into an output of `dtype`.
Call splitSumCall(int64_t total, int64_t parts, const std::string &dtype);

/// The maps of a row block (`rows` rows a block), built on first use;
/// `tuning`: maps a tuning runs on (checked before it), else the maps of
/// the call's launch (whose check may wait past it: SparseTensor::
/// settleMaps).
using ConvMapsOf =
    std::function<Result<const NeighbourMaps *>(int64_t rows, bool tuning)>;

/// Tunes (or finds tuned) sparse_conv_fwd for `call` over each row block of
/// convRowBlocks(N of the call) and prepares the fastest over its maps.
Result<std::unique_ptr<PreparedConv>>
prepareConv(SparseEngine &engine, const ConvMapsOf &mapsOf,
            const ConvArguments &arguments, const Call &call, CUstream stream);

/// Launches a prepared convolution on `arguments`' x, weight, bias and y.
Status launchPrepared(SparseEngine &engine, PreparedConv &conv,
                      const ConvArguments &arguments, CUstream stream);

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_PREPAREDCONV_H
