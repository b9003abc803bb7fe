//===- sparse_conv_wgrad.cpp - reference of kernels/sparse_conv_wgrad.cpp -===//
//
// A cloud of N voxels (testCloud), its offsets' pair lists from the host
// oracle, random features and output gradients, and each part's sums in
// float64: ws[s, o, v, c] = sum over the pairs of part s of offset v of
// dY[i, o] * X[j, c].
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <cmath>
#include <tuple>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(sparse_conv_wgrad)(const ReferenceRequest &request) {
  const char *names[] = {"N",      "CI",          "CO",       "V",
                         "SPLITS", "SPLIT_PAIRS", "stride_x", "stride_dy"};
  int64_t sizes[8];
  for (int i = 0; i < 8; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    sizes[i] = *value;
  }
  auto [n, ci, co, v] = std::tuple(sizes[0], sizes[1], sizes[2], sizes[3]);
  auto [splits, splitPairs, strideX, strideDy] =
      std::tuple(sizes[4], sizes[5], sizes[6], sizes[7]);
  auto dtype = request.type("DTYPE");
  if (!dtype)
    return dtype.status();
  auto format = formatOf(*dtype);
  if (!format)
    return format.status();
  bool tf32 = *format == ElementFormat::F32 && request.param("ALLOW_TF32", 0);
  auto maps = testCloudMaps(request);
  if (!maps)
    return maps.status();
  HostOffsetPairs pairs = hostOffsetPairs(maps->nbt, maps->order, n, v);

  ReferenceProblem problem;
  HostTensor x(*format, (n - 1) * strideX + ci);
  HostTensor dy(*format, (n - 1) * strideDy + co);
  fillUniform(x, request.rng, -1, 1, request.withReference);
  fillUniform(dy, request.rng, -1, 1, request.withReference);
  int64_t partSize = co * v * ci;
  if (request.withReference) {
    problem.expected.assign(splits * partSize, 0.0);
    std::vector<double> xs = x.toDoubles(), dys = dy.toDoubles();
    for (int64_t offset = 0; offset < v; ++offset)
      for (int64_t s = 0; s < splits; ++s) {
        int64_t end = pairs.start[offset + 1];
        int64_t first = std::min(pairs.start[offset] + s * splitPairs, end);
        int64_t last = std::min(first + splitPairs, end);
        for (int64_t o = 0; o < co; ++o)
          for (int64_t c = 0; c < ci; ++c) {
            double sum = 0;
            for (int64_t p = first; p < last; ++p)
              sum += dys[pairs.out[p] * strideDy + o] *
                     xs[pairs.in[p] * strideX + c];
            problem.expected[s * partSize + (o * v + offset) * ci + c] = sum;
          }
      }
    // The sums are of exact products (f16 and bf16 products are f32) in
    // f32, so f32's tolerance (tf32's where the inputs are rounded to it).
    problem.tolerance =
        toleranceFor(ElementFormat::F32, tf32, std::sqrt(double(splitPairs)));
  }
  problem.tensors["x_ptr"] = std::move(x);
  problem.tensors["dy_ptr"] = std::move(dy);
  problem.tensors["pair_start_ptr"] = int32Tensor(pairs.start);
  problem.tensors["pair_in_ptr"] = int32Tensor(pairs.in);
  problem.tensors["pair_out_ptr"] = int32Tensor(pairs.out);
  problem.tensors["ws_ptr"] = HostTensor(ElementFormat::F32, splits * partSize);
  problem.output = "ws_ptr";
  return problem;
}
