//===- KernelHarness.cpp - run kernels on the GPU against a reference ----===//

#include "tilec/Harness/KernelHarness.h"

#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/Launch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
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

/// bf16 keeps the upper half of an f32: rounded to nearest even, NaN kept
/// quiet.
uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

double bfloat16ToDouble(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

/// A host tensor of f32, f16 or bf16 elements, kept in the device format;
/// get() gives the exact stored values as doubles.
struct HostTensor {
  ElementFormat format = ElementFormat::F32;
  std::vector<uint8_t> bytes;

  HostTensor(ElementFormat format, size_t count)
      : format(format), bytes(count * elementBytes()) {}
  size_t elementBytes() const { return format == ElementFormat::F32 ? 4 : 2; }
  size_t size() const { return bytes.size() / elementBytes(); }
  void set(size_t index, double value) {
    float f = static_cast<float>(value);
    if (format == ElementFormat::F32) {
      std::memcpy(&bytes[index * 4], &f, 4);
      return;
    }
    uint16_t h =
        format == ElementFormat::F16 ? floatToHalf(f) : floatToBFloat16(f);
    std::memcpy(&bytes[index * 2], &h, 2);
  }
  double get(size_t index) const {
    if (format == ElementFormat::F32) {
      float f;
      std::memcpy(&f, &bytes[index * 4], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[index * 2], 2);
    return format == ElementFormat::F16 ? halfToDouble(h)
                                        : bfloat16ToDouble(h);
  }
};

struct Tolerance {
  double rtol, atol;
};

Tolerance toleranceFor(ElementFormat format, bool tf32,
                       double accumulationScale) {
  // The output is rounded to its format: at most 2^-11 relative for f16 and
  // 2^-8 for bf16, with the f32 accumulation well inside.
  if (format != ElementFormat::F32)
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

/// splitmix64: deterministic per seed and a few times faster than
/// mt19937 + uniform_real_distribution, which matters for the 2 x 16 M
/// elements of a 4096^3 matmul built while the autotuner compiles.
class Random {
public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }
  /// Uniform integer in [0, bound).
  int64_t below(int64_t bound) {
    return static_cast<int64_t>(next() % static_cast<uint64_t>(bound));
  }

private:
  uint64_t state_;
};

/// Fills `tensor` with uniform values in [lo, hi). Without a reference to
/// compute (benchmark inputs), only the first kTile elements are drawn and
/// repeated: the timing does not depend on the values, and drawing 2 x 16 M
/// elements for a 4096^3 matmul would otherwise dominate a tuning whose
/// compiles hit the cache. The tile length is odd so that rows of a matrix do
/// not line up with it.
void fillUniform(HostTensor &tensor, Random &rng, double lo, double hi,
                 bool withReference) {
  constexpr size_t kTile = 65537;
  size_t count = tensor.size();
  size_t drawn = withReference ? count : std::min(count, kTile);
  for (size_t i = 0; i < drawn; ++i)
    tensor.set(i, rng.uniform(lo, hi));
  size_t elementBytes = tensor.elementBytes();
  size_t filled = drawn * elementBytes, total = count * elementBytes;
  while (filled < total && filled > 0) {
    size_t chunk = std::min(filled, total - filled);
    std::memcpy(tensor.bytes.data() + filled, tensor.bytes.data(), chunk);
    filled += chunk;
  }
}

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
  Problem::Argument argument;
  argument.isPointer = true;
  argument.buffer = buffer;
  problem.arguments.push_back(argument);
}

/// Binds the integer arguments, which follow the pointers in every kernel's
/// signature.
rt::Status addIntegerArguments(const RunRequest &request, Problem &problem) {
  auto values = integerArguments(request);
  if (!values)
    return values.status();
  for (const auto &[name, value] : *values) {
    Problem::Argument argument;
    argument.value = value;
    problem.arguments.push_back(argument);
  }
  return rt::Status::success();
}

rt::Status addBuffer(const rt::Context &context, Problem &problem,
                     const std::vector<uint8_t> &host, bool poison) {
  auto buffer = upload(context, host, poison);
  if (!buffer)
    return buffer.status();
  problem.buffers.push_back(std::move(*buffer));
  return rt::Status::success();
}

rt::Status requireMultiple(const std::string &name, int64_t value,
                           int64_t divisor) {
  if (value % divisor != 0)
    return rt::Status::error(name + " = " + std::to_string(value) +
                             " breaks the kernel's divisibility-by-" +
                             std::to_string(divisor) + " specialization");
  return rt::Status::success();
}

rt::Status requirePositive(const std::map<std::string, int64_t> &sizes) {
  for (const auto &[name, value] : sizes)
    if (value <= 0)
      return rt::Status::error("size " + name + " = " + std::to_string(value) +
                               " must be positive");
  return rt::Status::success();
}

rt::Status buildVectorAdd(const rt::Context &context, const RunRequest &request,
                          Random &rng, Problem &problem, bool withReference) {
  TILEC_TRY_ASSIGN(n, lookup(request.sizes, "n_elements", "size"));
  HostTensor x(ElementFormat::F32, n), y(ElementFormat::F32, n),
      out(ElementFormat::F32, n);
  fillUniform(x, rng, -1, 1, withReference);
  fillUniform(y, rng, -1, 1, withReference);
  for (const HostTensor *tensor : {&x, &y, &out})
    if (rt::Status status =
            addBuffer(context, problem, tensor->bytes, tensor == &out);
        !status.ok())
      return status;
  for (size_t b = 0; b < 3; ++b)
    addPointer(problem, b);
  if (rt::Status status = addIntegerArguments(request, problem); !status.ok())
    return status;
  problem.outputBuffer = 2;
  if (withReference)
    for (int64_t i = 0; i < n; ++i)
      problem.expected.push_back(x.get(i) + y.get(i));
  problem.rtol = 1e-6;
  problem.atol = 1e-7;
  return rt::Status::success();
}

rt::Status buildSoftmax(const rt::Context &context, const RunRequest &request,
                        Random &rng, Problem &problem, bool withReference) {
  TILEC_TRY_ASSIGN(rows, lookup(request.sizes, "n_rows", "size"));
  TILEC_TRY_ASSIGN(cols, lookup(request.sizes, "n_cols", "size"));
  HostTensor in(ElementFormat::F32, rows * cols),
      out(ElementFormat::F32, rows * cols);
  fillUniform(in, rng, -4, 4, withReference);
  for (const HostTensor *tensor : {&out, &in})
    if (rt::Status status =
            addBuffer(context, problem, tensor->bytes, tensor == &out);
        !status.ok())
      return status;
  addPointer(problem, 0);
  addPointer(problem, 1);
  if (rt::Status status = addIntegerArguments(request, problem); !status.ok())
    return status;
  problem.outputBuffer = 0;
  if (withReference) {
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
  }
  problem.rtol = 1e-5;
  problem.atol = 1e-7;
  return rt::Status::success();
}

/// matmul and gather_matmul: C[M, N] = A[rows(m), :] @ B.
rt::Status buildMatmul(const rt::Context &context, const RunRequest &request,
                       Random &rng, Problem &problem, bool gather,
                       bool withReference) {
  TILEC_TRY_ASSIGN(m, lookup(request.sizes, "M", "size"));
  TILEC_TRY_ASSIGN(n, lookup(request.sizes, "N", "size"));
  TILEC_TRY_ASSIGN(k, lookup(request.sizes, "K", "size"));
  for (auto [name, value] : {std::pair("K (stride_am)", k),
                             std::pair("N (stride_bk, stride_cm)", n)}) {
    rt::Status status = requireMultiple(name, value, 16);
    if (!status.ok())
      return status;
  }
  auto dtype = request.types.find("DTYPE");
  std::string dtypeName = dtype == request.types.end() ? "f16" : dtype->second;
  if (dtypeName != "f16" && dtypeName != "bf16" && dtypeName != "f32")
    return rt::Status::error("the harness has f16, bf16 and f32 inputs for " +
                             request.kernel + ", not DTYPE=" + dtypeName);
  ElementFormat format = dtypeName == "f16"    ? ElementFormat::F16
                         : dtypeName == "bf16" ? ElementFormat::BF16
                                               : ElementFormat::F32;
  auto tf32 = request.params.find("ALLOW_TF32");
  bool allowTF32 = format == ElementFormat::F32 &&
                   tf32 != request.params.end() && tf32->second;
  int64_t sourceRows = m;
  if (gather) {
    auto rows = request.sizes.find("R");
    sourceRows = rows == request.sizes.end() ? 2 * m : rows->second;
  }
  HostTensor a(format, sourceRows * k), b(format, k * n), c(format, m * n);
  fillUniform(a, rng, -1, 1, withReference);
  fillUniform(b, rng, -1, 1, withReference);
  // Which row of A feeds row m of C; -1 (0xFFFFFFFF) reads zeros.
  std::vector<int32_t> rowOf(m);
  for (int64_t i = 0; i < m; ++i)
    rowOf[i] = !gather ? static_cast<int32_t>(i)
               : rng.uniform(0, 1) < 0.2
                   ? -1
                   : static_cast<int32_t>(rng.below(sourceRows));

  for (const HostTensor *tensor : {&a, &b, &c})
    if (rt::Status status =
            addBuffer(context, problem, tensor->bytes, tensor == &c);
        !status.ok())
      return status;
  addPointer(problem, 0);
  addPointer(problem, 1);
  addPointer(problem, 2);
  if (gather) {
    std::vector<uint8_t> indexBytes(m * 4);
    std::memcpy(indexBytes.data(), rowOf.data(), indexBytes.size());
    if (rt::Status status = addBuffer(context, problem, indexBytes, false);
        !status.ok())
      return status;
    addPointer(problem, 3);
  }
  if (rt::Status status = addIntegerArguments(request, problem); !status.ok())
    return status;
  problem.outputBuffer = 2;
  problem.outputFormat = format;
  if (withReference) {
    std::vector<double> bValues(b.size());
    for (size_t i = 0; i < b.size(); ++i)
      bValues[i] = b.get(i);
    std::vector<double> row(n);
    for (int64_t i = 0; i < m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      if (rowOf[i] >= 0)
        for (int64_t kk = 0; kk < k; ++kk) {
          double av = a.get(rowOf[i] * k + kk);
          const double *bRow = &bValues[kk * n];
          for (int64_t j = 0; j < n; ++j)
            row[j] += av * bRow[j];
        }
      problem.expected.insert(problem.expected.end(), row.begin(), row.end());
    }
  }
  Tolerance tolerance = toleranceFor(format, allowTF32, std::sqrt(double(k)));
  problem.rtol = tolerance.rtol;
  problem.atol = tolerance.atol;
  return rt::Status::success();
}

} // namespace

