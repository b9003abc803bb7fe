//===- TileGPUAttrs.cpp - layout encodings and their linear layouts -------===//

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tilec::tilegpu;
using Basis = LinearLayout::Basis;

FailureOr<SmallVector<unsigned>>
tilec::tilegpu::parseUnsignedList(AsmParser &parser) {
  SmallVector<unsigned> values;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        unsigned value;
        if (parser.parseInteger(value))
          return failure();
        values.push_back(value);
        return success();
      }))
    return failure();
  return values;
}

void tilec::tilegpu::printUnsignedList(AsmPrinter &printer,
                                       ArrayRef<unsigned> values) {
  printer << "[";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

#define GET_ATTRDEF_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
#include "tilec/Dialect/TileGPU/IR/TileGPUAttrInterfaces.cpp.inc"

void TileGPUDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tilec/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
}

static Basis unitBasis(unsigned rank, unsigned dim, int64_t value) {
  Basis basis(rank, 0);
  basis[dim] = value;
  return basis;
}

static unsigned product(ArrayRef<unsigned> values) {
  unsigned result = 1;
  for (unsigned value : values)
    result *= value;
  return result;
}

static LogicalResult
verifyPowersOfTwo(function_ref<InFlightDiagnostic()> emitError,
                  StringRef name, ArrayRef<unsigned> values) {
  for (unsigned value : values)
    if (value == 0 || !llvm::isPowerOf2_32(value))
      return emitError() << name << " entries must be powers of two, got "
                         << value;
  return success();
}

//===----------------------------------------------------------------------===//
// BlockedEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
BlockedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<unsigned> sizePerThread,
                            ArrayRef<unsigned> threadsPerWarp,
                            ArrayRef<unsigned> warpsPerCTA,
                            ArrayRef<unsigned> order) {
  size_t rank = order.size();
  if (sizePerThread.size() != rank || threadsPerWarp.size() != rank ||
      warpsPerCTA.size() != rank)
    return emitError() << "sizePerThread, threadsPerWarp, warpsPerCTA and "
                          "order must have the same rank";
  SmallVector<bool> seen(rank, false);
  for (unsigned dim : order) {
    if (dim >= rank || seen[dim])
      return emitError() << "order must be a permutation of [0, " << rank
                         << ")";
    seen[dim] = true;
  }
  if (failed(verifyPowersOfTwo(emitError, "sizePerThread", sizePerThread)) ||
      failed(verifyPowersOfTwo(emitError, "threadsPerWarp", threadsPerWarp)) ||
      failed(verifyPowersOfTwo(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  return success();
}

LinearLayout BlockedEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  unsigned rank = getRank();
  assert(shape.size() == rank && "blocked layout applied to another rank");
  SmallVector<Basis> registers, lanes, warps;
  ArrayRef<unsigned> order = getOrder();
  for (unsigned dim : order)
    for (unsigned size = 1; size < getSizePerThread()[dim]; size *= 2)
      registers.push_back(unitBasis(rank, dim, size));
  for (unsigned dim : order)
    for (unsigned step = 1; step < getThreadsPerWarp()[dim]; step *= 2)
      lanes.push_back(unitBasis(rank, dim, getSizePerThread()[dim] * step));
  for (unsigned dim : order)
    for (unsigned step = 1; step < getWarpsPerCTA()[dim]; step *= 2)
      warps.push_back(unitBasis(
          rank, dim,
          getSizePerThread()[dim] * getThreadsPerWarp()[dim] * step));
  for (unsigned dim : order) {
    int64_t tile = getSizePerThread()[dim] * getThreadsPerWarp()[dim] *
                   getWarpsPerCTA()[dim];
    for (int64_t step = tile; step < shape[dim]; step *= 2)
      registers.push_back(unitBasis(rank, dim, step));
  }
  return LinearLayout(shape, registers, lanes, warps).wrappedTo(shape);
}

unsigned BlockedEncodingAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

//===----------------------------------------------------------------------===//
// SliceEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          unsigned dim, Attribute parent) {
  if (!isa<DistributedLayoutInterface>(parent))
    return emitError() << "slice parent must be a distributed layout, got "
                       << parent;
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(parent))
    if (dim >= blocked.getRank())
      return emitError() << "slice dim " << dim
                         << " is out of range for a rank-"
                         << blocked.getRank() << " parent";
  return success();
}

LinearLayout SliceEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  LinearLayout parent = cast<DistributedLayoutInterface>(getParent())
                            .toLinearLayout(parentShape);
  return parent.withoutDim(getDim()).wrappedTo(shape);
}

