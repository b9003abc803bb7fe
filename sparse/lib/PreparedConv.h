//===- PreparedConv.h - A convolution call ready to launch ------*- C++ -*-===//
//
// Private to tilec_sparse: what submanifoldConv3d keeps per (tensor, call
// shape) so that a repeated call sets four pointers and launches.
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

#include <memory>
#include <optional>
#include <utility>

namespace tilec::sparse {

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
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_PREPAREDCONV_H
