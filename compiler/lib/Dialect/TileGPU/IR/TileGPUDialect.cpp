//===- TileGPUDialect.cpp - tilegpu dialect registration ------------------===//

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>

using namespace mlir;
using namespace tilec::tilegpu;

#include "tilec/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"

namespace {
/// Short aliases (#blocked, #slice, ...) keep ttgir dumps readable.
struct TileGPUOpAsmInterface : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedEncodingAttr>(attr))
      os << "blocked";
    else if (isa<SliceEncodingAttr>(attr))
      os << "slice";
    else if (isa<MmaEncodingAttr>(attr))
      os << "mma";
    else if (isa<DotOperandEncodingAttr>(attr))
      os << "dot_op";
    else if (isa<SwizzledSharedEncodingAttr, NvmmaSharedEncodingAttr>(attr))
      os << "shared";
    else
      return AliasResult::NoAlias;
    return AliasResult::OverridableAlias;
  }
};
} // namespace

void TileGPUDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "tilec/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
  addInterfaces<TileGPUOpAsmInterface>();
}

static int getIntAttr(Operation *module, StringRef name) {
  if (auto attr = module->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return 0;
}

int TileGPUDialect::getNumWarps(Operation *module) {
  return getIntAttr(module, getNumWarpsAttrName());
}

int TileGPUDialect::getThreadsPerWarp(Operation *module) {
  return getIntAttr(module, getThreadsPerWarpAttrName());
}

int TileGPUDialect::getMinBlocksPerSM(Operation *module) {
  return std::max(1, getIntAttr(module, getMinBlocksPerSMAttrName()));
}