unsigned SliceEncodingAttr::getNumWarps() const {
  return cast<DistributedLayoutInterface>(getParent()).getNumWarps();
}

//===----------------------------------------------------------------------===//
// MmaEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
MmaEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned versionMajor, ArrayRef<unsigned> warpsPerCTA,
                        ArrayRef<unsigned> instrShape, bool transposed) {
  if (versionMajor != 2 && versionMajor != 3)
    return emitError() << "versionMajor must be 2 (mma.sync) or 3 (wgmma), "
                          "got "
                       << versionMajor;
  if (warpsPerCTA.size() != 2)
    return emitError() << "warpsPerCTA must have 2 entries";
  if (failed(verifyPowersOfTwo(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  if (versionMajor == 2 &&
      (instrShape.size() != 2 || instrShape[0] != 16 || instrShape[1] != 8))
    return emitError() << "mma v2 instrShape must be [16, 8]";
  if (versionMajor == 2 && transposed)
    return emitError() << "only mma v3 (wgmma) computes transposed products";
  if (versionMajor == 3) {
    if (instrShape.size() != 3 || instrShape[0] != 16 ||
        instrShape[1] % 8 != 0 || instrShape[1] > 256)
      return emitError() << "mma v3 instrShape must be [16, N, K] with N a "
                            "multiple of 8 up to 256";
    if (warpsPerCTA[0] % 4 != 0)
      return emitError() << "mma v3 needs warpsPerCTA[0] a multiple of 4";
  }
  return success();
}

/// Swaps the two coordinates of every basis: the layout of the transpose.
static LinearLayout transposeLayout(const LinearLayout &layout) {
  auto swapped = [](ArrayRef<Basis> bases) {
    SmallVector<Basis> result(bases.begin(), bases.end());
    for (Basis &basis : result)
      std::swap(basis[0], basis[1]);
    return result;
  };
  SmallVector<int64_t> shape = {layout.getShape()[1], layout.getShape()[0]};
  return LinearLayout(shape, swapped(layout.getRegisterBases()),
                      swapped(layout.getLaneBases()),
                      swapped(layout.getWarpBases()));
}

LinearLayout MmaEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  assert(shape.size() == 2 && "mma layouts are 2-D");
  if (getTransposed())
    return transposeLayout(MmaEncodingAttr::get(getContext(), getVersionMajor(),
                                                getWarpsPerCTA(),
                                                getInstrShape())
                               .toLinearLayout({shape[1], shape[0]}));
  unsigned wm = getWarpsPerCTA()[0], wn = getWarpsPerCTA()[1];
  // Lanes: t = lane % 4 picks column pairs, g = lane / 4 picks rows.
  SmallVector<Basis> lanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  SmallVector<Basis> registers = {{0, 1}, {8, 0}};
  SmallVector<Basis> warps;
  int64_t tileM = 16 * wm, tileN;
  if (getVersionMajor() == 2) {
    for (unsigned step = 1; step < wn; step *= 2)
      warps.push_back({0, 8 * step});
    for (unsigned step = 1; step < wm; step *= 2)
      warps.push_back({16 * step, 0});
    tileN = 8 * wn;
  } else {
    int64_t instrN = getInstrShape()[1];
    for (int64_t col = 8; col < instrN; col *= 2)
      registers.push_back({0, col});
    for (unsigned step = 1; step < wm; step *= 2)
      warps.push_back({16 * step, 0});
    for (unsigned step = 1; step < wn; step *= 2)
      warps.push_back({0, instrN * step});
    tileN = instrN * wn;
  }
  for (int64_t step = tileN; step < shape[1]; step *= 2)
    registers.push_back({0, step});
  for (int64_t step = tileM; step < shape[0]; step *= 2)
    registers.push_back({step, 0});
  return LinearLayout(shape, registers, lanes, warps).wrappedTo(shape);
}

unsigned MmaEncodingAttr::getNumWarps() const { return product(getWarpsPerCTA()); }

//===----------------------------------------------------------------------===//
// DotOperandEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
DotOperandEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               unsigned opIdx, Attribute parent,
                               unsigned kWidth) {
  if (opIdx > 1)
    return emitError() << "opIdx must be 0 (a) or 1 (b), got " << opIdx;
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(parent)) {
    if (blocked.getRank() != 2)
      return emitError() << "dot operand parent must be 2-D";
    if (kWidth != 0)
      return emitError() << "kWidth applies to mma parents only";
    return success();
  }
  if (auto mma = dyn_cast<MmaEncodingAttr>(parent)) {
    if (mma.getVersionMajor() == 2 && kWidth != 1 && kWidth != 2)
      return emitError() << "mma v2 operands need kWidth 1 (tf32) or 2 "
                            "(16-bit), got "
                         << kWidth;
    if (mma.getVersionMajor() == 3 && kWidth != 1)
      return emitError() << "mma v3 operands in registers are tf32 A "
                            "fragments (kWidth 1), got kWidth "
                         << kWidth;
    // wgmma reads its B operand from shared memory only.
    unsigned registerOperand = mma.getTransposed() ? 1 : 0;
    if (mma.getVersionMajor() == 3 && opIdx != registerOperand)
      return emitError() << "operand " << opIdx << " of an mma v3 "
                         << (mma.getTransposed() ? "transposed " : "")
                         << "parent is wgmma's B, which is read from shared "
                            "memory; only operand "
                         << registerOperand << " can be in registers";
    return success();
  }
  return emitError() << "dot operand parent must be blocked or mma, got "
                     << parent;
}