rt::Result<std::vector<std::pair<std::string, int64_t>>>
integerArguments(const RunRequest &request) {
  auto size = [&](const char *name) { return lookup(request.sizes, name, "size"); };
  using Values = std::vector<std::pair<std::string, int64_t>>;
  if (request.kernel == "vector_add") {
    TILEC_TRY_ASSIGN(n, size("n_elements"));
    return Values{{"n_elements", n}};
  }
  if (request.kernel == "softmax") {
    // Rows are dense: both row strides are n_cols.
    TILEC_TRY_ASSIGN(cols, size("n_cols"));
    return Values{{"input_row_stride", cols},
                  {"output_row_stride", cols},
                  {"n_cols", cols}};
  }
  if (request.kernel == "matmul" || request.kernel == "gather_matmul") {
    // Row-major A (M x K), B (K x N), C (M x N).
    TILEC_TRY_ASSIGN(m, size("M"));
    TILEC_TRY_ASSIGN(n, size("N"));
    TILEC_TRY_ASSIGN(k, size("K"));
    return Values{{"M", m},         {"N", n},         {"K", k},
                  {"stride_am", k}, {"stride_bk", n}, {"stride_cm", n}};
  }
  return rt::Status::error("the harness has no reference for kernel '" +
                           request.kernel + "'");
}

