//===- radix_pass.cpp - reference of kernels/radix_pass.cpp ---------------===//
//
// Random keys (few distinct digits, so that equal digits meet within and
// across programs) with a random permutation as values, of which the first
// four fifths are live; every key's digit totals, a status buffer zeroed
// but for the programs seeded below; the live values in stable-sorted
// order as expected, the rest left poisoned.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <algorithm>
#include <numeric>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(radix_pass)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto shift = request.value("SHIFT");
  for (const auto *value : {&n, &shift})
    if (!*value)
      return value->status();
  bool first = request.paramOrDefault("FIRST");
  int64_t block = request.paramOrDefault("BLOCK");
  int64_t programs = (*n + block - 1) / block;
  int64_t digits = int64_t(1) << request.paramOrDefault("DIGIT_BITS");
  std::vector<int32_t> keys(*n), vals(*n);
  for (int32_t &key : keys)
    key = static_cast<int32_t>(request.rng.next() & 0xF0F0F0F5);
  std::iota(vals.begin(), vals.end(), 0);
  if (!first)
    for (int64_t i = *n - 1; i > 0; --i)
      std::swap(vals[i], vals[request.rng.below(i + 1)]);
  int64_t live = *n - *n / 5;
  auto digit = [&](int64_t i) {
    return (static_cast<uint32_t>(keys[i]) >> *shift) & (digits - 1);
  };
  std::vector<int32_t> totals(digits, 0);
  for (int64_t i = 0; i < live; ++i)
    totals[digit(i)] += 1;
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(live)});
  problem.tensors["keys_in_ptr"] = int32Tensor(keys);
  problem.tensors["vals_in_ptr"] = int32Tensor(vals);
  problem.tensors["keys_out_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["vals_out_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["totals_ptr"] = int32Tensor(totals);
  // The first third of the programs (of 4 or more) published before the
  // launch: tickets start past them, their status words are seeded, all
  // counting their own keys but the middle one's, which counts every key
  // up to its last. The launch's first program then looks back over
  // several windows of counts, through the middle one's, to the start.
  int64_t seeded = programs >= 4 ? programs / 3 : 0;
  std::vector<int64_t> upTo(digits, 0);
  HostTensor status(ElementFormat::I64, static_cast<size_t>(programs * digits));
  for (int64_t p = 0; p < seeded; ++p) {
    std::vector<int64_t> own(digits, 0);
    for (int64_t i = p * block; i < std::min((p + 1) * block, live); ++i)
      own[digit(i)] += 1;
    bool complete = p == seeded / 2;
    for (int64_t d = 0; d < digits; ++d) {
      upTo[d] += own[d];
      int64_t high = (*shift + 1) << 2 | (complete ? 2 : 1);
      status.setInteger(p * digits + d,
                        high << 32 | (complete ? upTo[d] : own[d]));
    }
  }
  problem.tensors["status_ptr"] = status;
  problem.tensors["starts_ptr"] =
      HostTensor(ElementFormat::I32, static_cast<size_t>(programs * digits));
  problem.tensors["ticket_ptr"] = int32Tensor({static_cast<int32_t>(seeded)});
  problem.output = "vals_out_ptr";
  if (request.withReference) {
    std::vector<int64_t> order(live);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return digit(a) < digit(b); });
    // The seeded programs' keys are not moved: their places stay poisoned
    // (all bits set, read as -1).
    for (int64_t r = 0; r < live; ++r)
      problem.expected.push_back(order[r] < seeded * block ? -1
                                                           : vals[order[r]]);
    // Past the live count nothing is written: the poison (all bits set)
    // reads as -1.
    problem.expected.resize(*n, -1);
  }
  return problem;
}
