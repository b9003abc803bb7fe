//===- exclusive_scan.cpp - reference of kernels/exclusive_scan.cpp -------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(exclusive_scan)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  std::vector<int32_t> in(*n);
  for (int32_t &x : in)
    x = static_cast<int32_t>(request.rng.below(100));
  ReferenceProblem problem;
  problem.tensors["in_ptr"] = int32Tensor(in);
  problem.tensors["out_ptr"] = HostTensor(ElementFormat::I32, *n + 1);
  problem.output = "out_ptr";
  if (request.withReference) {
    double sum = 0;
    problem.expected.push_back(0);
    for (int32_t x : in)
      problem.expected.push_back(sum += x);
  }
  return problem;
}
