//===- MemoryOpToLLVM.cpp - global loads and stores -----------------------===//
//
// A load or store moves `vec` consecutive registers per instruction, as one
// predicated PTX ld/st of up to 128 bits (the width the coalesce pass chose
// the layout for, capped by alignment and mask uniformity). Inline PTX gives
// the predicated, vectorized access with its fill value that LLVM's NVPTX
// backend has no intrinsic for.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tilegpu;
using namespace tilec::lowering;

namespace {

/// How one access moves `vec` elements: as `words` registers of `wordBits`
/// each, `perWord` elements per register.
struct AccessShape {
  unsigned vec, wordBits, words, perWord;
  StringRef constraint() const {
    switch (wordBits) {
    case 64:
      return "l";
    case 32:
      return "r";
    default:
      return "h"; // 8- and 16-bit values both live in 16-bit registers.
    }
  }
  /// PTX type of the access; 8-bit values load into 16-bit registers.
  std::string ptxType() const {
    return wordBits == 8 ? "u8" : "b" + std::to_string(wordBits);
  }
  std::string registerType() const {
    return wordBits == 8 ? "b16" : "b" + std::to_string(wordBits);
  }
};

unsigned storageBits(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return 64;
  if (type.isInteger(1))
    return 8;
  return type.getIntOrFloatBitWidth();
}

/// The access for `requested` consecutive elements of `element`, at most
/// 128 bits (the widest PTX global access).
AccessShape getAccessShape(Type element, unsigned requested) {
  unsigned elementBits = storageBits(element);
  unsigned vec = std::max(1u, requested);
  while (vec > 1 && elementBits * vec > 128)
    vec /= 2;
  unsigned totalBits = elementBits * vec;
  unsigned wordBits =
      elementBits >= 32 ? elementBits : std::min(32u, totalBits);
  unsigned words = totalBits / wordBits;
  return {vec, wordBits, words, vec / words};
}

Type wordType(OpBuilder &builder, unsigned wordBits) {
  return builder.getIntegerType(wordBits == 8 ? 16 : wordBits);
}

/// Packs `values` (one word's elements) into an integer register.
Value packWord(OpBuilder &builder, Location loc, ArrayRef<Value> values,
               unsigned wordBits) {
  Type element = values.front().getType();
  unsigned bits = storageBits(element);
  auto toInt = [&](Value v) -> Value {
    if (isa<LLVM::LLVMPointerType>(v.getType()))
      return LLVM::PtrToIntOp::create(builder, loc, builder.getI64Type(), v);
    if (v.getType().isInteger(1))
      return arith::ExtUIOp::create(builder, loc, builder.getI8Type(), v);
    if (isa<FloatType>(v.getType()))
      return arith::BitcastOp::create(builder, loc,
                                      builder.getIntegerType(bits), v);
    return v;
  };
  Type word = builder.getIntegerType(wordBits);
  Value result;
  for (auto [index, value] : llvm::enumerate(values)) {
    Value part = toInt(value);
    if (bits != wordBits)
      part = arith::ExtUIOp::create(builder, loc, word, part);
    if (index != 0)
      part = arith::ShLIOp::create(
          builder, loc, part,
          arith::ConstantIntOp::create(builder, loc, word, index * bits));
    result = result ? arith::OrIOp::create(builder, loc, result, part) : part;
  }
  Type reg = wordType(builder, wordBits);
  if (reg != word)
    result = arith::ExtUIOp::create(builder, loc, reg, result);
  return result;
}

/// Splits an integer register back into `count` elements of `element` type.
void unpackWord(OpBuilder &builder, Location loc, Value word, unsigned wordBits,
                Type element, unsigned count, Registers &out) {
  unsigned bits = storageBits(element);
  Type wordInt = builder.getIntegerType(wordBits);
  if (word.getType() != wordInt)
    word = arith::TruncIOp::create(builder, loc, wordInt, word);
  for (unsigned index = 0; index < count; ++index) {
    Value part = word;
    if (index != 0)
      part = arith::ShRUIOp::create(
          builder, loc, part,
          arith::ConstantIntOp::create(builder, loc, wordInt, index * bits));
    if (bits != wordBits)
      part = arith::TruncIOp::create(builder, loc, builder.getIntegerType(bits),
                                     part);
    if (isa<LLVM::LLVMPointerType>(element))
      part = LLVM::IntToPtrOp::create(builder, loc, element, part);
    else if (element.isInteger(1))
      part = arith::TruncIOp::create(builder, loc, element, part);
    else if (isa<FloatType>(element))
      part = arith::BitcastOp::create(builder, loc, element, part);
    out.push_back(part);
  }
}

std::string cacheQualifier(tile::CacheModifier cache, bool isStore) {
  switch (cache) {
  case tile::CacheModifier::None:
    return "";
  case tile::CacheModifier::CA:
    return isStore ? "" : ".ca";
  case tile::CacheModifier::CG:
    return ".cg";
  case tile::CacheModifier::CS:
    return ".cs";
  case tile::CacheModifier::CV:
    return isStore ? "" : ".cv";
  case tile::CacheModifier::WB:
    return isStore ? ".wb" : "";
  case tile::CacheModifier::WT:
    return isStore ? ".wt" : "";
  }
  return "";
}

std::string evictionQualifier(tile::EvictionPolicy policy) {
  switch (policy) {
  case tile::EvictionPolicy::Normal:
    return "";
  case tile::EvictionPolicy::EvictFirst:
    return ".L1::evict_first";
  case tile::EvictionPolicy::EvictLast:
    return ".L1::evict_last";
  }
  return "";
}

/// The registers of a possibly-scalar operand as a list (scalars: one).
SmallVector<Value> registersOf(ValueRange values) {
  return SmallVector<Value>(values.begin(), values.end());
}

/// Number of consecutive registers that hold consecutive elements along the
/// fastest dimension; the vector width the layout allows.
unsigned contiguousRegisters(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 1;
  LinearLayout layout = getLinearLayout(tensor);
  ArrayRef<LinearLayout::Basis> bases = layout.getRegisterBases();
  if (bases.empty())
    return 1;
  auto dimIt = llvm::find_if(bases[0], [](int64_t v) { return v != 0; });
  unsigned dim = dimIt - bases[0].begin();
  unsigned count = 0;
  while (count < bases.size()) {
    const LinearLayout::Basis &basis = bases[count];
    bool unit = basis[dim] == (int64_t(1) << count);
    for (unsigned d = 0; d < basis.size(); ++d)
      unit &= d == dim || basis[d] == 0;
    if (!unit)
      break;
    ++count;
  }
  return 1u << count;
}

struct LoadOpConversion : OpConversionPattern<tile::LoadOp> {
  LoadOpConversion(const LLVMTypeConverter &converter, MLIRContext *context,
                   VectorWidthQuery vectorWidth)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        vectorWidth(std::move(vectorWidth)) {}