rt::Result<std::map<std::string, int64_t>>
callValues(const RunRequest &request) {
  auto arguments = integerArguments(request);
  if (!arguments)
    return arguments.status();
  std::map<std::string, int64_t> values = request.sizes;
  for (const auto &[name, value] : *arguments)
    values[name] = value;
  return values;
}

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

rt::Result<std::map<std::string, int64_t>>
parseIntegers(const std::string &text) {
  std::map<std::string, int64_t> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0)
      return rt::Status::error("'" + item + "' is not NAME=VALUE");
    std::string value = item.substr(equals + 1);
    char *end = nullptr;
    long long parsed = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0')
      return rt::Status::error("'" + item + "' needs an integer value");
    values[item.substr(0, equals)] = parsed;
  }
  return values;
}

rt::Result<std::map<std::string, std::string>>
parseTypes(const std::string &text) {
  std::map<std::string, std::string> types;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == item.size())
      return rt::Status::error("type '" + item + "' is not NAME=TYPE");
    types[item.substr(0, equals)] = item.substr(equals + 1);
  }
  return types;
}

double problemFlops(const std::string &kernel,
                    const std::map<std::string, int64_t> &sizes) {
  if (kernel != "matmul" && kernel != "gather_matmul")
    return 0;
  auto m = sizes.find("M"), n = sizes.find("N"), k = sizes.find("K");
  if (m == sizes.end() || n == sizes.end() || k == sizes.end())
    return 0;
  return 2.0 * double(m->second) * double(n->second) * double(k->second);
}

