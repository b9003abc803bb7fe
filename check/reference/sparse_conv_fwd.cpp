//===- sparse_conv_fwd.cpp - reference of kernels/sparse_conv.cpp ---------===//
//
// A cloud of N voxels (testCloud), its maps built on the host for the call's
// BLOCK_M (SparseConvReference.h), random features, weights and bias, and
// the convolution in float64 over the neighbour map; where V is no odd
// cube or X has NI != N rows (a strided convolution's call), a random map
// of that shape (randomHostMaps).
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include "tilec/Harness/Reference.h"
#include "tilec/sparse/SparseConv.h"

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(sparse_conv_fwd)(const ReferenceRequest &request) {
  int64_t sizes[6];
  const char *names[6] = {"N", "CI", "CO", "V", "stride_x", "stride_y"};
  for (int i = 0; i < 6; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    sizes[i] = *value;
  }
  auto [n, ci, co, v, strideX, strideY] =
      std::tuple(sizes[0], sizes[1], sizes[2], sizes[3], sizes[4], sizes[5]);
  if (n < 1 || ci < 1 || co < 1)
    return Status::error("N, CI and CO must be positive");
  // X's rows: a strided convolution's differ from Y's.
  auto inputRows = request.value("NI");
  if (!inputRows)
    return inputRows.status();
  int64_t ni = std::max<int64_t>(*inputRows, 1);
  int dilation = request.call.sizes.count("DIL")
                     ? static_cast<int>(request.call.sizes.at("DIL"))
                     : 1;
  int64_t blockM = request.paramOrDefault("BLOCK_M");
  bool hasBias = request.paramOrDefault("HAS_BIAS");
  // The input gradient's weights: W[c, V - 1 - k, o] (the forward's
  // [CO, V, CI] of the transposed convolution); W[c, k, o] with
  // TRANSPOSE_W = 2.
  int64_t transposeW = request.paramOrDefault("TRANSPOSE_W");
  auto dtype = request.type("DTYPE");
  if (!dtype)
    return dtype.status();
  auto format = formatOf(*dtype);
  if (!format)
    return format.status();
  bool tf32 = *format == ElementFormat::F32 && request.param("ALLOW_TF32", 0);

  auto maps = conventionMaps(request, n, ni, v, blockM, dilation);
  if (!maps)
    return maps.status();

  ReferenceProblem problem;
  HostTensor x(*format, (ni - 1) * strideX + ci), w(*format, co * v * ci);
  HostTensor bias(*format, co);
  fillUniform(x, request.rng, -1, 1, request.withReference);
  fillUniform(w, request.rng, -1, 1, request.withReference);
  fillUniform(bias, request.rng, -1, 1, request.withReference);
  int64_t yElements = (n - 1) * strideY + co;
  if (request.withReference) {
    // Elements between rows (stride_y > CO) stay poisoned.
    problem.expected.assign(yElements, NAN);
    std::vector<double> xs = x.toDoubles(), ws = w.toDoubles();
    std::vector<double> biases = bias.toDoubles();
    HostConvLayout layout{strideX, strideY, transposeW != 0, transposeW == 1};
    forEachRowRange(n, [&](int64_t begin, int64_t end) {
      hostConvForwardRows(maps->nb, v, xs.data(), ws.data(),
                          hasBias ? biases.data() : nullptr, ci, co, layout,
                          begin, end, problem.expected.data());
    });
    problem.tolerance =
        toleranceFor(*format, tf32, std::sqrt(double(v) * double(ci)));
  }
  problem.tensors["x_ptr"] = std::move(x);
  problem.tensors["w_ptr"] = std::move(w);
  problem.tensors["bias_ptr"] = std::move(bias);
  problem.tensors["y_ptr"] = HostTensor(*format, yElements);
  problem.tensors["nbt_ptr"] = int32Tensor(maps->nbt);
  problem.tensors["order_ptr"] = int32Tensor(maps->order);
  problem.tensors["blk_count_ptr"] = int32Tensor(maps->blkCount);
  // The entries past a block's count are kUnlisted (offset 65535): a
  // kernel that read one would read past the map.
  problem.tensors["blk_off_ptr"] = int32Tensor(maps->blkOff);
  problem.tensors["blk_order_ptr"] = int32Tensor(maps->blkOrder);
  // SPLIT_K = 2's partial sums, poisoned (a half that read the other's
  // before it was written gives NaN), and arrival counts (zero).
  sparse::SplitWorkspaceSize split =
      sparse::splitWorkspaceSize((n + blockM - 1) / blockM, blockM, co);
  HostTensor partials(ElementFormat::F32, split.partialFloats);
  for (size_t i = 0; i < partials.size(); ++i)
    partials.set(i, NAN);
  problem.tensors["ws_ptr"] = std::move(partials);
  problem.tensors["arrivals_ptr"] =
      int32Tensor(std::vector<int32_t>(split.arrivalCounts, 0));
  problem.output = "y_ptr";
  return problem;
}
