//===- radix_digit_totals.cpp - reference of kernels/radix_digit_totals.cpp
//===//
//
// Random keys, with the sign bit set in some (the digits are unsigned), of
// which the first four fifths are live (count_ptr): the rest, up to N, are
// counted by no program. Few distinct digits in the low bits, so that
// programs add to the same counters.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(radix_digit_totals)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto passesValue = request.value("PASSES");
  for (const auto *value : {&n, &passesValue})
    if (!*value)
      return value->status();
  int64_t digitBits = request.paramOrDefault("DIGIT_BITS");
  int64_t passes = *passesValue;
  int64_t digits = int64_t(1) << digitBits;
  std::vector<int32_t> keys(*n);
  for (int32_t &key : keys)
    key = static_cast<int32_t>(request.rng.next() & 0xFFFFF0F3);
  int32_t live = static_cast<int32_t>(*n - *n / 5);
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({live});
  problem.tensors["keys_ptr"] = int32Tensor(keys);
  // The kernel adds to totals: here to the output's poison, all bits set,
  // which reads as -1 (the counters of no key stay so).
  problem.tensors["totals_ptr"] =
      HostTensor(ElementFormat::I32, static_cast<size_t>(passes * digits));
  problem.output = "totals_ptr";
  if (request.withReference) {
    problem.expected.assign(passes * digits, -1);
    for (int64_t i = 0; i < live; ++i)
      for (int64_t pass = 0; pass < passes; ++pass) {
        uint32_t digit =
            (static_cast<uint32_t>(keys[i]) >> (pass * digitBits)) &
            (digits - 1);
        problem.expected[pass * digits + digit] += 1;
      }
  }
  return problem;
}
