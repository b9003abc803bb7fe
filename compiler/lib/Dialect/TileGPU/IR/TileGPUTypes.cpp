//===- TileGPUTypes.cpp - tilegpu types -----------------------------------===//

#include "tilec/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tilec::tilegpu;

#define GET_TYPEDEF_CLASSES
#include "tilec/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"

void TileGPUDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tilec/Dialect/TileGPU/IR/TileGPUTypes.cpp.inc"
      >();
}

/// `<` dims `x` element `,` encoding (`,` `mutable`)? `>`
Type MemDescType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseComma() ||
      parser.parseAttribute(encoding))
    return {};
  bool isMutable = succeeded(parser.parseOptionalComma());
  if (isMutable && parser.parseKeyword("mutable"))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<MemDescType>(parser.getContext(), shape,
                                        elementType, encoding, isMutable);
}

void MemDescType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape())
    printer << dim << "x";
  printer << getElementType() << ", " << getEncoding();
  if (getIsMutable())
    printer << ", mutable";
  printer << ">";
}

LogicalResult
MemDescType::verify(function_ref<InFlightDiagnostic()> emitError,
                    ArrayRef<int64_t> shape, Type elementType,
                    Attribute encoding, bool isMutable) {
  auto shared = dyn_cast<SharedEncodingInterface>(encoding);
  if (!shared)
    return emitError() << "a memdesc needs a shared encoding, got "
                       << encoding;
  if (shape.empty() || llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
    return emitError() << "a memdesc needs a static, non-empty shape";
  if (shared.getOrder().size() > shape.size())
    return emitError() << "the encoding orders " << shared.getOrder().size()
                       << " dimensions but the memdesc has " << shape.size();
  if (!elementType.isIntOrFloat() || elementType.getIntOrFloatBitWidth() < 8)
    return emitError() << "a memdesc holds integers or floats of at least 8 "
                          "bits, got "
                       << elementType;
  return success();
}

int64_t MemDescType::getSizeInBytes() const {
  int64_t elements = 1;
  for (int64_t dim : getShape())
    elements *= dim;
  return elements * getElementType().getIntOrFloatBitWidth() / 8;
}

SharedEncodingInterface MemDescType::getSharedEncoding() const {
  return cast<SharedEncodingInterface>(getEncoding());
}
