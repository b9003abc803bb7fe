//===- strided_candidates.cpp - reference of kernels/strided_candidates.cpp
//
// A test cloud (a shell) through the call's geometry: the candidates'
// keys as hostStridedCandidates computes them (StridedReferenceTest checks
// that they are the oracle's outputs).
//
//===----------------------------------------------------------------------===//

#include "StridedConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(strided_candidates)(const ReferenceRequest &request) {
  auto n = request.value("N");
  if (!n)
    return n.status();
  auto shape = stridedCallShape(request);
  if (!shape)
    return shape.status();
  sparse::VoxelCloud cloud = testCloud(*n);
  auto candidates = hostStridedCandidates(cloud, shape->inputShape,
                                          shape->geometry, shape->batches);
  if (!candidates)
    return candidates.status();
  ReferenceProblem problem;
  problem.tensors["coords_ptr"] = int32Tensor(cloud.coords);
  problem.tensors["cand_key_ptr"] = HostTensor(
      ElementFormat::I32, std::max<size_t>(candidates->keys.size(), 1));
  problem.tensors["cand_val_ptr"] = int32Tensor(candidates->values);
  problem.tensors["status_ptr"] = int32Tensor({0});
  problem.output = "cand_key_ptr";
  if (request.withReference)
    problem.expected.assign(candidates->keys.begin(), candidates->keys.end());
  return problem;
}
