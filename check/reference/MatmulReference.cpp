//===- MatmulReference.cpp - C = A[rows] @ B with any strides -------------===//

#include "MatmulReference.h"

#include <cmath>
#include <tuple>

namespace tilec::harness {

namespace {
/// Host tensors the harness builds at most (elements): a stride beyond what
/// a test means is an error, not a machine-sized allocation.
constexpr int64_t kMaxElements = int64_t(1) << 32;

/// Elements a [rows x cols] matrix with these strides spans; an error when it
/// exceeds kMaxElements (or overflows).
Result<int64_t> span(const char *matrix, int64_t rows, int64_t cols,
                     int64_t rowStride, int64_t colStride) {
  int64_t a = 0, b = 0, total = 0;
  if (__builtin_mul_overflow(rows - 1, rowStride, &a) ||
      __builtin_mul_overflow(cols - 1, colStride, &b) ||
      __builtin_add_overflow(a, b, &total) || total + 1 > kMaxElements)
    return Status::error(std::string(matrix) + " would span more than 2^32 "
                                               "elements with these strides");
  return total + 1;
}

/// Whether no two elements of a [rows x cols] matrix share an address: for
/// positive strides, one index's whole range fits inside the other's step.
bool isOneToOne(int64_t rows, int64_t cols, int64_t rowStride,
                int64_t colStride) {
  return rows == 1 || cols == 1 || rowStride > (cols - 1) * colStride ||
         colStride > (rows - 1) * rowStride;
}
} // namespace

Result<ReferenceProblem>
buildStridedMatmul(const ReferenceRequest &request, int64_t sourceRows,
                   const std::function<int64_t(int64_t)> &rowOf) {
  int64_t v[9];
  const char *names[9] = {"M",         "N",         "K",
                          "stride_am", "stride_ak", "stride_bk",
                          "stride_bn", "stride_cm", "stride_cn"};
  for (int i = 0; i < 9; ++i) {
    auto value = request.value(names[i]);
    if (!value)
      return value.status();
    v[i] = *value;
  }
  auto [m, n, k, sam, sak, sbk, sbn, scm, scn] =
      std::tuple(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
  for (int i = 3; i < 9; ++i)
    if (v[i] <= 0)
      return Status::error(std::string(names[i]) + " = " +
                           std::to_string(v[i]) + ": strides must be positive");
  auto dtype = request.type("DTYPE");
  if (!dtype)
    return dtype.status();
  auto format = formatOf(*dtype);
  if (!format)
    return format.status();
  bool tf32 = *format == ElementFormat::F32 && request.param("ALLOW_TF32", 0);

  // Two elements of C at one address would leave the result to whichever
  // store lands last.
  if (!isOneToOne(m, n, scm, scn))
    return Status::error("C's strides (" + std::to_string(scm) + ", " +
                         std::to_string(scn) +
                         ") map two elements to one address");
  auto aElements = span("A", sourceRows, k, sam, sak);
  auto bElements = span("B", k, n, sbk, sbn);
  auto cSpan = span("C", m, n, scm, scn);
  for (const auto *elements : {&aElements, &bElements, &cSpan})
    if (!*elements)
      return elements->status();
  ReferenceProblem problem;
  HostTensor a(*format, *aElements);
  HostTensor b(*format, *bElements);
  int64_t cElements = *cSpan;
  fillUniform(a, request.rng, -1, 1, request.withReference);
  fillUniform(b, request.rng, -1, 1, request.withReference);
  if (request.withReference) {
    // Elements of C's buffer outside the matrix must stay poisoned.
    problem.expected.assign(cElements, NAN);
    std::vector<double> aValues = a.toDoubles(), bValues = b.toDoubles();
    forEachRowRange(m, [&](int64_t begin, int64_t end) {
      std::vector<double> row(n);
      for (int64_t i = begin; i < end; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        if (int64_t source = rowOf(i); source >= 0)
          for (int64_t kk = 0; kk < k; ++kk) {
            double av = aValues[source * sam + kk * sak];
            const double *bRow = &bValues[kk * sbk];
            for (int64_t j = 0; j < n; ++j)
              row[j] += av * bRow[j * sbn];
          }
        for (int64_t j = 0; j < n; ++j)
          problem.expected[i * scm + j * scn] = row[j];
      }
    });
  }
  problem.tensors["a_ptr"] = std::move(a);
  problem.tensors["b_ptr"] = std::move(b);
  problem.tensors["c_ptr"] = HostTensor(*format, cElements);
  problem.output = "c_ptr";
  problem.tolerance = toleranceFor(*format, tf32, std::sqrt(double(k)));
  return problem;
}

} // namespace tilec::harness
