//===- ArgPack.cpp - Typed kernel arguments for cuLaunchKernel ------------===//

#include "tilec/runtime/ArgPack.h"

#include <cstdint>
#include <cstring>

// Narrow integers are stored as the low bytes of a 64-bit value.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "CUDA hosts are little-endian");

namespace tilec::rt {
namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// IEEE binary16, round to nearest even; overflow gives infinity as a C cast
// would, and NaN stays a (quiet) NaN.
uint16_t toHalfBits(float value) {
  uint32_t bits = floatBits(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude >= 0x7F800000u) {
    bool isNan = magnitude > 0x7F800000u;
    return static_cast<uint16_t>(
        sign | 0x7C00u | (isNan ? 0x200u | ((magnitude >> 13) & 0x3FFu) : 0u));
  }
  // 65520 and above round to infinity.
  if (magnitude >= 0x477FF000u)
    return static_cast<uint16_t>(sign | 0x7C00u);
  uint32_t exponent = magnitude >> 23;
  if (exponent < 113) {
    // Below 2^-14: a binary16 subnormal, counted in units of 2^-24. Anything
    // up to 2^-25 (ties to even) rounds to zero.
    if (exponent < 102)
      return static_cast<uint16_t>(sign);
    uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t result = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (result & 1u)))
      ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = ((exponent - 112) << 10) | ((magnitude >> 13) & 0x3FFu);
  uint32_t remainder = magnitude & 0x1FFFu;
  // A carry out of the mantissa correctly bumps the exponent.
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u)))
    ++result;
  return static_cast<uint16_t>(sign | result);
}

// bfloat16 is the upper half of binary32, rounded to nearest even.
uint16_t toBFloat16Bits(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

struct IntRange {
  int64_t min;
  uint64_t max;
};

IntRange rangeOf(ArgType type) {
  switch (type) {
  case ArgType::I8:
    return {INT8_MIN, INT8_MAX};
  case ArgType::I16:
    return {INT16_MIN, INT16_MAX};
  case ArgType::I32:
    return {INT32_MIN, INT32_MAX};
  case ArgType::I64:
    return {INT64_MIN, INT64_MAX};
  case ArgType::U8:
    return {0, UINT8_MAX};
  case ArgType::U16:
    return {0, UINT16_MAX};
  case ArgType::U32:
    return {0, UINT32_MAX};
  default:
    return {0, UINT64_MAX};
  }
}

} // namespace

Result<ArgPack> ArgPack::create(std::vector<KernelArg> signature) {
  ArgPack pack;
  pack.offsets_.reserve(signature.size());
  size_t offset = 0;
  for (const KernelArg &arg : signature) {
    size_t size = argTypeSize(arg.type);
    offset = (offset + size - 1) / size * size;
    pack.offsets_.push_back(offset);
    offset += size;
  }
  pack.bufferSize_ = offset;
  pack.signatureHash_ = hashSignature(signature);
  pack.signature_ = std::move(signature);
  pack.storage_.reset(new uint64_t[(offset + 7) / 8 + 1]());
  pack.pointers_.reset(new void *[pack.signature_.size() + 1]());
  pack.isSet_.assign(pack.signature_.size(), false);
  pack.rebuildPointers();
  return pack;
}

ArgPack::ArgPack(const ArgPack &other)
    : signature_(other.signature_), offsets_(other.offsets_),
      bufferSize_(other.bufferSize_),
      storage_(new uint64_t[(other.bufferSize_ + 7) / 8 + 1]),
      pointers_(new void *[other.signature_.size() + 1]), isSet_(other.isSet_),
      setCount_(other.setCount_), signatureHash_(other.signatureHash_) {
  std::memcpy(storage_.get(), other.storage_.get(),
              ((bufferSize_ + 7) / 8 + 1) * sizeof(uint64_t));
  rebuildPointers();
}

ArgPack &ArgPack::operator=(const ArgPack &other) {
  if (this != &other)
    *this = ArgPack(other);
  return *this;
}

void ArgPack::rebuildPointers() {
  auto *base = reinterpret_cast<unsigned char *>(storage_.get());
  for (size_t i = 0; i < signature_.size(); ++i)
    pointers_[i] = base + offsets_[i];
}

uint64_t ArgPack::hashSignature(const std::vector<KernelArg> &signature) {
  // FNV-1a over the type codes, then the count.
  uint64_t hash = 14695981039346656037ull;
  for (const KernelArg &arg : signature) {
    hash ^= static_cast<uint64_t>(arg.type);
    hash *= 1099511628211ull;
  }
  hash ^= signature.size();
  hash *= 1099511628211ull;
  return hash;
}

void ArgPack::store(size_t index, const void *bytes) {
  std::memcpy(pointers_[index], bytes, argTypeSize(signature_[index].type));
  if (!isSet_[index]) {
    isSet_[index] = true;
    ++setCount_;
  }
}

