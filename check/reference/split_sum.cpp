//===- split_sum.cpp - reference of kernels/split_sum.cpp -----------------===//

#include "SparseConvReference.h"

#include <cmath>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(split_sum)(const ReferenceRequest &request) {
  auto total = request.value("T");
  auto count = request.value("S");
  for (const auto *value : {&total, &count})
    if (!*value)
      return value->status();
  auto dtype = request.type("DTYPE");
  if (!dtype)
    return dtype.status();
  auto format = formatOf(*dtype);
  if (!format)
    return format.status();
  ReferenceProblem problem;
  HostTensor parts(ElementFormat::F32, *count * *total);
  fillUniform(parts, request.rng, -1, 1, request.withReference);
  if (request.withReference) {
    std::vector<double> values = parts.toDoubles();
    problem.expected.assign(*total, 0.0);
    for (int64_t s = 0; s < *count; ++s)
      for (int64_t i = 0; i < *total; ++i)
        problem.expected[i] += values[s * *total + i];
    problem.tolerance = toleranceFor(*format, false, std::sqrt(double(*count)));
  }
  problem.tensors["parts_ptr"] = std::move(parts);
  problem.tensors["out_ptr"] = HostTensor(*format, *total);
  problem.output = "out_ptr";
  return problem;
}
