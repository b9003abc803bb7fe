//===- toy_axpy_reference.cpp - reference of toy_axpy.cpp -----------------===//
//
// The reference exactly as it would sit in test/reference/.
//
//===----------------------------------------------------------------------===//

#include "tilec/Harness/Reference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(toy_axpy)(const ReferenceRequest &request) {
  auto n = request.value("n");
  if (!n)
    return n.status();
  double scale = static_cast<double>(request.param("SCALE", 3));
  ReferenceProblem problem;
  HostTensor x(ElementFormat::F32, *n), y(ElementFormat::F32, *n);
  fillUniform(x, request.rng, -1, 1, request.withReference);
  fillUniform(y, request.rng, -1, 1, request.withReference);
  if (request.withReference)
    for (int64_t i = 0; i < *n; ++i)
      problem.expected.push_back(scale * x.get(i) + y.get(i));
  problem.tensors["x_ptr"] = std::move(x);
  problem.tensors["y_ptr"] = std::move(y);
  problem.tensors["out_ptr"] = HostTensor(ElementFormat::F32, *n);
  problem.output = "out_ptr";
  problem.tolerance = {1e-6, 1e-6};
  return problem;
}
