//===- ArgPack.cpp - Typed kernel arguments for cuLaunchKernel ------------===//

#include "tilec/runtime/ArgPack.h"

#include "tilec/runtime/TensorMap.h"

#include <algorithm>
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

// A tensor map parameter is `.param .align 64 .b8 map[128]`, which holds the
// bytes of a host CUtensorMap (that type's 128-byte alignment is the host's).
constexpr size_t kTensorMapBytes = 128;
constexpr size_t kTensorMapAlign = 64;
static_assert(sizeof(CUtensorMap) == kTensorMapBytes,
              "a tensor map parameter holds the driver's CUtensorMap");

uint64_t fnv1a(uint64_t hash, uint64_t value) {
  return (hash ^ value) * 1099511628211ull;
}

// "tensor map 0 (a_ptr: M x K, row stride stride_am)", the prefix of every
// error about a map.
std::string describeMap(size_t index, const TensorMapParam &map) {
  return "tensor map " + std::to_string(index) + " (" + map.base + ": " +
         map.rows + " x " + map.cols + ", row stride " + map.rowStride + ")";
}

} // namespace

Result<ArgPack> ArgPack::create(std::vector<KernelArg> signature,
                                std::vector<TensorMapParam> tensorMaps) {
  ArgPack pack;
  pack.mapSlots_.reserve(tensorMaps.size());
  for (size_t i = 0; i < tensorMaps.size(); ++i) {
    const char *key = "";
    Result<ResolvedTensorMap> resolved =
        resolveTensorMap(tensorMaps[i], signature, &key);
    if (!resolved)
      return Status::error(ErrorKind::InvalidArgument,
                           describeMap(i, tensorMaps[i]) + ": " + key + " " +
                               resolved.message());
    MapSlot slot;
    slot.args = *resolved;
    pack.mapSlots_.push_back(slot);
  }
  pack.offsets_.reserve(signature.size());
  size_t offset = 0;
  for (const KernelArg &arg : signature) {
    size_t size = argTypeSize(arg.type);
    offset = (offset + size - 1) / size * size;
    pack.offsets_.push_back(offset);
    offset += size;
  }
  for (MapSlot &slot : pack.mapSlots_) {
    offset = (offset + kTensorMapAlign - 1) / kTensorMapAlign * kTensorMapAlign;
    slot.offset = offset;
    offset += kTensorMapBytes;
  }
  pack.bufferSize_ = offset;
  pack.signatureHash_ = hashSignature(signature, tensorMaps);
  pack.signature_ = std::move(signature);
  pack.tensorMaps_ = std::move(tensorMaps);
  pack.storage_.reset(new StorageBlock[pack.storageBlocks()]());
  pack.pointers_.reset(
      new void *[pack.signature_.size() + pack.mapSlots_.size() + 1]());
  pack.isSet_.assign(pack.signature_.size(), false);
  pack.rebuildPointers();
  return pack;
}

ArgPack::ArgPack(const ArgPack &other)
    : signature_(other.signature_), tensorMaps_(other.tensorMaps_),
      offsets_(other.offsets_), mapSlots_(other.mapSlots_),
      bufferSize_(other.bufferSize_),
      storage_(new StorageBlock[other.storageBlocks()]),
      pointers_(
          new void *[other.signature_.size() + other.mapSlots_.size() + 1]()),
      isSet_(other.isSet_), setCount_(other.setCount_),
      signatureHash_(other.signatureHash_) {
  // The maps' bytes come along with the values they were encoded from.
  std::memcpy(storage_.get(), other.storage_.get(),
              storageBlocks() * sizeof(StorageBlock));
  rebuildPointers();
}

ArgPack &ArgPack::operator=(const ArgPack &other) {
  if (this != &other)
    *this = ArgPack(other);
  return *this;
}

size_t ArgPack::argumentsEnd() const {
  return signature_.empty()
             ? 0
             : offsets_.back() + argTypeSize(signature_.back().type);
}

