//===- radix_scatter.cpp - reference of kernels/radix_scatter.cpp ---------===//
//
// Random keys (few distinct digits, so that equal digits meet within and
// across programs) with a random permutation as values, the exclusive scan
// of their digit counts, and the values in stable-sorted order as expected.
//
//===----------------------------------------------------------------------===//

#include "SparseConvReference.h"

#include <algorithm>
#include <numeric>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(radix_scatter)(const ReferenceRequest &request) {
  auto n = request.value("N");
  auto shift = request.value("SHIFT");
  for (const auto *value : {&n, &shift})
    if (!*value)
      return value->status();
  bool first = request.paramOrDefault("FIRST");
  int64_t perProgram =
      request.paramOrDefault("BLOCK") * request.paramOrDefault("CHUNKS");
  int64_t programs = (*n + perProgram - 1) / perProgram;
  int64_t digits = int64_t(1) << request.paramOrDefault("DIGIT_BITS");
  std::vector<int32_t> keys(*n), vals(*n);
  for (int32_t &key : keys)
    key = static_cast<int32_t>(request.rng.next() & 0xF0F0F0F5);
  std::iota(vals.begin(), vals.end(), 0);
  if (!first)
    for (int64_t i = *n - 1; i > 0; --i)
      std::swap(vals[i], vals[request.rng.below(i + 1)]);
  auto digit = [&](int64_t i) {
    return (static_cast<uint32_t>(keys[i]) >> *shift) & (digits - 1);
  };
  // A row of programs + 1 exclusive sums per digit (the last its total).
  std::vector<int32_t> counts(digits * programs, 0);
  for (int64_t i = 0; i < *n; ++i)
    counts[digit(i) * programs + i / perProgram] += 1;
  std::vector<int32_t> scan(digits * (programs + 1), 0);
  for (int64_t d = 0; d < digits; ++d)
    for (int64_t p = 0; p < programs; ++p)
      scan[d * (programs + 1) + p + 1] =
          scan[d * (programs + 1) + p] + counts[d * programs + p];
  ReferenceProblem problem;
  problem.tensors["count_ptr"] = int32Tensor({static_cast<int32_t>(*n)});
  problem.tensors["keys_in_ptr"] = int32Tensor(keys);
  problem.tensors["vals_in_ptr"] = int32Tensor(vals);
  problem.tensors["keys_out_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["vals_out_ptr"] = HostTensor(ElementFormat::I32, *n);
  problem.tensors["hist_scan_ptr"] = int32Tensor(scan);
  problem.output = "vals_out_ptr";
  if (request.withReference) {
    std::vector<int64_t> order(*n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return digit(a) < digit(b); });
    for (int64_t r = 0; r < *n; ++r)
      problem.expected.push_back(vals[order[r]]);
  }
  return problem;
}
