//===- LinearLayout.cpp - (register, lane, warp) -> coordinates -----------===//

#include "tilec/Dialect/TileGPU/IR/LinearLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace tilec::tilegpu;

LinearLayout::LinearLayout(llvm::ArrayRef<int64_t> shape,
                           llvm::SmallVector<Basis> registerBases,
                           llvm::SmallVector<Basis> laneBases,
                           llvm::SmallVector<Basis> warpBases)
    : shape(shape), registerBases(std::move(registerBases)),
      laneBases(std::move(laneBases)), warpBases(std::move(warpBases)) {
  for (auto bases : {&this->registerBases, &this->laneBases, &this->warpBases})
    for ([[maybe_unused]] const Basis &basis : *bases)
      assert(basis.size() == shape.size() && "basis rank differs from shape");
}

static void xorInto(LinearLayout::Basis &coords,
                    llvm::ArrayRef<LinearLayout::Basis> bases, unsigned bits) {
  for (auto [index, basis] : llvm::enumerate(bases))
    if (bits & (1u << index))
      for (auto [dim, value] : llvm::enumerate(basis))
        coords[dim] ^= value;
}

LinearLayout::Basis LinearLayout::apply(unsigned reg, unsigned lane,
                                        unsigned warp) const {
  Basis coords(shape.size(), 0);
  xorInto(coords, registerBases, reg);
  xorInto(coords, laneBases, lane);
  xorInto(coords, warpBases, warp);
  return coords;
}

LinearLayout::Basis LinearLayout::registerCoords(unsigned reg) const {
  return apply(reg, 0, 0);
}

static bool isZero(const LinearLayout::Basis &basis) {
  return llvm::all_of(basis, [](int64_t value) { return value == 0; });
}

LinearLayout LinearLayout::wrappedTo(llvm::ArrayRef<int64_t> newShape) const {
  assert(newShape.size() == shape.size());
  auto wrap = [&](llvm::ArrayRef<Basis> bases, bool dropZero) {
    llvm::SmallVector<Basis> result;
    for (Basis basis : bases) {
      for (auto [dim, value] : llvm::enumerate(basis))
        if (value >= newShape[dim])
          value = 0;
      if (dropZero && isZero(basis))
        continue;
      result.push_back(basis);
    }
    return result;
  };
  return LinearLayout(newShape, wrap(registerBases, true),
                      wrap(laneBases, false), wrap(warpBases, false));
}

LinearLayout LinearLayout::withoutDim(unsigned dim) const {
#ifndef NDEBUG
  for (auto bases : {&registerBases, &laneBases, &warpBases})
    for (const Basis &basis : *bases)
      assert(basis[dim] == 0 && "removing a dimension that is not broadcast");
#endif
  return projectOutDim(dim);
}

LinearLayout LinearLayout::projectOutDim(unsigned dim) const {
  auto project = [&](llvm::ArrayRef<Basis> bases, bool dropZero) {
    llvm::SmallVector<Basis> result;
    for (Basis basis : bases) {
      basis.erase(basis.begin() + dim);
      if (dropZero && isZero(basis))
        continue;
      result.push_back(basis);
    }
    return result;
  };
  llvm::SmallVector<int64_t> newShape(shape.begin(), shape.end());
  newShape.erase(newShape.begin() + dim);
  return LinearLayout(newShape, project(registerBases, true),
                      project(laneBases, false), project(warpBases, false));
}

LinearLayout
LinearLayout::withLeadingRegisterBases(llvm::ArrayRef<Basis> bases) const {
  llvm::SmallVector<Basis> registers(bases.begin(), bases.end());
  registers.append(registerBases.begin(), registerBases.end());
  return LinearLayout(shape, registers, laneBases, warpBases);
}

bool LinearLayout::hasDisjointBases() const {
  llvm::SmallVector<int64_t> used(shape.size(), 0);
  for (auto bases : {&registerBases, &laneBases, &warpBases}) {
    for (const Basis &basis : *bases) {
      unsigned nonzero = 0;
      for (auto [dim, value] : llvm::enumerate(basis)) {
        if (value == 0)
          continue;
        if (!llvm::isPowerOf2_64(value) || (used[dim] & value))
          return false;
        used[dim] |= value;
        ++nonzero;
      }
      if (nonzero > 1)
        return false;
    }
  }
  return true;
}

static unsigned zeroMask(llvm::ArrayRef<LinearLayout::Basis> bases) {
  unsigned mask = 0;
  for (auto [index, basis] : llvm::enumerate(bases))
    if (isZero(basis))
      mask |= 1u << index;
  return mask;
}

unsigned LinearLayout::getRedundantLaneMask() const {
  return zeroMask(laneBases);
}

unsigned LinearLayout::getRedundantWarpMask() const {
  return zeroMask(warpBases);
}

bool LinearLayout::operator==(const LinearLayout &other) const {
  return shape == other.shape && registerBases == other.registerBases &&
         laneBases == other.laneBases && warpBases == other.warpBases;
}

std::string LinearLayout::toString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto printBases = [&](llvm::StringRef name, llvm::ArrayRef<Basis> bases) {
    os << name << " = [";
    llvm::interleaveComma(bases, os, [&](const Basis &basis) {
      os << "(";
      llvm::interleaveComma(basis, os);
      os << ")";
    });
    os << "]";
  };
  os << "shape = [";
  llvm::interleaveComma(shape, os);
  os << "], ";
  printBases("register", registerBases);
  os << ", ";
  printBases("lane", laneBases);
  os << ", ";
  printBases("warp", warpBases);
  return text;
}

llvm::FailureOr<llvm::SmallVector<unsigned>> tilec::tilegpu::mapRegisters(
    const LinearLayout &src, const LinearLayout &dst,
    llvm::function_ref<LinearLayout::Basis(const LinearLayout::Basis &)>
        dstToSrc) {
  auto sameThreads = [&](llvm::ArrayRef<LinearLayout::Basis> srcBases,
                         llvm::ArrayRef<LinearLayout::Basis> dstBases) {
    if (srcBases.size() != dstBases.size())
      return false;
    for (auto [s, d] : llvm::zip(srcBases, dstBases))
      if (s != dstToSrc(d))
        return false;
    return true;
  };
  if (!sameThreads(src.getLaneBases(), dst.getLaneBases()) ||
      !sameThreads(src.getWarpBases(), dst.getWarpBases()))
    return llvm::failure();
  llvm::DenseMap<llvm::ArrayRef<int64_t>, unsigned> srcIndex;
  llvm::SmallVector<LinearLayout::Basis> srcCoords;
  for (unsigned reg = 0; reg < src.getNumRegisters(); ++reg)
    srcCoords.push_back(src.registerCoords(reg));
  for (unsigned reg = 0; reg < src.getNumRegisters(); ++reg)
    srcIndex.try_emplace(srcCoords[reg], reg);
  llvm::SmallVector<unsigned> mapping;
  for (unsigned reg = 0; reg < dst.getNumRegisters(); ++reg) {
    LinearLayout::Basis wanted = dstToSrc(dst.registerCoords(reg));
    auto it = srcIndex.find(llvm::ArrayRef<int64_t>(wanted));
    if (it == srcIndex.end())
      return llvm::failure();
    mapping.push_back(it->second);
  }
  return mapping;
}
