//===- Values.cpp - the interpreter's tensors and element types -----------===//

#include "Values.h"

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tilec::interp {

std::optional<ElementType> elementTypeOf(mlir::Type type) {
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
    type = tensor.getElementType();
  ElementType element;
  if (auto integer = llvm::dyn_cast<mlir::IntegerType>(type)) {
    element.width = integer.getWidth();
    if (element.width > 64)
      return std::nullopt;
    return element;
  }
  if (llvm::isa<mlir::IndexType>(type)) {
    element.width = 64;
    return element;
  }
  if (llvm::isa<tile::PointerType>(type)) {
    std::optional<ElementType> pointee = pointeeTypeOf(type);
    if (!pointee)
      return std::nullopt;
    element.kind = ElementKind::Pointer;
    element.width = 64;
    element.pointeeBytes = pointee->bytes();
    return element;
  }
  element.kind = ElementKind::Float;
  if (type.isF16())
    element.format = FloatFormat::F16, element.width = 16;
  else if (type.isBF16())
    element.format = FloatFormat::BF16, element.width = 16;
  else if (type.isF32())
    element.format = FloatFormat::F32, element.width = 32;
  else if (type.isF64())
    element.format = FloatFormat::F64, element.width = 64;
  else
    return std::nullopt;
  return element;
}

std::optional<ElementType> pointeeTypeOf(mlir::Type pointerType) {
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(pointerType))
    pointerType = tensor.getElementType();
  auto pointer = llvm::dyn_cast<tile::PointerType>(pointerType);
  if (!pointer)
    return std::nullopt;
  return elementTypeOf(pointer.getPointeeType());
}

size_t elementCount(const std::vector<int64_t> &shape) {
  size_t count = 1;
  for (int64_t extent : shape)
    count *= static_cast<size_t>(extent);
  return count;
}

Tensor::Tensor(std::vector<int64_t> tensorShape, ElementType elementType)
    : shape(std::move(tensorShape)), type(elementType) {
  if (type.isFloat())
    floats.resize(elementCount(shape));
  else
    ints.resize(elementCount(shape));
}

int64_t wrapToWidth(int64_t value, unsigned width) {
  if (width >= 64)
    return value;
  unsigned shift = 64 - width;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << shift) >> shift;
}

uint64_t unsignedOf(int64_t value, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(value);
  return static_cast<uint64_t>(value) & ((uint64_t(1) << width) - 1);
}

namespace {

uint16_t halfFromFloat(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // NaN: its payload's top bits, quiet
    return sign | 0x7e00 | ((magnitude >> 13) & 0x3ff);
  if (magnitude == 0x7f800000)
    return sign | 0x7c00;
  if (magnitude >= 0x477ff000) // rounds past 65504
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below 2^-14: a subnormal half, or zero
    // In units of 2^-24, exactly; nearbyint rounds to nearest even.
    float units = llvm::bit_cast<float>(magnitude) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(units));
  }
  magnitude -= 112u << 23; // the exponent's bias 127 -> 15
  magnitude += 0xfff + ((magnitude >> 13) & 1);
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

float floatFromHalf(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31)
    return llvm::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  return llvm::bit_cast<float>(sign | ((exponent + 112) << 23) |
                               (mantissa << 13));
}

uint16_t bfloatFromFloat(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// `value` as an f32 rounded to odd (toward zero, the last bit set where
// that dropped bits): rounding that f32 to nearest even at 16 bits or fewer
// gives what rounding `value` itself would, where rounding through an f32
// to nearest would round twice.
float floatRoundedToOdd(double value) {
  float nearest = static_cast<float>(value);
  if (std::isnan(value) || std::isinf(nearest) ||
      static_cast<double>(nearest) == value)
    return nearest;
  float truncated = std::fabs(static_cast<double>(nearest)) > std::fabs(value)
                        ? std::nextafter(nearest, 0.0f)
                        : nearest;
  return llvm::bit_cast<float>(llvm::bit_cast<uint32_t>(truncated) | 1u);
}

} // namespace

uint64_t floatBits(double value, FloatFormat format) {
  switch (format) {
  case FloatFormat::F16:
    return halfFromFloat(floatRoundedToOdd(value));
  case FloatFormat::BF16:
    return bfloatFromFloat(floatRoundedToOdd(value));
  case FloatFormat::F32:
    return llvm::bit_cast<uint32_t>(static_cast<float>(value));
  case FloatFormat::F64:
    return llvm::bit_cast<uint64_t>(value);
  }
  return 0;
}

double floatFromBits(uint64_t bits, FloatFormat format) {
  switch (format) {
  case FloatFormat::F16:
    return floatFromHalf(static_cast<uint16_t>(bits));
  case FloatFormat::BF16:
    return llvm::bit_cast<float>(static_cast<uint32_t>(bits & 0xffff) << 16);
  case FloatFormat::F32:
    return llvm::bit_cast<float>(static_cast<uint32_t>(bits));
  case FloatFormat::F64:
    return llvm::bit_cast<double>(bits);
  }
  return 0;
}

double roundToFormat(double value, FloatFormat format) {
  if (format == FloatFormat::F64)
    return value;
  if (format == FloatFormat::F32)
    return static_cast<float>(value);
  return floatFromBits(floatBits(value, format), format);
}

double maximumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return std::max(a, b);
}

double minimumOf(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? a : b;
  return std::min(a, b);
}

double truncateToTF32(double value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(static_cast<float>(value));
  if ((bits & 0x7f800000) == 0x7f800000) // infinity, NaN
    return llvm::bit_cast<float>(bits);
  return llvm::bit_cast<float>(bits & ~uint32_t(0x1fff));
}

} // namespace tilec::interp
