//===- softmax.cpp - reference of kernels/softmax.cpp ---------------------===//

#include "tilec/Harness/Reference.h"

#include <algorithm>
#include <cmath>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(softmax)(const ReferenceRequest &request) {
  auto rows = request.value("n_rows"), cols = request.value("n_cols");
  auto inStride = request.value("input_row_stride");
  auto outStride = request.value("output_row_stride");
  for (const auto *value : {&rows, &cols, &inStride, &outStride})
    if (!*value)
      return value->status();
  if (*inStride < *cols || *outStride < *cols)
    return Status::error("softmax row strides must be at least n_cols");
  ReferenceProblem problem;
  HostTensor in(ElementFormat::F32, (*rows - 1) * *inStride + *cols);
  fillUniform(in, request.rng, -4, 4, request.withReference);
  size_t outElements = (*rows - 1) * *outStride + *cols;
  if (request.withReference) {
    // Gaps between output rows must stay poisoned.
    problem.expected.assign(outElements, NAN);
    for (int64_t r = 0; r < *rows; ++r) {
      auto x = [&](int64_t c) { return in.get(r * *inStride + c); };
      double maxValue = -INFINITY, sum = 0;
      for (int64_t c = 0; c < *cols; ++c)
        maxValue = std::max(maxValue, x(c));
      for (int64_t c = 0; c < *cols; ++c)
        sum += std::exp(x(c) - maxValue);
      for (int64_t c = 0; c < *cols; ++c)
        problem.expected[r * *outStride + c] = std::exp(x(c) - maxValue) / sum;
    }
  }
  problem.tensors["input_ptr"] = std::move(in);
  problem.tensors["output_ptr"] = HostTensor(ElementFormat::F32, outElements);
  problem.output = "output_ptr";
  problem.tolerance = {1e-5, 1e-7};
  return problem;
}
