//===- KernelHarness.cpp - run kernels on the GPU against a reference ----===//

#include "tilec/Harness/KernelHarness.h"

#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/Launch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

namespace tilec::harness {
namespace {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000;
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  if (exponent >= 31)
    return sign | 0x7c00;
  if (exponent <= 0) {
    if (exponent < -10)
      return sign;
    mantissa |= 0x800000;
    uint32_t shift = 14 - exponent;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = sign | (exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return half;
}

double halfToDouble(uint16_t half) {
  int exponent = (half >> 10) & 0x1f;
  int mantissa = half & 0x3ff;
  double sign = (half & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0)
    return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa ? NAN : sign * INFINITY;
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

/// A host tensor of f16 or f32 elements, kept in the device format; values()
/// gives the exact stored values as doubles.
struct HostTensor {
  bool isHalf = false;
  std::vector<uint8_t> bytes;

  HostTensor(bool isHalf, size_t count)
      : isHalf(isHalf), bytes(count * (isHalf ? 2 : 4)) {}
  size_t size() const { return bytes.size() / (isHalf ? 2 : 4); }
  void set(size_t index, double value) {
    if (isHalf) {
      uint16_t h = floatToHalf(static_cast<float>(value));
      std::memcpy(&bytes[index * 2], &h, 2);
    } else {
      float f = static_cast<float>(value);
      std::memcpy(&bytes[index * 4], &f, 4);
    }
  }
  double get(size_t index) const {
    if (isHalf) {
      uint16_t h;
      std::memcpy(&h, &bytes[index * 2], 2);
      return halfToDouble(h);
    }
    float f;
    std::memcpy(&f, &bytes[index * 4], 4);
    return f;
  }
};

struct Tolerance {
  double rtol, atol;
};

Tolerance toleranceFor(bool isHalf, bool tf32, double accumulationScale) {
  if (isHalf)
    return {1e-2, 1e-2 * accumulationScale};
  if (tf32)
    return {1e-3, 1e-3 * accumulationScale};
  return {1e-5, 1e-5 * accumulationScale};
}

/// A device buffer holding `host`, or poisoned (all bits set: NaN) when
/// `poison` is set so an element the kernel misses cannot pass.
rt::Result<rt::DeviceBuffer> upload(const rt::Context &context,
                                    const std::vector<uint8_t> &host,
                                    bool poison) {
  auto buffer = rt::DeviceBuffer::allocate(context, host.size());
  if (!buffer)
    return buffer.status();
  rt::Status status = poison ? buffer->memset8(0xff)
                             : buffer->copyFromHost(host.data(), host.size());
  if (!status.ok())
    return status;
  return std::move(*buffer);
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What each kernel contributes: its arguments, grid and reference.
struct Problem {
  std::vector<rt::DeviceBuffer> buffers;
  /// Argument values in signature order: buffer indices for pointers
  /// (as negative ids) or integers.
  std::vector<std::function<rt::Status(rt::ArgPack &, size_t)>> args;
  rt::Dim3 grid;
  /// Index of the output buffer and its expected values.
  size_t outputBuffer = 0;
  bool outputIsHalf = false;
  std::vector<double> expected;
  Tolerance tolerance{0, 0};
};

rt::Result<int64_t> lookup(const std::map<std::string, int64_t> &values,
                           const std::string &name, const std::string &what) {
  auto it = values.find(name);
  if (it == values.end())
    return rt::Status::error("missing " + what + " '" + name + "'");
  return it->second;
}

#define TILEC_TRY_ASSIGN(var, expr)                                            \
  auto var##Result = (expr);                                                   \
  if (!var##Result)                                                            \
    return var##Result.status();                                               \
  auto var = *var##Result;

void addPointer(Problem &problem, size_t buffer) {
  problem.args.push_back([&problem, buffer](rt::ArgPack &pack, size_t index) {
    return pack.setPointer(index, problem.buffers[buffer].ptr());
  });
}

void addInt(Problem &problem, int64_t value) {
  problem.args.push_back([value](rt::ArgPack &pack, size_t index) {
    return pack.setInt(index, value);
  });
}

rt::Status requireMultiple(const std::string &name, int64_t value,
                           int64_t divisor) {
  if (value % divisor != 0)
    return rt::Status::error(name + " = " + std::to_string(value) +
                             " breaks the kernel's divisibility-by-" +
                             std::to_string(divisor) + " specialization");
  return rt::Status::success();
}

rt::Status buildVectorAdd(const rt::Context &context, const RunRequest &request,
                          std::mt19937 &rng, Problem &problem) {
  TILEC_TRY_ASSIGN(n, lookup(request.sizes, "n_elements", "size"));
  TILEC_TRY_ASSIGN(block, lookup(request.params, "BLOCK", "meta-parameter"));
  std::uniform_real_distribution<double> dist(-1, 1);
  HostTensor x(false, n), y(false, n), out(false, n);
  for (int64_t i = 0; i < n; ++i) {
    x.set(i, dist(rng));
    y.set(i, dist(rng));
  }
  for (const HostTensor *tensor : {&x, &y, &out}) {
    auto buffer = upload(context, tensor->bytes, tensor == &out);
    if (!buffer)
      return buffer.status();
    problem.buffers.push_back(std::move(*buffer));
  }
  for (size_t b = 0; b < 3; ++b)
    addPointer(problem, b);
  addInt(problem, n);
  problem.grid = {static_cast<uint32_t>(cdiv(n, block)), 1, 1};
  problem.outputBuffer = 2;
  for (int64_t i = 0; i < n; ++i)
    problem.expected.push_back(x.get(i) + y.get(i));
  problem.tolerance = {1e-6, 1e-7};
  return rt::Status::success();
}

rt::Status buildSoftmax(const rt::Context &context, const RunRequest &request,
                        std::mt19937 &rng, Problem &problem) {
  TILEC_TRY_ASSIGN(rows, lookup(request.sizes, "n_rows", "size"));
  TILEC_TRY_ASSIGN(cols, lookup(request.sizes, "n_cols", "size"));
  TILEC_TRY_ASSIGN(block, lookup(request.params, "BLOCK_N", "meta-parameter"));
  if (block < cols)
    return rt::Status::error("softmax needs BLOCK_N >= n_cols (" +
                             std::to_string(block) + " < " +
                             std::to_string(cols) + ")");
  std::uniform_real_distribution<double> dist(-4, 4);
  HostTensor in(false, rows * cols), out(false, rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    in.set(i, dist(rng));
  for (const HostTensor *tensor : {&out, &in}) {
    auto buffer = upload(context, tensor->bytes, tensor == &out);
    if (!buffer)
      return buffer.status();
    problem.buffers.push_back(std::move(*buffer));
  }
  addPointer(problem, 0);
  addPointer(problem, 1);
  addInt(problem, cols);
  addInt(problem, cols);
  addInt(problem, cols);
  problem.grid = {static_cast<uint32_t>(rows), 1, 1};
  problem.outputBuffer = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double maxValue = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      maxValue = std::max(maxValue, in.get(r * cols + c));
    for (int64_t c = 0; c < cols; ++c)
      sum += std::exp(in.get(r * cols + c) - maxValue);
    for (int64_t c = 0; c < cols; ++c)
      problem.expected.push_back(std::exp(in.get(r * cols + c) - maxValue) /
                                 sum);
  }
  problem.tolerance = {1e-5, 1e-7};
  return rt::Status::success();
}

/// matmul and gather_matmul: C[M, N] = A[rows(m), :] @ B.
rt::Status buildMatmul(const rt::Context &context, const RunRequest &request,
                       std::mt19937 &rng, Problem &problem, bool gather) {
  TILEC_TRY_ASSIGN(m, lookup(request.sizes, "M", "size"));
  TILEC_TRY_ASSIGN(n, lookup(request.sizes, "N", "size"));
  TILEC_TRY_ASSIGN(k, lookup(request.sizes, "K", "size"));
  TILEC_TRY_ASSIGN(blockM, lookup(request.params, "BLOCK_M", "meta-parameter"));
  TILEC_TRY_ASSIGN(blockN, lookup(request.params, "BLOCK_N", "meta-parameter"));
  for (auto [name, value] : {std::pair("K (stride_am)", k),
                             std::pair("N (stride_bk, stride_cm)", n)}) {
    rt::Status status = requireMultiple(name, value, 16);
    if (!status.ok())
      return status;
  }
  auto dtype = request.types.find("DTYPE");
  bool isHalf = dtype == request.types.end() || dtype->second == "f16";
  auto tf32 = request.params.find("ALLOW_TF32");
  bool allowTF32 = !isHalf && tf32 != request.params.end() && tf32->second;
  int64_t sourceRows = m;
  if (gather) {
    auto rows = request.sizes.find("R");
    sourceRows = rows == request.sizes.end() ? 2 * m : rows->second;
  }
  std::uniform_real_distribution<double> dist(-1, 1);
  HostTensor a(isHalf, sourceRows * k), b(isHalf, k * n), c(isHalf, m * n);
  for (size_t i = 0; i < a.size(); ++i)
    a.set(i, dist(rng));
  for (size_t i = 0; i < b.size(); ++i)
    b.set(i, dist(rng));
  // Which row of A feeds row m of C; -1 (0xFFFFFFFF) reads zeros.
  std::vector<int32_t> rowOf(m);
  std::uniform_int_distribution<int32_t> pick(0, sourceRows - 1);
  std::bernoulli_distribution empty(0.2);
  for (int64_t i = 0; i < m; ++i)
    rowOf[i] = gather ? (empty(rng) ? -1 : pick(rng)) : static_cast<int32_t>(i);
  std::vector<uint8_t> indexBytes(m * 4);
  std::memcpy(indexBytes.data(), rowOf.data(), indexBytes.size());

  for (const HostTensor *tensor : {&a, &b, &c}) {
    auto buffer = upload(context, tensor->bytes, tensor == &c);
    if (!buffer)
      return buffer.status();
    problem.buffers.push_back(std::move(*buffer));
  }
  addPointer(problem, 0);
  addPointer(problem, 1);
  addPointer(problem, 2);
  if (gather) {
    auto buffer = upload(context, indexBytes, false);
    if (!buffer)
      return buffer.status();
    problem.buffers.push_back(std::move(*buffer));
    addPointer(problem, 3);
  }
  for (int64_t value : {m, n, k, k, n, n})
    addInt(problem, value);
  if (gather)
    problem.grid = {static_cast<uint32_t>(cdiv(m, blockM)),
                    static_cast<uint32_t>(cdiv(n, blockN)), 1};
  else
    problem.grid = {
        static_cast<uint32_t>(cdiv(m, blockM) * cdiv(n, blockN)), 1, 1};
  problem.outputBuffer = 2;
  problem.outputIsHalf = isHalf;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      if (rowOf[i] >= 0)
        for (int64_t kk = 0; kk < k; ++kk)
          sum += a.get(rowOf[i] * k + kk) * b.get(kk * n + j);
      problem.expected.push_back(sum);
    }
  problem.tolerance = toleranceFor(isHalf, allowTF32, std::sqrt(double(k)));
  return rt::Status::success();
}

} // namespace

std::string RunReport::describe() const {
  std::ostringstream os;
  os << (passed ? "PASS" : "FAIL");
  if (medianMs > 0)
    os << " " << medianMs * 1000 << " us (median)";
  os << ": " << checkedElements << " elements, worst err/tol "
     << worstErrorRatio << ", max |err| " << maxAbsError << " (rtol " << rtol
     << ", atol " << atol << ")";
  return os.str();
}

std::vector<std::string> listHarnessKernels() {
  return {"gather_matmul", "matmul", "softmax", "vector_add"};
}

std::map<std::string, int64_t> defaultSizes(const std::string &kernel) {
  if (kernel == "vector_add")
    return {{"n_elements", 1 << 20}};
  if (kernel == "softmax")
    return {{"n_rows", 1024}, {"n_cols", 1024}};
  if (kernel == "gather_matmul")
    return {{"M", 512}, {"N", 256}, {"K", 256}, {"R", 1024}};
  return {{"M", 512}, {"N", 512}, {"K", 512}};
}

std::map<std::string, int64_t> tailSizes(const std::string &kernel) {
  if (kernel == "vector_add")
    return {{"n_elements", 100003}};
  if (kernel == "softmax")
    return {{"n_rows", 37}, {"n_cols", 1000}};
  if (kernel == "gather_matmul")
    return {{"M", 203}, {"N", 176}, {"K", 208}, {"R", 301}};
  return {{"M", 203}, {"N", 176}, {"K", 208}};
}

rt::Result<std::map<std::string, int64_t>> parseSizes(const std::string &text) {
  std::map<std::string, int64_t> sizes;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return rt::Status::error("size '" + item + "' is not NAME=VALUE");
    std::string value = item.substr(equals + 1);
    char *end = nullptr;
    long long parsed = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || parsed <= 0)
      return rt::Status::error("size '" + item +
                               "' needs a positive integer value");
    sizes[item.substr(0, equals)] = parsed;
  }
  return sizes;
}

rt::Result<RunReport> runAndCheck(const rt::Context &context,
                                  const rt::Kernel &kernel,
                                  const RunRequest &request) {
  std::mt19937 rng(request.seed);
  Problem problem;
  rt::Status status = rt::Status::success();
  if (request.kernel == "vector_add")
    status = buildVectorAdd(context, request, rng, problem);
  else if (request.kernel == "softmax")
    status = buildSoftmax(context, request, rng, problem);
  else if (request.kernel == "matmul")
    status = buildMatmul(context, request, rng, problem, /*gather=*/false);
  else if (request.kernel == "gather_matmul")
    status = buildMatmul(context, request, rng, problem, /*gather=*/true);
  else
    status = rt::Status::error("the harness has no reference for kernel '" +
                               request.kernel + "'");
  if (!status.ok())
    return status;

  auto pack = kernel.makeArgPack();
  if (!pack)
    return pack.status();
  for (size_t index = 0; index < problem.args.size(); ++index) {
    status = problem.args[index](*pack, index);
    if (!status.ok())
      return status;
  }
  status = rt::launch(kernel, problem.grid, *pack);
  if (!status.ok())
    return status;
  status = context.synchronize();
  if (!status.ok())
    return status.withContext("running " + request.kernel);

  const rt::DeviceBuffer &output = problem.buffers[problem.outputBuffer];
  HostTensor result(problem.outputIsHalf, problem.expected.size());
  status = output.copyToHost(result.bytes.data(), result.bytes.size());
  if (!status.ok())
    return status;
  RunReport report;
  report.rtol = problem.tolerance.rtol;
  report.atol = problem.tolerance.atol;
  report.checkedElements = static_cast<int64_t>(problem.expected.size());
  for (size_t i = 0; i < problem.expected.size(); ++i) {
    double got = result.get(i), want = problem.expected[i];
    double error = std::fabs(got - want);
    double ratio = error / (report.atol + report.rtol * std::fabs(want));
    if (!std::isfinite(got))
      ratio = error = INFINITY;
    report.maxAbsError = std::max(report.maxAbsError, error);
    report.worstErrorRatio = std::max(report.worstErrorRatio, ratio);
  }
  report.passed = report.worstErrorRatio <= 1.0;

  if (request.timingRepetitions > 0) {
    auto start = rt::Event::create(context);
    auto stop = rt::Event::create(context);
    if (!start || !stop)
      return !start ? start.status() : stop.status();
    for (int warmup = 0; warmup < 3; ++warmup)
      if (!(status = rt::launch(kernel, problem.grid, *pack)).ok())
        return status;
    std::vector<double> times;
    for (int rep = 0; rep < request.timingRepetitions; ++rep) {
      if (!(status = start->record()).ok() ||
          !(status = rt::launch(kernel, problem.grid, *pack)).ok() ||
          !(status = stop->record()).ok() || !(status = stop->synchronize()).ok())
        return status;
      auto elapsed = rt::Event::elapsedMs(*start, *stop);
      if (!elapsed)
        return elapsed.status();
      times.push_back(*elapsed);
    }
    std::sort(times.begin(), times.end());
    report.medianMs = times[times.size() / 2];
  }
  return report;
}

} // namespace tilec::harness