Status ArgPack::placeTensorMaps(const std::vector<size_t> &offsets) {
  if (offsets.size() != mapSlots_.size())
    return Status::error("placing " + std::to_string(mapSlots_.size()) +
                         " tensor map(s) at " + std::to_string(offsets.size()) +
                         " offset(s)");
  size_t arguments = argumentsEnd();
  for (size_t j = 0; j < offsets.size(); ++j) {
    std::string where = describeMap(j, tensorMaps_[j]) + " at offset " +
                        std::to_string(offsets[j]);
    if (offsets[j] < arguments)
      return Status::error(where +
                           " would overlap the arguments, which end at " +
                           std::to_string(arguments));
    for (size_t k = 0; k < j; ++k)
      if (offsets[j] < offsets[k] + kTensorMapBytes &&
          offsets[k] < offsets[j] + kTensorMapBytes)
        return Status::error(where + " would overlap tensor map " +
                             std::to_string(k) + " at offset " +
                             std::to_string(offsets[k]));
  }
  size_t end = arguments;
  for (size_t j = 0; j < offsets.size(); ++j) {
    mapSlots_[j].offset = offsets[j];
    mapSlots_[j].encoded = false;
    end = std::max(end, offsets[j] + kTensorMapBytes);
  }
  std::unique_ptr<StorageBlock[]> old = std::move(storage_);
  bufferSize_ = end;
  storage_.reset(new StorageBlock[storageBlocks()]());
  std::memcpy(storage_.get(), old.get(), arguments);
  rebuildPointers();
  return Status::success();
}

size_t ArgPack::storageBlocks() const {
  return std::max<size_t>(1, (bufferSize_ + sizeof(StorageBlock) - 1) /
                                 sizeof(StorageBlock));
}

void ArgPack::rebuildPointers() {
  auto *base = reinterpret_cast<unsigned char *>(storage_.get());
  for (size_t i = 0; i < signature_.size(); ++i)
    pointers_[i] = base + offsets_[i];
  for (size_t j = 0; j < mapSlots_.size(); ++j)
    pointers_[signature_.size() + j] = base + mapSlots_[j].offset;
}

uint64_t ArgPack::hashSignature(const std::vector<KernelArg> &signature,
                                const std::vector<TensorMapParam> &tensorMaps) {
  // FNV-1a over the type codes, then the count.
  uint64_t hash = 14695981039346656037ull;
  for (const KernelArg &arg : signature)
    hash = fnv1a(hash, static_cast<uint64_t>(arg.type));
  hash = fnv1a(hash, signature.size());
  // Without maps the hash is what it was before kernels had them. With them,
  // what a map is made of, by argument position as the types are: a map of
  // other arguments, another box or swizzle would encode another array.
  if (tensorMaps.empty())
    return hash;
  for (const TensorMapParam &map : tensorMaps) {
    Result<ResolvedTensorMap> resolved = resolveTensorMap(map, signature);
    if (!resolved) {
      // create() refuses such a map; a kernel with one matches no pack.
      hash = fnv1a(hash, ~uint64_t(0));
      continue;
    }
    for (uint64_t part :
         {uint64_t(resolved->base), uint64_t(resolved->rows),
          uint64_t(resolved->cols), uint64_t(resolved->rowStride),
          uint64_t(resolved->element), uint64_t(map.boxRows),
          uint64_t(map.boxCols), uint64_t(map.swizzleBytes)})
      hash = fnv1a(hash, part);
  }
  return fnv1a(hash, tensorMaps.size());
}

uint64_t ArgPack::storedBits(size_t index) const {
  uint64_t bits = 0;
  // Little-endian: the narrow value is the low bytes.
  std::memcpy(&bits, pointers_[index], argTypeSize(signature_[index].type));
  return bits;
}

Status ArgPack::encodeTensorMaps(const Driver &driver) const {
  for (size_t j = 0; j < mapSlots_.size(); ++j)
    TILEC_RETURN_IF_ERROR(encodeTensorMap(driver, j));
  return Status::success();
}

