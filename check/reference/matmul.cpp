//===- matmul.cpp - reference of kernels/matmul.cpp -----------------------===//

#include "MatmulReference.h"

using namespace tilec;
using namespace tilec::harness;

TILEC_REFERENCE(matmul)(const ReferenceRequest &request) {
  auto m = request.value("M");
  if (!m)
    return m.status();
  return buildStridedMatmul(request, *m, [](int64_t i) { return i; });
}
