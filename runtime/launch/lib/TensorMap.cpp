//===- TensorMap.cpp - TMA tensor maps of 2-D tiles -----------------------===//

#include "tilec/runtime/TensorMap.h"

#include <string>

namespace tilec::rt {

int64_t tmaElementBytes(TmaElement element) {
  return element == TmaElement::F16 || element == TmaElement::BF16 ? 2 : 4;
}

static int64_t swizzleSpanBytes(TmaSwizzle swizzle) {
  switch (swizzle) {
  case TmaSwizzle::None:
    return 0;
  case TmaSwizzle::Bytes32:
    return 32;
  case TmaSwizzle::Bytes64:
    return 64;
  case TmaSwizzle::Bytes128:
    return 128;
  }
  return 0;
}

Status checkTiledArray2D(const TiledArray2D &array) {
  auto refuse = [](const std::string &what) {
    return Status::error("tensor map: " + what);
  };
  auto text = [](uint64_t value) { return std::to_string(value); };
  uint64_t elementBytes = tmaElementBytes(array.element);
  uint64_t rowBytes = array.cols * elementBytes;
  uint64_t boxRowBytes = uint64_t(array.boxCols) * elementBytes;
  constexpr uint64_t kMaxDim = uint64_t(1) << 32;
  if (array.base.address % 16 != 0)
    return refuse("base address " + text(array.base.address) +
                  " is not a multiple of 16 bytes");
  if (array.rows < 1 || array.rows > kMaxDim || array.cols < 1 ||
      array.cols > kMaxDim)
    return refuse(text(array.rows) + " x " + text(array.cols) +
                  " elements: each dimension from 1 to 2^32");
  if (array.rowStrideBytes % 16 != 0)
    return refuse("row stride of " + text(array.rowStrideBytes) +
                  " bytes is not a multiple of 16");
  if (array.rowStrideBytes < rowBytes ||
      array.rowStrideBytes >= (uint64_t(1) << 40))
    return refuse("row stride of " + text(array.rowStrideBytes) +
                  " bytes: at least a row (" + text(rowBytes) +
                  " bytes) and below 2^40");
  if (array.boxRows < 1 || array.boxRows > 256 || array.boxCols < 1 ||
      array.boxCols > 256)
    return refuse("box of " + text(array.boxRows) + " x " +
                  text(array.boxCols) + ": each side from 1 to 256");
  if (boxRowBytes % 16 != 0)
    return refuse("a box row of " + text(boxRowBytes) +
                  " bytes is not a multiple of 16");
  int64_t span = swizzleSpanBytes(array.swizzle);
  if (span != 0 && boxRowBytes > uint64_t(span))
    return refuse("a box row of " + text(boxRowBytes) + " bytes exceeds the " +
                  std::to_string(span) + "-byte swizzle");
  return Status::success();
}

Result<CUtensorMap> encodeTiledArray2D(const Driver &driver,
                                       const TiledArray2D &array) {
  TILEC_RETURN_IF_ERROR(checkTiledArray2D(array));
  static const CUtensorMapDataType kTypes[] = {
      CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      CU_TENSOR_MAP_DATA_TYPE_FLOAT32, CU_TENSOR_MAP_DATA_TYPE_INT32};
  static const CUtensorMapSwizzle kSwizzles[] = {
      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
      CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
  // The driver's dimensions run innermost first.
  cuuint64_t dims[2] = {array.cols, array.rows};
  cuuint64_t strides[1] = {array.rowStrideBytes};
  cuuint32_t box[2] = {array.boxCols, array.boxRows};
  cuuint32_t elementStrides[2] = {1, 1};
  CUtensorMap map{};
  TILEC_RETURN_IF_ERROR(driver.check(
      driver.api().cuTensorMapEncodeTiled(
          &map, kTypes[static_cast<int>(array.element)], 2,
          reinterpret_cast<void *>(array.base.address), dims, strides, box,
          elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
          kSwizzles[static_cast<int>(array.swizzle)],
          CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  return map;
}

} // namespace tilec::rt
