//===- Interpreter.cpp - run a ttir kernel on the CPU ---------------------===//
//
// The memory, the grid and the control flow (func, scf); the ops
// themselves are in ArithOps.cpp and TileOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/Format.h"

#include <cstring>

namespace tilec::interp {

namespace {
// Buffer i lives at [(i + 1) << kBufferShift, + its size): no address of
// one buffer is another's, and 0 (a null pointer) is none.
constexpr unsigned kBufferShift = 40;

std::string hexAddress(uint64_t address) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format_hex(address, 2);
  return text;
}
} // namespace

uint64_t KernelMemory::add(std::string name, uint8_t *data, size_t bytes) {
  // Buffer i + 1 << kBufferShift must stay below 2^64.
  if (buffers_.size() + 1 >= (uint64_t(1) << (64 - kBufferShift)))
    return 0;
  buffers_.push_back({std::move(name), data, bytes});
  return static_cast<uint64_t>(buffers_.size()) << kBufferShift;
}

bool KernelMemory::release(uint64_t address) {
  uint64_t index = address >> kBufferShift;
  if (address & ((uint64_t(1) << kBufferShift) - 1) || index == 0 ||
      index > buffers_.size() || buffers_[index - 1].released)
    return false;
  Buffer &buffer = buffers_[index - 1];
  buffer.released = true;
  buffer.data = nullptr;
  return true;
}

uint8_t *KernelMemory::resolve(uint64_t address, size_t size,
                               std::string &error) const {
  uint64_t index = address >> kBufferShift;
  uint64_t offset = address & ((uint64_t(1) << kBufferShift) - 1);
  if (index == 0 || index > buffers_.size()) {
    error = "address " + hexAddress(address) + " is in no buffer";
    return nullptr;
  }
  const Buffer &buffer = buffers_[index - 1];
  if (buffer.released) {
    error = "address " + hexAddress(address) + " is in '" + buffer.name +
            "', which was released";
    return nullptr;
  }
  if (offset + size > buffer.bytes) {
    error = "byte " + std::to_string(offset) + " of '" + buffer.name + "' (" +
            std::to_string(buffer.bytes) + " bytes) is out of bounds";
    return nullptr;
  }
  if (size > 1 && offset % size != 0) {
    error = "byte " + std::to_string(offset) + " of '" + buffer.name +
            "' is not aligned to the " + std::to_string(size) +
            "-byte element read or written there";
    return nullptr;
  }
  return buffer.data + offset;
}

mlir::InFlightDiagnostic Program::error(mlir::Operation &op) const {
  return op.emitError() << "program (" << id_[0] << ", " << id_[1] << ", "
                        << id_[2] << "): ";
}

mlir::FailureOr<ElementType> Program::typeOf(mlir::Operation &op,
                                             mlir::Value value) const {
  std::optional<ElementType> type = elementTypeOf(value.getType());
  if (!type) {
    error(op) << "the interpreter holds no value of type " << value.getType();
    return mlir::failure();
  }
  return *type;
}

uint8_t *Program::access(mlir::Operation &op, uint64_t address, unsigned bytes,
                         size_t lane) {
  std::string why;
  uint8_t *host = memory_.resolve(address, bytes, why);
  if (!host)
    error(op) << "lane " << lane << ": " << why;
  return host;
}

mlir::LogicalResult Program::readElement(mlir::Operation &op, uint64_t address,
                                         Tensor &out, size_t lane) {
  const ElementType &type = out.type;
  uint8_t *host = access(op, address, type.bytes(), lane);
  if (!host)
    return mlir::failure();
  uint64_t bits = 0;
  std::memcpy(&bits, host, type.bytes()); // little-endian, as the GPU
  if (type.isFloat())
    out.floats[lane] = floatFromBits(bits, type.format);
  else if (type.width == 1) // a byte in memory, its low bit the value (as
                            // the GPU's load truncates); true is -1 held
    out.ints[lane] = (bits & 1) != 0 ? -1 : 0;
  else
    out.ints[lane] = wrapToWidth(static_cast<int64_t>(bits), type.width);
  return mlir::success();
}