rt::Result<rt::Dim3> harnessGrid(const std::string &kernel,
                                 const std::map<std::string, int64_t> &params,
                                 const std::map<std::string, int64_t> &sizes) {
  auto toAxis = [](int64_t value) { return static_cast<uint32_t>(value); };
  if (kernel == "vector_add") {
    TILEC_TRY_ASSIGN(n, lookup(sizes, "n_elements", "size"));
    TILEC_TRY_ASSIGN(block, lookup(params, "BLOCK", "meta-parameter"));
    return rt::Dim3{toAxis(cdiv(n, block)), 1, 1};
  }
  if (kernel == "softmax") {
    TILEC_TRY_ASSIGN(rows, lookup(sizes, "n_rows", "size"));
    TILEC_TRY_ASSIGN(cols, lookup(sizes, "n_cols", "size"));
    TILEC_TRY_ASSIGN(block, lookup(params, "BLOCK_N", "meta-parameter"));
    if (block < cols)
      return rt::Status::error("softmax needs BLOCK_N >= n_cols (" +
                               std::to_string(block) + " < " +
                               std::to_string(cols) + ")");
    return rt::Dim3{toAxis(rows), 1, 1};
  }
  if (kernel == "matmul" || kernel == "gather_matmul") {
    TILEC_TRY_ASSIGN(m, lookup(sizes, "M", "size"));
    TILEC_TRY_ASSIGN(n, lookup(sizes, "N", "size"));
    TILEC_TRY_ASSIGN(blockM, lookup(params, "BLOCK_M", "meta-parameter"));
    TILEC_TRY_ASSIGN(blockN, lookup(params, "BLOCK_N", "meta-parameter"));
    if (kernel == "gather_matmul")
      return rt::Dim3{toAxis(cdiv(m, blockM)), toAxis(cdiv(n, blockN)), 1};
    return rt::Dim3{toAxis(cdiv(m, blockM) * cdiv(n, blockN)), 1, 1};
  }
  return rt::Status::error("the harness has no reference for kernel '" +
                           kernel + "'");
}

