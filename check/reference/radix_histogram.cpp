//===- radix_histogram.cpp - reference of kernels/radix_histogram.cpp -----===//
//
// Random keys, with the sign bit set in some (the digits are unsigned), of
// which the first four fifths are live (count_ptr): the rest, up to N, are
// counted by no program.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(radix_histogram)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto shift = request.value("SHIFT");
  for (const auto *value : {&n, &shift})
    if (!*value)
      return value->status();
  int64_t perProgram =
      request.paramOrDefault("BLOCK") * request.paramOrDefault("CHUNKS");
  int64_t programs = (*n + perProgram - 1) / perProgram;
  int64_t digits = int64_t(1) << request.paramOrDefault("DIGIT_BITS");
  std::vector<int32_t> keys(*n);
  for (int32_t &key : keys)
    key = static_cast<int32_t>(request.rng.next());
  int32_t live = static_cast<int32_t>(*n - *n / 5);
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({live});
  problem.tensors["keys_ptr"] = int32Tensor(keys);
  problem.tensors["hist_ptr"] =
      HostTensor(ElementFormat::I32, digits * programs);
  problem.output = "hist_ptr";
  if (request.withReference) {
    problem.expected.assign(digits * programs, 0);
    for (int64_t i = 0; i < live; ++i) {
      uint32_t digit =
          (static_cast<uint32_t>(keys[i]) >> *shift) & (digits - 1);
      problem.expected[digit * programs + i / perProgram] += 1;
    }
  }
  return problem;
}