Status ArgPack::encodeTensorMap(const Driver &driver, size_t map) const {
  const MapSlot &slot = mapSlots_[map];
  const ResolvedTensorMap &args = slot.args;
  const size_t indices[4] = {args.base, args.rows, args.cols, args.rowStride};
  uint64_t bits[4];
  for (int i = 0; i < 4; ++i)
    bits[i] = storedBits(indices[i]);
  if (slot.encoded && std::equal(bits, bits + 4, slot.encodedFrom))
    return Status::success();

  unsigned char *bytes =
      reinterpret_cast<unsigned char *>(storage_.get()) + slot.offset;
  slot.encoded = false;
  std::memset(bytes, 0, kTensorMapBytes);
  const TensorMapParam &param = tensorMaps_[map];
  auto refuse = [&](const std::string &problem) {
    return Status::error(ErrorKind::InvalidArgument,
                         describeMap(map, param) + ": " + problem);
  };
  const char *const keys[4] = {"base", "rows", "cols", "row_stride"};
  // An integer argument's value; `negative` for a negative signed one.
  uint64_t values[4];
  bool negative[4];
  for (int i = 0; i < 4; ++i) {
    const KernelArg &arg = signature_[indices[i]];
    if (!isSet_[indices[i]])
      return refuse(std::string(keys[i]) + " '" + arg.name + "' is not set");
    size_t width = argTypeSize(arg.type) * 8;
    uint64_t value = bits[i];
    if (isSignedArgType(arg.type) && width < 64 && (value >> (width - 1)) & 1)
      value |= ~uint64_t(0) << width;
    values[i] = value;
    negative[i] = isSignedArgType(arg.type) && static_cast<int64_t>(value) < 0;
  }
  auto text = [&](int i) {
    return negative[i] ? std::to_string(static_cast<int64_t>(values[i]))
                       : std::to_string(values[i]);
  };
  // The driver has no empty arrays. Encoding a side of 1 instead would let
  // the kernel read a row or column that is not the caller's, so an empty
  // array is refused: a caller with M = 0 skips the launch (its grid would
  // be empty anyway).
  for (int i : {1, 2})
    if (negative[i] || values[i] == 0)
      return refuse(std::string(keys[i]) + " '" + signature_[indices[i]].name +
                    "' is " + text(i) +
                    ": a tensor map's array needs at least one row and one "
                    "column (skip the launch of an empty problem)");
  if (negative[3])
    return refuse("row_stride '" + signature_[indices[3]].name + "' is " +
                  text(3) +
                  ": a tensor map's rows must be at increasing addresses");

  TiledArray2D array;
  array.base = DevicePtr{values[0]};
  array.element = args.element == ArgType::BF16  ? TmaElement::BF16
                  : args.element == ArgType::F32 ? TmaElement::F32
                                                 : TmaElement::F16;
  array.rows = values[1];
  array.cols = values[2];
  uint64_t elementBytes = uint64_t(tmaElementBytes(array.element));
  if (values[3] > (uint64_t(1) << 40))
    return refuse("row_stride '" + signature_[indices[3]].name + "' of " +
                  text(3) +
                  " elements is more than the driver's limit of 2^40 bytes");
  array.rowStrideBytes = values[3] * elementBytes;
  array.boxRows = param.boxRows;
  array.boxCols = param.boxCols;
  array.swizzle = param.swizzleBytes == 128  ? TmaSwizzle::Bytes128
                  : param.swizzleBytes == 64 ? TmaSwizzle::Bytes64
                  : param.swizzleBytes == 32 ? TmaSwizzle::Bytes32
                                             : TmaSwizzle::None;
  Result<CUtensorMap> encoded = encodeTiledArray2D(driver, array);
  if (!encoded) {
    // checkTiledArray2D's messages start "tensor map: "; the map is named
    // here already.
    std::string message = encoded.message();
    const std::string prefix = "tensor map: ";
    if (message.compare(0, prefix.size(), prefix) == 0)
      message.erase(0, prefix.size());
    return Status::error(encoded.status().kind(),
                         describeMap(map, param) + ": " + message);
  }
  std::memcpy(bytes, &*encoded, kTensorMapBytes);
  std::copy(bits, bits + 4, slot.encodedFrom);
  slot.encoded = true;
  return Status::success();
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

Status ArgPack::checkPointer(size_t index, DevicePtr value) const {
  TILEC_RETURN_IF_ERROR(checkIndex(index));
  if (signature_[index].type != ArgType::Ptr)
    return typeError(index, "a device pointer");
  return checkSpecialization(index, value.address, false);
}

Status ArgPack::setPointer(size_t index, DevicePtr value) {
  TILEC_RETURN_IF_ERROR(checkPointer(index, value));
  uint64_t address = value.address;
  store(index, &address);
  return Status::success();
}

bool ArgPack::holdsPointer(size_t index, DevicePtr value) const {
  if (index >= size() || !isSet_[index] ||
      signature_[index].type != ArgType::Ptr)
    return false;
  uint64_t address = 0;
  std::memcpy(&address, pointers_[index], sizeof(address));
  return address == value.address;
}

Status ArgPack::setInt(size_t index, int64_t value) {
  if (value >= 0)
    return setUInt(index, static_cast<uint64_t>(value));
  TILEC_RETURN_IF_ERROR(checkIndex(index));
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
  TILEC_RETURN_IF_ERROR(
      checkSpecialization(index, static_cast<uint64_t>(value), true));
  // Two's complement truncation of an in-range value keeps its meaning.
  store(index, &value);
  return Status::success();
}

Status ArgPack::setUInt(size_t index, uint64_t value) {
  TILEC_RETURN_IF_ERROR(checkIndex(index));
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
  TILEC_RETURN_IF_ERROR(checkSpecialization(index, value, false));
  // Little-endian: the low bytes of the 64-bit value are the narrow value.
  store(index, &value);
  return Status::success();
}

Status ArgPack::setFloat(size_t index, double value) {
  TILEC_RETURN_IF_ERROR(checkIndex(index));
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