/// wgmma's register A operand (tf32) for the accumulator layout `mma`, on a
/// tile of `shape` (M x K; for a transposed `mma`, K x N, the transpose of
/// B^T's N x K tile). Per warp the m16n8k8 A fragment a = (g + 8i, t + 4k);
/// warp w of a warpgroup takes rows 16 (w mod 4), warpgroups along M take
/// the next 64, warps along N hold copies (the accumulator's warp order);
/// registers repeat along K first, then along M: the fragment of
/// instruction (m, k) is registers 4 (m * kSteps + k) to 4 (m * kSteps + k)
/// + 3.
static LinearLayout getWarpGroupFragmentLayout(MmaEncodingAttr mma,
                                               ArrayRef<int64_t> shape) {
  if (mma.getTransposed())
    return transposeLayout(getWarpGroupFragmentLayout(
        MmaEncodingAttr::get(mma.getContext(), 3, mma.getWarpsPerCTA(),
                             mma.getInstrShape()),
        {shape[1], shape[0]}));
  unsigned wm = mma.getWarpsPerCTA()[0], wn = mma.getWarpsPerCTA()[1];
  SmallVector<Basis> registers = {{8, 0}, {0, 4}};
  SmallVector<Basis> lanes = {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}};
  SmallVector<Basis> warps;
  for (unsigned step = 1; step < wm; step *= 2)
    warps.push_back({16 * step, 0});
  for (unsigned step = 1; step < wn; step *= 2)
    warps.push_back({0, 0});
  for (int64_t step = 8; step < shape[1]; step *= 2)
    registers.push_back({0, step});
  for (int64_t step = 16 * wm; step < shape[0]; step *= 2)
    registers.push_back({step, 0});
  return LinearLayout(shape, registers, lanes, warps).wrappedTo(shape);
}

LinearLayout DotOperandEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  assert(shape.size() == 2 && "dot operands are 2-D");
  unsigned kDim = getOpIdx() == 0 ? 1 : 0;
  unsigned nonKDim = 1 - kDim;
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(getParent())) {
    // The FMA path: each thread holds the whole K extent of the rows (or
    // columns) of the result it owns.
    SmallVector<int64_t> parentShape(2, 1);
    parentShape[nonKDim] = shape[nonKDim];
    LinearLayout parent = blocked.toLinearLayout(parentShape);
    SmallVector<Basis> kBases;
    for (int64_t step = 1; step < shape[kDim]; step *= 2)
      kBases.push_back(unitBasis(2, kDim, step));
    LinearLayout withK = parent.withLeadingRegisterBases(kBases);
    return LinearLayout(shape, SmallVector<Basis>(withK.getRegisterBases()),
                        SmallVector<Basis>(withK.getLaneBases()),
                        SmallVector<Basis>(withK.getWarpBases()));
  }
  auto mma = cast<MmaEncodingAttr>(getParent());
  if (mma.getVersionMajor() == 3)
    return getWarpGroupFragmentLayout(mma, shape);
  unsigned wm = mma.getWarpsPerCTA()[0], wn = mma.getWarpsPerCTA()[1];
  // Register and lane bases of one instruction's fragment, written as
  // (non-K, K) and swapped into (row, col) below.
  SmallVector<Basis> registers, lanes;
  int64_t instrK;
  if (getKWidth() == 2) {
    // m16n8k16: a = (g + 8i, 2t + j + 8k); b = (k = 2t + j + 8k, n = g).
    instrK = 16;
    if (getOpIdx() == 0)
      registers = {{0, 1}, {8, 0}, {0, 8}};
    else
      registers = {{0, 1}, {0, 8}};
    lanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  } else {
    // m16n8k8 tf32: a = (g + 8i, t + 4k); b = (k = t + 4k, n = g).
    instrK = 8;
    if (getOpIdx() == 0)
      registers = {{8, 0}, {0, 4}};
    else
      registers = {{0, 4}};
    lanes = {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}};
  }
  SmallVector<Basis> warps;
  int64_t instrNonK = getOpIdx() == 0 ? 16 : 8;
  unsigned warpsNonK = getOpIdx() == 0 ? wm : wn;
  // Warps are ordered N fastest (as in the accumulator); warps along the
  // other operand's dimension hold copies.
  for (unsigned step = 1; step < wn; step *= 2)
    warps.push_back(getOpIdx() == 1 ? Basis{8 * step, 0} : Basis{0, 0});
  for (unsigned step = 1; step < wm; step *= 2)
    warps.push_back(getOpIdx() == 0 ? Basis{16 * step, 0} : Basis{0, 0});
  for (int64_t step = instrK; step < shape[kDim]; step *= 2)
    registers.push_back({0, step});
  for (int64_t step = instrNonK * warpsNonK; step < shape[nonKDim]; step *= 2)
    registers.push_back({step, 0});
  auto toRowCol = [&](SmallVector<Basis> bases) {
    if (kDim == 1)
      return bases;
    for (Basis &basis : bases)
      std::swap(basis[0], basis[1]);
    return bases;
  };
  return LinearLayout(shape, toRowCol(registers), toRowCol(lanes),
                      toRowCol(warps))
      .wrappedTo(shape);
}

