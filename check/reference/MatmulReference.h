//===- MatmulReference.h - C = A[rows] @ B with any strides -----*- C++ -*-===//
//
// The references of matmul and gather_matmul: both read A, B and C through
// the six strides of their signatures and differ only in which row of A
// feeds each row of C.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_REFERENCE_MATMULREFERENCE_H
#define TILEC_TEST_REFERENCE_MATMULREFERENCE_H

#include "tilec/Harness/Reference.h"

#include <functional>

namespace tilec::harness {

/// A, B and C of the call, filled; `rowOf(i)` is the row of A that feeds row
/// i of C (-1: none, the row is zero); A has `sourceRows` rows.
Result<ReferenceProblem>
buildStridedMatmul(const ReferenceRequest &request, int64_t sourceRows,
                   const std::function<int64_t(int64_t)> &rowOf);

} // namespace tilec::harness

#endif // TILEC_TEST_REFERENCE_MATMULREFERENCE_H