mlir::LogicalResult Program::writeElement(mlir::Operation &op, uint64_t address,
                                          const ElementType &type, size_t lane,
                                          int64_t intValue, double floatValue) {
  uint8_t *host = access(op, address, type.bytes(), lane);
  if (!host)
    return mlir::failure();
  uint64_t bits = type.isFloat()    ? floatBits(floatValue, type.format)
                  : type.width == 1 ? uint64_t(intValue != 0)
                                    : static_cast<uint64_t>(intValue);
  std::memcpy(host, &bits, type.bytes());
  return mlir::success();
}

mlir::LogicalResult
Program::runBlock(mlir::Block &block, llvm::ArrayRef<TensorRef> arguments,
                  llvm::SmallVectorImpl<TensorRef> &terminatorOperands) {
  for (auto [argument, value] :
       llvm::zip_equal(block.getArguments(), arguments))
    bind(argument, value);
  for (mlir::Operation &op : block.without_terminator())
    if (mlir::failed(run(op)))
      return mlir::failure();
  terminatorOperands.clear();
  for (mlir::Value value : block.getTerminator()->getOperands())
    terminatorOperands.push_back(values_.lookup(value));
  return mlir::success();
}

mlir::LogicalResult Program::run(mlir::Operation &op) {
  for (mlir::Type type : op.getResultTypes()) {
    auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
    if (tensor && (!tensor.hasStaticShape() ||
                   tensor.getNumElements() > options_.maxTensorElements))
      return error(op) << "a result of " << type
                       << " is more than the interpreter holds ("
                       << options_.maxTensorElements << " elements)";
    work_ += tensor ? tensor.getNumElements() : 1;
  }
  if (work_ > options_.maxWork)
    return error(op) << "the run did more than " << options_.maxWork
                     << " element operations (InterpretOptions::maxWork)";
  bool handled = false;
  mlir::LogicalResult result = runControlFlow(op, handled);
  if (!handled)
    result = runArith(op, handled);
  if (!handled)
    result = runTile(op, handled);
  if (!handled) {
    error(op) << "the interpreter does not run '" << op.getName() << "'";
    return mlir::failure();
  }
  return result;
}

namespace {

int64_t scalarInt(const Tensor &tensor) { return tensor.ints.front(); }

// A scalar of `type` from `value` (a float's bits).
TensorRef scalarOf(int64_t value, ElementType type) {
  auto tensor = std::make_shared<Tensor>(std::vector<int64_t>{}, type);
  if (type.isFloat())
    tensor->floats[0] =
        floatFromBits(static_cast<uint64_t>(value), type.format);
  else
    tensor->ints[0] = wrapToWidth(value, type.width);
  return tensor;
}

} // namespace