rt::Result<std::unique_ptr<Problem>> buildProblem(const rt::Context &context,
                                                  const RunRequest &request,
                                                  bool withReference) {
  if (rt::Status status = requirePositive(request.sizes); !status.ok())
    return status;
  Random rng(request.seed);
  auto problem = std::make_unique<Problem>();
  problem->kernel = request.kernel;
  rt::Status status = rt::Status::success();
  if (request.kernel == "vector_add")
    status = buildVectorAdd(context, request, rng, *problem, withReference);
  else if (request.kernel == "softmax")
    status = buildSoftmax(context, request, rng, *problem, withReference);
  else if (request.kernel == "matmul")
    status = buildMatmul(context, request, rng, *problem, /*gather=*/false,
                         withReference);
  else if (request.kernel == "gather_matmul")
    status = buildMatmul(context, request, rng, *problem, /*gather=*/true,
                         withReference);
  else
    status = rt::Status::error("the harness has no reference for kernel '" +
                               request.kernel + "'");
  if (!status.ok())
    return status;
  problem->flopCount = problemFlops(request.kernel, request.sizes);
  return problem;
}

rt::Status Problem::bind(rt::ArgPack &pack) const {
  if (pack.size() != arguments.size())
    return rt::Status::error(kernel + " takes " + std::to_string(pack.size()) +
                             " arguments, the harness built " +
                             std::to_string(arguments.size()));
  for (size_t index = 0; index < arguments.size(); ++index) {
    const Argument &argument = arguments[index];
    rt::Status status =
        argument.isPointer
            ? pack.setPointer(index, buffers[argument.buffer].ptr())
            : pack.setInt(index, argument.value);
    if (!status.ok())
      return status;
  }
  return rt::Status::success();
}

rt::Result<RunReport> Problem::check() const {
  if (expected.empty())
    return rt::Status::error("the " + kernel +
                             " problem was built without a reference");
  const rt::DeviceBuffer &output = buffers[outputBuffer];
  HostTensor result(outputFormat, expected.size());
  if (rt::Status status =
          output.copyToHost(result.bytes.data(), result.bytes.size());
      !status.ok())
    return status;
  RunReport report;
  report.rtol = rtol;
  report.atol = atol;
  report.checkedElements = static_cast<int64_t>(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    double got = result.get(i), want = expected[i];
    double error = std::fabs(got - want);
    double ratio = error / (report.atol + report.rtol * std::fabs(want));
    if (!std::isfinite(got))
      ratio = error = INFINITY;
    report.maxAbsError = std::max(report.maxAbsError, error);
    report.worstErrorRatio = std::max(report.worstErrorRatio, ratio);
  }
  report.passed = report.worstErrorRatio <= 1.0;
  return report;
}

rt::Result<RunReport> runAndCheck(const rt::Context &context,
                                  const rt::Kernel &kernel,
                                  const RunRequest &request) {
  auto grid = harnessGrid(request.kernel, request.params, request.sizes);
  if (!grid)
    return grid.status();
  auto problem = buildProblem(context, request, /*withReference=*/true);
  if (!problem)
    return problem.status();
  auto pack = kernel.makeArgPack();
  if (!pack)
    return pack.status();
  rt::Status status = (*problem)->bind(*pack);
  if (!status.ok())
    return status;
  status = rt::launch(kernel, *grid, *pack);
  if (!status.ok())
    return status;
  status = context.synchronize();
  if (!status.ok())
    return status.withContext("running " + request.kernel);

  auto checked = (*problem)->check();
  if (!checked)
    return checked.status();
  RunReport report = *checked;

  if (request.timingRepetitions > 0) {
    auto start = rt::Event::create(context);
    auto stop = rt::Event::create(context);
    if (!start || !stop)
      return !start ? start.status() : stop.status();
    for (int warmup = 0; warmup < 3; ++warmup)
      if (!(status = rt::launch(kernel, *grid, *pack)).ok())
        return status;
    std::vector<double> times;
    for (int rep = 0; rep < request.timingRepetitions; ++rep) {
      if (!(status = start->record()).ok() ||
          !(status = rt::launch(kernel, *grid, *pack)).ok() ||
          !(status = stop->record()).ok() ||
          !(status = stop->synchronize()).ok())
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