unsigned DotOperandEncodingAttr::getNumWarps() const {
  return cast<DistributedLayoutInterface>(getParent()).getNumWarps();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

DistributedLayoutInterface tilec::tilegpu::getDistributedLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<DistributedLayoutInterface>(tensor.getEncoding());
}

LinearLayout tilec::tilegpu::getLinearLayout(RankedTensorType type) {
  return cast<DistributedLayoutInterface>(type.getEncoding())
      .toLinearLayout(type.getShape());
}

BlockedEncodingAttr tilec::tilegpu::getBlockedEncoding(
    MLIRContext *context, ArrayRef<int64_t> shape,
    ArrayRef<unsigned> sizePerThread, ArrayRef<unsigned> order,
    unsigned numWarps, unsigned threadsPerWarp) {
  unsigned rank = shape.size();
  SmallVector<unsigned> threads(rank, 1), warps(rank, 1);
  unsigned lanesLeft = threadsPerWarp, warpsLeft = numWarps;
  for (unsigned dim : order) {
    int64_t perThread = std::max<int64_t>(1, shape[dim] / sizePerThread[dim]);
    threads[dim] = std::clamp<int64_t>(lanesLeft, 1, perThread);
    lanesLeft /= threads[dim];
    int64_t perWarp = std::max<int64_t>(1, perThread / threads[dim]);
    warps[dim] = std::clamp<int64_t>(warpsLeft, 1, perWarp);
    warpsLeft /= warps[dim];
  }
  // Lanes and warps the shape cannot use hold copies along the slowest dim.
  threads[order.back()] *= lanesLeft;
  warps[order.back()] *= warpsLeft;
  return BlockedEncodingAttr::get(context, sizePerThread, threads, warps,
                                  order);
}

BlockedEncodingAttr
tilec::tilegpu::getDefaultBlockedEncoding(MLIRContext *context,
                                          ArrayRef<int64_t> shape,
                                          unsigned numWarps,
                                          unsigned threadsPerWarp) {
  unsigned rank = shape.size();
  SmallVector<unsigned> sizePerThread(rank, 1), order;
  for (unsigned dim = rank; dim-- > 0;)
    order.push_back(dim);
  return getBlockedEncoding(context, shape, sizePerThread, order, numWarps,
                            threadsPerWarp);
}

int64_t tilec::tilegpu::getWarpGroupInstrK(Type element) {
  return 256 / element.getIntOrFloatBitWidth();
}

bool tilec::tilegpu::warpGroupReadsMNMajor(Type element) {
  return element.isF16() || element.isBF16();
}

SmallVector<unsigned>
tilec::tilegpu::getWarpGroupOperandOrder(Type element, unsigned opIdx,
                                         ArrayRef<unsigned> preferred) {
  if (warpGroupReadsMNMajor(element))
    return SmallVector<unsigned>(preferred);
  // K is dim 1 of a and dim 0 of b.
  return opIdx == 0 ? SmallVector<unsigned>{1, 0}
                    : SmallVector<unsigned>{0, 1};
}

