//===- Reference.cpp - What every kernel reference shares -----------------===//

#include "tilec/Harness/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace tilec::harness {
namespace {

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

} // namespace

Result<ElementFormat> formatOf(const std::string &type) {
  if (type == "f32")
    return ElementFormat::F32;
  if (type == "f16")
    return ElementFormat::F16;
  if (type == "bf16")
    return ElementFormat::BF16;
  if (type == "i32")
    return ElementFormat::I32;
  if (type == "i64")
    return ElementFormat::I64;
  return Status::error("the harness has no host format for type '" + type +
                       "' (f32, f16, bf16, i32, i64)");
}

void HostTensor::set(size_t index, double value) {
  if (format == ElementFormat::I64) {
    int64_t i = static_cast<int64_t>(value);
    std::memcpy(&bytes[index * 8], &i, 8);
    return;
  }
  if (format == ElementFormat::I32) {
    int32_t i = static_cast<int32_t>(value);
    std::memcpy(&bytes[index * 4], &i, 4);
    return;
  }
  float f = static_cast<float>(value);
  if (format == ElementFormat::F32) {
    std::memcpy(&bytes[index * 4], &f, 4);
    return;
  }
  uint16_t h =
      format == ElementFormat::F16 ? floatToHalf(f) : floatToBFloat16(f);
  std::memcpy(&bytes[index * 2], &h, 2);
}

void HostTensor::setInteger(size_t index, int64_t value) {
  if (format == ElementFormat::I64) {
    std::memcpy(&bytes[index * 8], &value, 8);
    return;
  }
  set(index, static_cast<double>(value));
}

double HostTensor::get(size_t index) const {
  if (format == ElementFormat::I64) {
    int64_t i;
    std::memcpy(&i, &bytes[index * 8], 8);
    return static_cast<double>(i);
  }
  if (format == ElementFormat::I32) {
    int32_t i;
    std::memcpy(&i, &bytes[index * 4], 4);
    return i;
  }
  if (format == ElementFormat::F32) {
    float f;
    std::memcpy(&f, &bytes[index * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[index * 2], 2);
  return format == ElementFormat::F16 ? halfToDouble(h) : bfloat16ToDouble(h);
}

std::vector<double> HostTensor::toDoubles() const {
  std::vector<double> values(size());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = get(i);
  return values;
}

void forEachRowRange(int64_t count,
                     const std::function<void(int64_t, int64_t)> &body) {
  int64_t threads = std::min<int64_t>(
      count, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    if (count > 0)
      body(0, count);
    return;
  }
  std::vector<std::thread> workers;
  int64_t step = (count + threads - 1) / threads;
  for (int64_t begin = 0; begin < count; begin += step)
    workers.emplace_back(body, begin, std::min(count, begin + step));
  for (std::thread &worker : workers)
    worker.join();
}

void fillUniform(HostTensor &tensor, Random &rng, double lo, double hi,
                 bool withReference) {
  // Odd, so that rows of a matrix do not line up with the repeated tile.
  constexpr size_t kTile = 65537;
  size_t count = tensor.size();
  size_t drawn = withReference ? count : std::min(count, kTile);
  for (size_t i = 0; i < drawn; ++i)
    tensor.set(i, rng.uniform(lo, hi));
  size_t elementBytes = HostTensor::elementBytes(tensor.format);
  size_t filled = drawn * elementBytes, total = count * elementBytes;
  while (filled < total && filled > 0) {
    size_t chunk = std::min(filled, total - filled);
    std::memcpy(tensor.bytes.data() + filled, tensor.bytes.data(), chunk);
    filled += chunk;
  }
}

Tolerance toleranceFor(ElementFormat format, bool tf32,
                       double accumulationScale) {
  // The output is rounded to its format: at most 2^-11 relative for f16 and
  // 2^-8 for bf16, with the f32 accumulation well inside.
  if (format == ElementFormat::F16 || format == ElementFormat::BF16)
    return {1e-2, 1e-2 * accumulationScale};
  if (tf32)
    return {1e-3, 1e-3 * accumulationScale};
  return {1e-5, 1e-5 * accumulationScale};
}

Result<int64_t> ReferenceRequest::value(const std::string &name) const {
  if (auto it = arguments.find(name); it != arguments.end())
    return it->second;
  if (auto it = call.sizes.find(name); it != call.sizes.end())
    return it->second;
  return Status::error("a call of " + kernel.getName() + " needs the size '" +
                       name + "'");
}

Result<std::string> ReferenceRequest::type(const std::string &name) const {
  if (auto it = call.types.find(name); it != call.types.end())
    return it->second;
  for (const TypeParameter &parameter : kernel.getTypeParameters())
    if (parameter.name == name && parameter.defaultValue)
      return *parameter.defaultValue;
  return Status::error(kernel.getName() + " has no type parameter '" + name +
                       "' with a default");
}

int64_t ReferenceRequest::paramOrDefault(const std::string &name) const {
  for (const MetaParameter &parameter : kernel.getMetaParameters())
    if (parameter.name == name)
      return param(name, parameter.defaultValue.value_or(0));
  return param(name, 0);
}

int64_t ReferenceRequest::param(const std::string &name,
                                int64_t fallback) const {
  auto it = call.params.find(name);
  return it == call.params.end() ? fallback : it->second;
}

// ReferenceList.inc is generated by test/harness/CMakeLists.txt: one
// TILEC_REFERENCE_ENTRY(name) per TILEC_REFERENCE(name) in test/reference/.
#define TILEC_REFERENCE_ENTRY(NAME)                                            \
  Result<ReferenceProblem> reference_##NAME(const ReferenceRequest &);
#include "ReferenceList.inc"
#undef TILEC_REFERENCE_ENTRY

namespace {
struct ReferenceEntry {
  const char *kernel;
  ReferenceFn build;
};
const ReferenceEntry kReferences[] = {
#define TILEC_REFERENCE_ENTRY(NAME) {#NAME, &reference_##NAME},
#include "ReferenceList.inc"
#undef TILEC_REFERENCE_ENTRY
};
} // namespace

ReferenceFn findReference(const std::string &kernel) {
  for (const ReferenceEntry &entry : kReferences)
    if (kernel == entry.kernel)
      return entry.build;
  return nullptr;
}

std::vector<std::string> listReferenceKernels() {
  std::vector<std::string> names;
  for (const ReferenceEntry &entry : kReferences)
    names.push_back(entry.kernel);
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace tilec::harness