Status ArgPack::arityError(size_t given) const {
  std::string names;
  for (const KernelArg &arg : signature_)
    names += (names.empty() ? "" : ", ") + arg.name + ": " + arg.spelling;
  return Status::error("kernel takes " + std::to_string(size()) +
                       " argument(s) (" + names + "), got " +
                       std::to_string(given));
}

Status ArgPack::checkIndex(size_t index) const {
  if (index < size())
    return Status::success();
  return Status::error("argument index " + std::to_string(index) +
                       " is out of range: the kernel takes " +
                       std::to_string(size()) + " argument(s)");
}

Status ArgPack::checkSpecialization(size_t index, uint64_t bits,
                                    bool negative) const {
  const KernelArg &arg = signature_[index];
  // A power of two divides a two's complement value iff it divides its
  // magnitude, so the low bits decide for negative values too.
  bool divisible = (bits & static_cast<uint64_t>(arg.divisibility - 1)) == 0;
  bool one = !negative && bits == 1;
  if ((arg.divisibility <= 1 || divisible) && (!arg.equalToOne || one))
    return Status::success();
  std::string value = negative ? std::to_string(static_cast<int64_t>(bits))
                               : std::to_string(bits);
  if (arg.type == ArgType::Ptr)
    value = "address " + value;
  std::string broken = arg.equalToOne && !one
                           ? "is not 1"
                           : "is not a multiple of " +
                                 std::to_string(arg.divisibility);
  return Status::error("argument " + std::to_string(index) + " '" + arg.name +
                       "' (" + arg.spelling + "): " + value + " " + broken +
                       ", which this kernel was specialized for; use a "
                       "kernel compiled without that specialization");
}

Status ArgPack::typeError(size_t index, const char *given) const {
  const KernelArg &arg = signature_[index];
  const char *expected = arg.type == ArgType::Ptr   ? "a device pointer"
                         : isFloatArgType(arg.type) ? "a floating-point value"
                                                    : "an integer";
  return Status::error("argument " + std::to_string(index) + " '" + arg.name +
                       "' (" + arg.spelling + "): expected " + expected +
                       ", got " + given);
}

Status ArgPack::setPointer(size_t index, DevicePtr value) {
  if (Status status = checkIndex(index); !status.ok())
    return status;
  if (signature_[index].type != ArgType::Ptr)
    return typeError(index, "a device pointer");
  uint64_t address = value.address;
  if (Status status = checkSpecialization(index, address, false);
      !status.ok())
    return status;
  store(index, &address);
  return Status::success();
}

Status ArgPack::setInt(size_t index, int64_t value) {
  if (value >= 0)
    return setUInt(index, static_cast<uint64_t>(value));
  if (Status status = checkIndex(index); !status.ok())
    return status;
  ArgType type = signature_[index].type;
  if (!isIntegerArgType(type))
    return typeError(index, "an integer");
  IntRange range = rangeOf(type);
  if (value < range.min)
    return Status::error(
        "argument " + std::to_string(index) + " '" + signature_[index].name +
        "' (" + signature_[index].spelling + "): " + std::to_string(value) +
        " is out of range [" + std::to_string(range.min) + ", " +
        std::to_string(range.max) + "]");
  if (Status status =
          checkSpecialization(index, static_cast<uint64_t>(value), true);
      !status.ok())
    return status;
  // Two's complement truncation of an in-range value keeps its meaning.
  store(index, &value);
  return Status::success();
}

Status ArgPack::setUInt(size_t index, uint64_t value) {
  if (Status status = checkIndex(index); !status.ok())
    return status;
  ArgType type = signature_[index].type;
  if (!isIntegerArgType(type))
    return typeError(index, "an integer");
  IntRange range = rangeOf(type);
  if (value > range.max)
    return Status::error(
        "argument " + std::to_string(index) + " '" + signature_[index].name +
        "' (" + signature_[index].spelling + "): " + std::to_string(value) +
        " is out of range [" + std::to_string(range.min) + ", " +
        std::to_string(range.max) + "]");
  if (Status status = checkSpecialization(index, value, false); !status.ok())
    return status;
  // Little-endian: the low bytes of the 64-bit value are the narrow value.
  store(index, &value);
  return Status::success();
}

Status ArgPack::setFloat(size_t index, double value) {
  if (Status status = checkIndex(index); !status.ok())
    return status;
  switch (signature_[index].type) {
  case ArgType::F64:
    store(index, &value);
    return Status::success();
  case ArgType::F32: {
    float narrow = static_cast<float>(value);
    store(index, &narrow);
    return Status::success();
  }
  case ArgType::F16: {
    uint16_t bits = toHalfBits(static_cast<float>(value));
    store(index, &bits);
    return Status::success();
  }
  case ArgType::BF16: {
    uint16_t bits = toBFloat16Bits(static_cast<float>(value));
    store(index, &bits);
    return Status::success();
  }
  default:
    return typeError(index, "a floating-point value");
  }
}

} // namespace tilec::rt
