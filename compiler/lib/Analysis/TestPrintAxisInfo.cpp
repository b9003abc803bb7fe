//===- TestPrintAxisInfo.cpp - remarks with axis information --------------===//

#include "tilec/Analysis/AxisInfo.h"
#include "tilec/Analysis/Passes.h"

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace tilec {
#define GEN_PASS_DEF_TESTPRINTAXISINFO
#include "tilec/Analysis/Passes.h.inc"
} // namespace tilec

using namespace mlir;

namespace {
/// Floats are analysed for constancy only; the tests look at integers and
/// pointers.
bool isPrinted(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  return isa<IntegerType, IndexType, tilec::tile::PointerType>(type);
}

struct TestPrintAxisInfoPass
    : tilec::impl::TestPrintAxisInfoBase<TestPrintAxisInfoPass> {
  void runOnOperation() override {
    tilec::ModuleAxisInfoAnalysis analysis(getOperation());
    auto print = [&](Operation *op, StringRef prefix, unsigned index,
                     Value value) {
      const tilec::AxisInfo *info = analysis.getAxisInfo(value);
      if (!info || !isPrinted(value.getType()))
        return;
      InFlightDiagnostic remark = op->emitRemark();
      if (!prefix.empty())
        remark << prefix << " #" << index << ": ";
      std::string text;
      llvm::raw_string_ostream os(text);
      info->print(os);
      remark << text;
    };
    getOperation().walk([&](Operation *op) {
      if (isa<FunctionOpInterface>(op))
        return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            print(op, "region arg", arg.getArgNumber(), arg);
      bool several = op->getNumResults() > 1;
      for (OpResult result : op->getResults())
        print(op, several ? "result" : "", result.getResultNumber(), result);
    });
  }
};
} // namespace