bool tilec::tilegpu::warpGroupComputesTransposed(Type element,
                                                 unsigned bCopyBytes,
                                                 unsigned aContiguousDim,
                                                 unsigned bContiguousDim) {
  // K is dim 1 of a and dim 0 of b.
  return !warpGroupReadsMNMajor(element) && bCopyBytes >= 16 &&
         aContiguousDim == 1 && bContiguousDim == 1;
}

LogicalResult SwizzledSharedEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, unsigned vec,
    unsigned perPhase, unsigned maxPhase, ArrayRef<unsigned> order) {
  if (order.size() != 2)
    return emitError() << "a swizzled_shared encoding orders 2 dimensions, "
                          "got "
                       << order.size();
  if (!((order[0] == 0 && order[1] == 1) || (order[0] == 1 && order[1] == 0)))
    return emitError() << "order must be a permutation of [0, 2)";
  unsigned values[] = {vec, perPhase, maxPhase};
  return verifyPowersOfTwo(emitError, "vec, perPhase and maxPhase", values);
}

LogicalResult NvmmaSharedEncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, unsigned swizzlingByteWidth,
    ArrayRef<unsigned> order) {
  if (swizzlingByteWidth != 32 && swizzlingByteWidth != 64 &&
      swizzlingByteWidth != 128)
    return emitError() << "swizzlingByteWidth must be 32, 64 or 128, got "
                       << swizzlingByteWidth;
  if (!((order.size() == 2 && order[0] == 0 && order[1] == 1) ||
        (order.size() == 2 && order[0] == 1 && order[1] == 0)))
    return emitError() << "order must be a permutation of [0, 2)";
  return success();
}

/// Whether `operand`'s fragments, read from a tile of `type` stored with
/// `order`, are tf32 fragments read across rows. Lane 4g + t of an m16n8k8
/// tf32 fragment (and of wgmma's register A, the same fragment) reads K
/// index t (+ 4) and M or N index g (+ 8): where K is the strided dimension,
/// a warp's scalar loads cover 4 consecutive rows by 8 consecutive words. In
/// 16-byte chunks swizzled over 8 phases, rows t and t xor 1 map the 8 words
/// onto the same two chunks (2-way conflicts); 32-byte chunks over 4 phases
/// put the 4 rows in 4 different 8-bank quarters, for rows t + 4 too. Rows
/// of 32 words or more start at bank 0 and hold the 4 chunks. The 16-byte
/// copies that fill the tile stay whole, each inside one 32-byte chunk.
/// K-contiguous tiles are read 8 rows by 4 words, which the default swizzle
/// already spreads over all banks. FMA operands (blocked parents) are read
/// in other patterns and keep it too.
static bool readsTf32FragmentsAcrossRows(RankedTensorType type,
                                         ArrayRef<unsigned> order,
                                         DotOperandEncodingAttr operand) {
  unsigned kDim = operand.getOpIdx() == 0 ? 1 : 0;
  return isa<MmaEncodingAttr>(operand.getParent()) &&
         type.getElementTypeBitWidth() == 32 && order[0] != kDim &&
         type.getDimSize(order[0]) >= 32;
}

SwizzledSharedEncodingAttr
tilec::tilegpu::getOperandSharedEncoding(RankedTensorType type,
                                         ArrayRef<unsigned> order,
                                         DotOperandEncodingAttr operand) {
  if (readsTf32FragmentsAcrossRows(type, order, operand))
    return SwizzledSharedEncodingAttr::get(type.getContext(), /*vec=*/8,
                                           /*perPhase=*/1, /*maxPhase=*/4,
                                           order);
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  int64_t cols = type.getDimSize(order[0]);
  int64_t vec = std::min<int64_t>(16 / bytes, cols);
  int64_t perPhase = std::max<int64_t>(1, 128 / (cols * bytes));
  int64_t maxPhase = std::max<int64_t>(1, std::min(8 / perPhase, cols / vec));
  return SwizzledSharedEncodingAttr::get(type.getContext(), vec, perPhase,
                                         maxPhase, order);
}

NvmmaSharedEncodingAttr
tilec::tilegpu::getNvmmaSharedEncoding(RankedTensorType type,
                                       ArrayRef<unsigned> order) {
  int64_t rowBytes =
      type.getDimSize(order[0]) * type.getElementTypeBitWidth() / 8;
  if (rowBytes < 32)
    return {};
  return NvmmaSharedEncodingAttr::get(
      type.getContext(),
      static_cast<unsigned>(std::min<int64_t>(128, rowBytes)), order);
}
