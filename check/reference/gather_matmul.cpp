//===- gather_matmul.cpp - reference of kernels/gather_matmul.cpp ---------===//

#include "MatmulReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(gather_matmul)(const ReferenceRequest &request) {
  auto m = request.value("M");
  if (!m)
    return m.status();
  // R: the rows of A to pick from (twice M unless the call says).
  auto sourceRows = request.call.sizes.count("R") ? request.value("R")
                                                  : Result<int64_t>(2 * *m);
  if (!sourceRows)
    return sourceRows.status();
  // Which row of A feeds row i of C; -1 (0xFFFFFFFF) reads zeros.
  HostTensor rows(ElementFormat::I32, *m);
  std::vector<int64_t> rowOf(*m);
  for (int64_t i = 0; i < *m; ++i) {
    rowOf[i] =
        request.rng.uniform(0, 1) < 0.2 ? -1 : request.rng.below(*sourceRows);
    rows.set(i, static_cast<double>(rowOf[i]));
  }
  auto problem = buildStridedMatmul(request, *sourceRows,
                                    [&](int64_t i) { return rowOf[i]; });
  if (!problem)
    return problem.status();
  problem->tensors["idx_ptr"] = std::move(rows);
  return problem;
}
