//===- column_sums.cpp - reference of kernels/column_sums.cpp -------------===//

#include "SparseConvReference.h"

#include <cmath>
#include <tuple>

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(column_sums)(const ReferenceRequest &request) {
  const char *names[] = {"N", "C", "ROWS_PER_PART", "stride_y"};
  int64_t sizes[4];
  for (int i = 0; i < 4; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    sizes[i] = *value;
  }
  auto [n, c, rowsPerPart, stride] =
      std::tuple(sizes[0], sizes[1], sizes[2], sizes[3]);
  auto dtype = request.type("DTYPE");
  if (!dtype)
    return dtype.status();
  auto format = formatOf(*dtype);
  if (!format)
    return format.status();
  int64_t parts = (n + rowsPerPart - 1) / rowsPerPart;
  ReferenceProblem problem;
  HostTensor y(*format, (n - 1) * stride + c);
  fillUniform(y, request.rng, -1, 1, request.withReference);
  if (request.withReference) {
    std::vector<double> values = y.toDoubles();
    problem.expected.assign(parts * c, 0.0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t col = 0; col < c; ++col)
        problem.expected[(r / rowsPerPart) * c + col] +=
            values[r * stride + col];
    problem.tolerance =
        toleranceFor(ElementFormat::F32, false, std::sqrt(double(rowsPerPart)));
  }
  problem.tensors["y_ptr"] = std::move(y);
  problem.tensors["parts_ptr"] = HostTensor(ElementFormat::F32, parts * c);
  problem.output = "parts_ptr";
  return problem;
}
