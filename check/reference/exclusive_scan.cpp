//===- exclusive_scan.cpp - reference of kernels/exclusive_scan.cpp -------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(exclusive_scan)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  auto rows = request.value("ROWS");
  if (!rows)
    return rows.status();
  std::vector<int32_t> in(*n * *rows);
  for (int32_t &x : in)
    x = static_cast<int32_t>(request.rng.below(100));
  ReferenceProblem problem;
  problem.tensors["in_ptr"] = int32Tensor(in);
  problem.tensors["out_ptr"] = HostTensor(ElementFormat::I32, (*n + 1) * *rows);
  problem.output = "out_ptr";
  if (request.withReference) {
    for (int64_t row = 0; row < *rows; ++row) {
      double sum = 0;
      problem.expected.push_back(0);
      for (int64_t i = 0; i < *n; ++i)
        problem.expected.push_back(sum += in[row * *n + i]);
    }
  }
  return problem;
}