  LogicalResult
  matchAndRewrite(tile::LoadOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertType(op.getType(), resultTypes)))
      return failure();
    Type element = resultTypes.front();
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr());
    SmallVector<Value> masks = registersOf(adaptor.getMask());
    SmallVector<Value> others = registersOf(adaptor.getOther());
    AccessShape shape = getAccessShape(
        element, std::min(vectorWidth(op), contiguousRegisters(op.getType())));
    unsigned vec = shape.vec, perWord = shape.perWord;
    Type reg = wordType(rewriter, shape.wordBits);

    Registers results;
    for (unsigned first = 0; first < ptrs.size(); first += vec) {
      SmallVector<Value> operands;
      std::string constraints, body;
      llvm::raw_string_ostream asmText(body);
      for (unsigned w = 0; w < shape.words; ++w)
        constraints += (w ? ",=" : "=") + shape.constraint().str();
      unsigned nextOperand = shape.words;
      bool masked = !masks.empty();
      if (masked) {
        // Lanes that do not load keep the fill value (zero without `other`).
        for (unsigned w = 0; w < shape.words; ++w) {
          Value fill;
          if (!others.empty())
            fill = packWord(
                rewriter, loc,
                ArrayRef<Value>(others).slice(first + w * perWord, perWord),
                shape.wordBits);
          else
            fill = arith::ConstantIntOp::create(rewriter, loc, reg, 0);
          operands.push_back(fill);
          constraints += "," + shape.constraint().str();
          asmText << llvm::formatv("mov.{0} ${1}, ${2};\n\t",
                                   shape.registerType(), w, nextOperand++);
        }
        operands.push_back(masks[first]);
        constraints += ",b";
        asmText << "@$" << nextOperand++ << " ";
      }
      operands.push_back(ptrs[first]);
      constraints += ",l";
      asmText << "ld.global" << (op.getIsVolatile() ? ".volatile" : "")
              << cacheQualifier(op.getCache(), /*isStore=*/false)
              << evictionQualifier(op.getEvict());
      if (shape.words > 1)
        asmText << ".v" << shape.words;
      asmText << "." << shape.ptxType() << " ";
      if (shape.words > 1)
        asmText << "{ ";
      for (unsigned w = 0; w < shape.words; ++w)
        asmText << (w ? ", $" : "$") << w;
      if (shape.words > 1)
        asmText << " }";
      asmText << ", [ $" << nextOperand << " + 0 ];";

      Type asmResult =
          shape.words == 1
              ? reg
              : LLVM::LLVMStructType::getLiteral(
                    getContext(), SmallVector<Type>(shape.words, reg));
      // Without side effects the asm would read no memory as far as MLIR and
      // LLVM know: CSE would merge a load with one before an intervening
      // store to the same address, and code motion could move it across the
      // store. Inline asm cannot say "reads memory only".
      auto inlineAsm = LLVM::InlineAsmOp::create(
          rewriter, loc, asmResult, operands, body, constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
      for (unsigned w = 0; w < shape.words; ++w) {
        Value word = shape.words == 1
                         ? inlineAsm.getResult(0)
                         : LLVM::ExtractValueOp::create(
                               rewriter, loc, inlineAsm.getResult(0), w)
                               .getResult();
        unpackWord(rewriter, loc, word, shape.wordBits, element, perWord,
                   results);
      }
    }
    rewriter.replaceOpWithMultiple(op, {results});
    return success();
  }

  VectorWidthQuery vectorWidth;
};

