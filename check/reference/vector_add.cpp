//===- vector_add.cpp - reference of kernels/vector_add.cpp ---------------===//

#include "tilec/Harness/Reference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(vector_add)(const ReferenceRequest &request) {
  auto n = request.value("n_elements");
  if (!n)
    return n.status();
  ReferenceProblem problem;
  HostTensor x(ElementFormat::F32, *n), y(ElementFormat::F32, *n);
  fillUniform(x, request.rng, -1, 1, request.withReference);
  fillUniform(y, request.rng, -1, 1, request.withReference);
  if (request.withReference)
    for (int64_t i = 0; i < *n; ++i)
      problem.expected.push_back(x.get(i) + y.get(i));
  problem.tensors["x_ptr"] = std::move(x);
  problem.tensors["y_ptr"] = std::move(y);
  problem.tensors["out_ptr"] = HostTensor(ElementFormat::F32, *n);
  problem.output = "out_ptr";
  problem.tolerance = {1e-6, 1e-7};
  return problem;
}