mlir::LogicalResult Program::runControlFlow(mlir::Operation &op,
                                            bool &handled) {
  handled = true;
  llvm::SmallVector<TensorRef> carried, yielded;
  if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op)) {
    mlir::FailureOr<ElementType> ivType = typeOf(op, loop.getInductionVar());
    if (mlir::failed(ivType))
      return mlir::failure();
    int64_t lower = scalarInt(valueOf(loop.getLowerBound()));
    int64_t upper = scalarInt(valueOf(loop.getUpperBound()));
    int64_t step = scalarInt(valueOf(loop.getStep()));
    if (step <= 0)
      return error(op) << "scf.for with step " << step;
    for (mlir::Value init : loop.getInitArgs())
      carried.push_back(values_.lookup(init));
    // The bounds compare as the loop says (signed unless `unsignedCmp`).
    auto below = [&](int64_t iv) {
      return loop.getUnsignedCmp() ? unsignedOf(iv, ivType->width) <
                                         unsignedOf(upper, ivType->width)
                                   : iv < upper;
    };
    int64_t iterations = 0;
    for (int64_t iv = lower; below(iv);
         iv = wrapToWidth(static_cast<int64_t>(uint64_t(iv) + uint64_t(step)),
                          ivType->width)) {
      if (++iterations > options_.maxLoopIterations)
        return error(op) << "the loop ran " << options_.maxLoopIterations
                         << " iterations without finishing";
      llvm::SmallVector<TensorRef> arguments{scalarOf(iv, *ivType)};
      arguments.append(carried.begin(), carried.end());
      if (mlir::failed(runBlock(*loop.getBody(), arguments, yielded)))
        return mlir::failure();
      carried.assign(yielded.begin(), yielded.end());
    }
    for (auto [result, value] : llvm::zip_equal(loop.getResults(), carried))
      bind(result, value);
    return mlir::success();
  }
  if (auto branch = llvm::dyn_cast<mlir::scf::IfOp>(op)) {
    bool taken = scalarInt(valueOf(branch.getCondition())) != 0;
    mlir::Region &region =
        taken ? branch.getThenRegion() : branch.getElseRegion();
    if (region.empty())
      return mlir::success();
    if (mlir::failed(runBlock(region.front(), {}, yielded)))
      return mlir::failure();
    for (auto [result, value] : llvm::zip_equal(branch.getResults(), yielded))
      bind(result, value);
    return mlir::success();
  }
  if (auto loop = llvm::dyn_cast<mlir::scf::WhileOp>(op)) {
    for (mlir::Value init : loop.getInits())
      carried.push_back(values_.lookup(init));
    for (int64_t iterations = 0;; ++iterations) {
      if (iterations > options_.maxLoopIterations)
        return error(op) << "the loop ran " << options_.maxLoopIterations
                         << " iterations without finishing (does a program "
                            "wait for a later one? the interpreter runs "
                            "them one after another)";
      if (mlir::failed(runBlock(loop.getBefore().front(), carried, yielded)))
        return mlir::failure();
      // scf.condition(%flag) %values...
      bool proceed = scalarInt(*yielded.front()) != 0;
      carried.assign(yielded.begin() + 1, yielded.end());
      if (!proceed)
        break;
      if (mlir::failed(runBlock(loop.getAfter().front(), carried, yielded)))
        return mlir::failure();
      carried.assign(yielded.begin(), yielded.end());
    }
    for (auto [result, value] : llvm::zip_equal(loop.getResults(), carried))
      bind(result, value);
    return mlir::success();
  }
  handled = false;
  return mlir::success();
}

mlir::LogicalResult interpretKernel(mlir::ModuleOp module,
                                    std::array<int64_t, 3> grid,
                                    llvm::ArrayRef<int64_t> arguments,
                                    KernelMemory &memory,
                                    const InterpretOptions &options) {
  mlir::func::FuncOp kernel;
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (func->hasAttr("tile.kernel") && !func.isExternal()) {
      if (kernel)
        return module.emitError("the interpreter runs one kernel; the module "
                                "has '")
               << kernel.getName() << "' and '" << func.getName() << "'";
      kernel = func;
    }
  if (!kernel)
    return module.emitError(
        "the module has no func.func with tile.kernel and a body");
  mlir::Block &entry = kernel.getBody().front();
  if (entry.getNumArguments() != arguments.size())
    return kernel.emitError("the kernel takes ")
           << entry.getNumArguments() << " arguments; " << arguments.size()
           << " were given";
  llvm::SmallVector<TensorRef> bound;
  for (auto [argument, value] :
       llvm::zip_equal(entry.getArguments(), arguments)) {
    std::optional<ElementType> type = elementTypeOf(argument.getType());
    if (!type || llvm::isa<mlir::RankedTensorType>(argument.getType()))
      return kernel.emitError("the interpreter cannot pass an argument of "
                              "type ")
             << argument.getType();
    bound.push_back(scalarOf(value, *type));
  }
  for (int64_t extent : grid)
    if (extent < 0)
      return kernel.emitError("a grid extent is negative");
  llvm::SmallVector<TensorRef> returned;
  int64_t work = 0;
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        Program program({x, y, z}, grid, memory, options, work);
        if (mlir::failed(program.runBlock(entry, bound, returned)))
          return mlir::failure();
      }
  return mlir::success();
}

} // namespace tilec::interp