struct StoreOpConversion : OpConversionPattern<tile::StoreOp> {
  StoreOpConversion(const LLVMTypeConverter &converter, MLIRContext *context,
                    VectorWidthQuery vectorWidth)
      : OpConversionPattern(converter, context, /*benefit=*/2),
        vectorWidth(std::move(vectorWidth)) {}

  LogicalResult
  matchAndRewrite(tile::StoreOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> ptrs = registersOf(adaptor.getPtr());
    SmallVector<Value> values = registersOf(adaptor.getValue());
    SmallVector<Value> masks = registersOf(adaptor.getMask());
    Type element = values.front().getType();
    AccessShape shape = getAccessShape(
        element, std::min(vectorWidth(op),
                          contiguousRegisters(op.getValue().getType())));
    unsigned vec = shape.vec, perWord = shape.perWord;
    auto module = op->getParentOfType<ModuleOp>();
    Value owner =
        emitOwnerPredicate(rewriter, loc, op.getPtr().getType(), module);

    for (unsigned first = 0; first < ptrs.size(); first += vec) {
      SmallVector<Value> operands = {ptrs[first]};
      std::string constraints = "l", body;
      llvm::raw_string_ostream asmText(body);
      for (unsigned w = 0; w < shape.words; ++w) {
        operands.push_back(packWord(
            rewriter, loc,
            ArrayRef<Value>(values).slice(first + w * perWord, perWord),
            shape.wordBits));
        constraints += "," + shape.constraint().str();
      }
      Value predicate = masks.empty() ? Value() : masks[first];
      if (owner)
        predicate = predicate
                        ? arith::AndIOp::create(rewriter, loc, predicate, owner)
                              .getResult()
                        : owner;
      if (predicate) {
        operands.push_back(predicate);
        constraints += ",b";
        asmText << "@$" << shape.words + 1 << " ";
      }
      asmText << "st.global" << cacheQualifier(op.getCache(), /*isStore=*/true)
              << evictionQualifier(op.getEvict());
      if (shape.words > 1)
        asmText << ".v" << shape.words;
      asmText << "." << shape.ptxType() << " [ $0 + 0 ], ";
      if (shape.words > 1)
        asmText << "{ ";
      for (unsigned w = 0; w < shape.words; ++w)
        asmText << (w ? ", $" : "$") << w + 1;
      if (shape.words > 1)
        asmText << " }";
      asmText << ";";
      LLVM::InlineAsmOp::create(
          rewriter, loc, TypeRange(), operands, body, constraints,
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr());
    }
    rewriter.eraseOp(op);
    return success();
  }

  VectorWidthQuery vectorWidth;
};

} // namespace

void tilec::lowering::populateMemoryOpToLLVMPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns,
    VectorWidthQuery vectorWidth) {
  patterns.add<LoadOpConversion, StoreOpConversion>(
      converter, patterns.getContext(), vectorWidth);
}
