//===- KernelBuilderTest.cpp - the Triton-style kernel builder ------------===//

#include "tilec/Kernel/KernelBuilder.h"
#include "tilec/Kernel/KernelDefinition.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <memory>

using namespace tilec::kernel;

namespace {

/// A kernel `@k(%p: !tile.ptr<f32>, %n: i32)` under construction, with the
/// diagnostics it produced.
class KernelBuilderTest : public ::testing::Test {
protected:
  KernelBuilderTest()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          diagnostics.push_back(diag.str());
          return mlir::success();
        }) {
    KernelDefinition::loadDialects(context);
    mlir::OpBuilder builder(&context);
    loc = mlir::FileLineColLoc::get(&context, "test.cpp", 1, 1);
    module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto ptrType = tilec::tile::PointerType::get(builder.getF32Type());
    func = mlir::func::FuncOp::create(
        builder, loc, "k",
        builder.getFunctionType({ptrType, builder.getI32Type()}, {}));
    mlir::Block *entry = func.addEntryBlock();
    kb = std::make_unique<KernelBuilder>(entry, loc);
    kb->bindArg("p", entry->getArgument(0));
    kb->bindArg("n", entry->getArgument(1));
    kb->bindParam("BLOCK", 16);
  }

  /// Ends the kernel and verifies it.
  bool finishAndVerify() {
    mlir::OpBuilder builder(&context);
    builder.setInsertionPointToEnd(&func.getBody().front());
    mlir::func::ReturnOp::create(builder, loc);
    return mlir::succeeded(mlir::verify(*module));
  }

  mlir::MLIRContext context;
  std::vector<std::string> diagnostics;
  mlir::ScopedDiagnosticHandler handler;
  mlir::Location loc = mlir::UnknownLoc::get(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::unique_ptr<KernelBuilder> kb;
};

TEST_F(KernelBuilderTest, ShapeMismatchIsADiagnosticNotACrash) {
  Tensor a = kb->zeros({4, 8}, kb->f32Type());
  Tensor b = kb->zeros({8, 4}, kb->f32Type());
  Tensor sum = a + b;
  EXPECT_FALSE(sum);
  EXPECT_TRUE(kb->hasErrors());
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0],
            "operands of '+' have incompatible shapes 4x8 and 8x4");
  // Using the null result reports nothing more.
  Tensor later = kb->exp(sum * 2.0) + a;
  EXPECT_FALSE(later);
  kb->store(kb->arg("p"), kb->sum(later, 0));
  EXPECT_EQ(diagnostics.size(), 1u);
}

TEST_F(KernelBuilderTest, RanksAreOnlyExpandedExplicitly) {
  Tensor row = kb->arange(0, 8);
  Tensor column = kb->expandDims(kb->arange(0, 4), 1);
  EXPECT_FALSE(row + column);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("different ranks"), std::string::npos);
}

TEST_F(KernelBuilderTest, ElementTypesMustAgree) {
  Tensor halves = kb->zeros({16}, kb->f16Type());
  Tensor floats = kb->zeros({16}, kb->f32Type());
  EXPECT_FALSE(halves + floats);
  EXPECT_FALSE(kb->arange(0, 16) + 0.5);
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_NE(diagnostics[0].find("different element types, 'f16' and 'f32'"),
            std::string::npos);
  EXPECT_NE(diagnostics[1].find("0.5 needs an explicit cast() to 'i32'"),
            std::string::npos);
}

TEST_F(KernelBuilderTest, BroadcastsLikeTriton) {
  Tensor rows = kb->expandDims(kb->arange(0, 4), 1);    // 4x1
  Tensor columns = kb->expandDims(kb->arange(0, 8), 0); // 1x8
  Tensor grid = rows * 8 + columns;
  ASSERT_TRUE(grid);
  EXPECT_EQ(grid.getShape(), (llvm::ArrayRef<int64_t>{4, 8}));
  // A scalar meets a tensor: it is splat.
  Tensor mask = grid < kb->arg("n");
  EXPECT_EQ(mask.getShape(), (llvm::ArrayRef<int64_t>{4, 8}));
  EXPECT_TRUE(mask.getElementType().isInteger(1));
  // Pointer plus offsets is pointer arithmetic on the broadcast shape.
  Tensor ptrs = kb->arg("p") + grid;
  EXPECT_TRUE(ptrs.isPointer());
  EXPECT_EQ(ptrs.getShape(), (llvm::ArrayRef<int64_t>{4, 8}));
  Tensor values = kb->load(ptrs, mask, 0.0);
  EXPECT_TRUE(values.isFloat());
  kb->store(ptrs, values * 2, mask);
  EXPECT_FALSE(kb->hasErrors());
  EXPECT_TRUE(finishAndVerify());
}

TEST_F(KernelBuilderTest, NumbersTakeTheTypeTheyMeet) {
  Tensor halves = kb->zeros({16}, kb->f16Type()) * 2;
  EXPECT_TRUE(halves.getElementType().isF16());
  // 0xFFFFFFFF is the i32 -1 (the "no row" marker of a neighbour map).
  Tensor none = kb->constant(0xFFFFFFFFu, kb->i32Type());
  auto constant = none.getValue().getDefiningOp<mlir::arith::ConstantIntOp>();
  ASSERT_TRUE(constant);
  EXPECT_EQ(constant.value(), -1);
  EXPECT_FALSE(kb->constant(int64_t(1) << 40, kb->i32Type()));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("does not fit in 'i32'"), std::string::npos);
}

TEST_F(KernelBuilderTest, BitwiseOperatorsAndShifts) {
  Tensor range = kb->arange(0, 16);
  EXPECT_TRUE((range ^ 5).getValue().getDefiningOp<mlir::arith::XOrIOp>());
  EXPECT_TRUE((range << 2).getValue().getDefiningOp<mlir::arith::ShLIOp>());
  // >> keeps the sign (Triton's >> on signed integers); ShrU shifts in zeros.
  EXPECT_TRUE((range >> 1).getValue().getDefiningOp<mlir::arith::ShRSIOp>());
  EXPECT_TRUE(kb->binary(BinaryOpKind::ShrU, kb->cast(range, kb->i64Type()), 3)
                  .getValue()
                  .getDefiningOp<mlir::arith::ShRUIOp>());
  EXPECT_FALSE(kb->zeros({16}, kb->f32Type()) << 1);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("'<<' needs integers"), std::string::npos);
}

TEST_F(KernelBuilderTest, DotChecksShapes) {
  Tensor a = kb->zeros({16, 32}, kb->f16Type());
  Tensor b = kb->zeros({16, 16}, kb->f16Type());
  EXPECT_FALSE(kb->dot(a, b));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("K of a (32) differs from K of b (16)"),
            std::string::npos);
  Tensor product = kb->dot(a, kb->trans(a));
  ASSERT_TRUE(product);
  EXPECT_EQ(product.getShape(), (llvm::ArrayRef<int64_t>{16, 16}));
  EXPECT_TRUE(product.getElementType().isF32());
}

TEST_F(KernelBuilderTest, CastPicksTheConversion) {
  Tensor values = kb->zeros({16}, kb->f32Type());
  Tensor mask = kb->arange(0, 16) < 3;
  EXPECT_TRUE(kb->cast(values, kb->f16Type())
                  .getValue()
                  .getDefiningOp<mlir::arith::TruncFOp>());
  EXPECT_TRUE(kb->cast(mask, kb->i32Type())
                  .getValue()
                  .getDefiningOp<mlir::arith::ExtUIOp>());
  EXPECT_TRUE(kb->cast(kb->arange(0, 16), kb->f32Type())
                  .getValue()
                  .getDefiningOp<mlir::arith::SIToFPOp>());
  EXPECT_TRUE(kb->cast(kb->zeros({16}, kb->f16Type()), kb->bf16Type())
                  .getElementType()
                  .isBF16());
  EXPECT_FALSE(kb->cast(values, kb->pointerType(kb->f32Type())));
  EXPECT_EQ(diagnostics.size(), 1u);
}

TEST_F(KernelBuilderTest, ForRangeCarriesValues) {
  Tensor zeros = kb->zeros({16}, kb->f32Type());
  Tensor ptrs = kb->arg("p") + kb->arange(0, 16);
  Tensors results =
      kb->forRange(0, kb->arg("n"), 1, {ptrs, zeros},
                   [&](Tensor iv, llvm::ArrayRef<Tensor> carried) -> Tensors {
                     Tensor next = carried[1] + kb->load(carried[0]);
                     return {carried[0] + 16, next};
                   });
  ASSERT_EQ(results.size(), 2u);
  kb->store(kb->arg("p"), kb->sum(results[1], 0));
  EXPECT_FALSE(kb->hasErrors());
  EXPECT_TRUE(finishAndVerify());
  int loops = 0;
  module->walk([&](mlir::scf::ForOp loop) {
    ++loops;
    EXPECT_TRUE(loop.getInductionVar().getType().isInteger(32));
  });
  EXPECT_EQ(loops, 1);
}

TEST_F(KernelBuilderTest, IfThenGuardsItsBody) {
  Tensor first = kb->programId(0) * 16;
  kb->ifThen(first < kb->arg("n"), [&] {
    Tensor ptrs = kb->arg("p") + first + kb->arange(0, 16);
    kb->store(ptrs, kb->load(ptrs) + 1.0);
  });
  EXPECT_FALSE(kb->hasErrors());
  EXPECT_TRUE(finishAndVerify());
  int branches = 0, stores = 0;
  module->walk([&](mlir::scf::IfOp branch) {
    ++branches;
    EXPECT_EQ(branch.getNumResults(), 0u);
    EXPECT_FALSE(branch.elseBlock());
    branch.thenBlock()->walk([&](tilec::tile::StoreOp) { ++stores; });
  });
  EXPECT_EQ(branches, 1);
  EXPECT_EQ(stores, 1);
  // A tensor condition is refused.
  kb->ifThen(kb->arange(0, 16) < 4, [] {});
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("must be an i1 scalar"), std::string::npos);
}

TEST_F(KernelBuilderTest, WhileLoopCarriesValuesUntilItsCondition) {
  Tensor ptrs = kb->arg("p") + kb->arange(0, 16);
  Tensor zeros = kb->zeros({16}, kb->f32Type());
  Tensors results = kb->whileLoop(
      {kb->constant(0, kb->i32Type()), zeros},
      [&](llvm::ArrayRef<Tensor> carried) {
        return kb->max(carried[1], 0) < 100.0;
      },
      [&](llvm::ArrayRef<Tensor> carried) -> Tensors {
        return {carried[0] + 1, carried[1] + kb->loadVolatile(ptrs)};
      });
  ASSERT_EQ(results.size(), 2u);
  kb->store(ptrs, results[1]);
  EXPECT_FALSE(kb->hasErrors());
  EXPECT_TRUE(finishAndVerify());
  int loops = 0, volatileLoads = 0;
  module->walk([&](mlir::scf::WhileOp loop) {
    ++loops;
    EXPECT_EQ(loop.getNumResults(), 2u);
    loop.getAfter().walk([&](tilec::tile::LoadOp load) {
      volatileLoads += load.getIsVolatile();
    });
  });
  EXPECT_EQ(loops, 1);
  EXPECT_EQ(volatileLoads, 1);
  // A tensor condition, and a body changing a carried type, are refused.
  kb->whileLoop(
      {zeros}, [&](llvm::ArrayRef<Tensor> carried) { return carried[0] < 1.0; },
      [&](llvm::ArrayRef<Tensor> carried) -> Tensors {
        return {kb->cast(carried[0], kb->f16Type())};
      });
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_NE(diagnostics[0].find("the condition must be an i1 scalar"),
            std::string::npos);
  EXPECT_NE(diagnostics[1].find("carried value #0 enters as 'tensor<16xf32>' "
                                "but the body yields 'tensor<16xf16>'"),
            std::string::npos);
}

TEST_F(KernelBuilderTest, HistogramAndBinRankTakeOneDimensionalI32) {
  Tensor lanes = kb->arange(0, 16);
  Tensor digits = kb->load(kb->arg("p") + lanes) < 3.0;
  Tensor keys = kb->cast(digits, kb->i32Type());
  Tensor mask = lanes < 12;
  Tensor counts = kb->histogram(keys, 4, mask);
  Tensor ranks = kb->binRank(keys, 4);
  ASSERT_TRUE(counts && ranks);
  EXPECT_EQ(counts.getShape(), llvm::ArrayRef<int64_t>{4});
  EXPECT_EQ(ranks.getType(), keys.getType());
  EXPECT_FALSE(kb->hasErrors());
  EXPECT_TRUE(finishAndVerify());
  // Floats, two dimensions, no bins and a mask of another shape are refused.
  kb->histogram(kb->zeros({16}, kb->f32Type()), 4);
  kb->binRank(kb->zeros({4, 4}, kb->i32Type()), 4);
  kb->binRank(keys, 0);
  kb->histogram(keys, 4, kb->arange(0, 8) < 2);
  ASSERT_EQ(diagnostics.size(), 4u);
  EXPECT_NE(diagnostics[0].find("histogram: needs a 1-D tensor of i32, got "
                                "'tensor<16xf32>'"),
            std::string::npos);
  EXPECT_NE(diagnostics[1].find("binRank: needs a 1-D tensor of i32"),
            std::string::npos);
  EXPECT_NE(diagnostics[2].find("binRank: bins must be in [1, 2^31), got 0"),
            std::string::npos);
  EXPECT_NE(diagnostics[3].find("the mask must be i1 of the shape of"),
            std::string::npos);
}

TEST_F(KernelBuilderTest, ForRangeRejectsAChangedCarriedType) {
  Tensor zeros = kb->zeros({16}, kb->f32Type());
  kb->forRange(0, 4, 1, {zeros},
               [&](Tensor, llvm::ArrayRef<Tensor> carried) -> Tensors {
                 return {kb->cast(carried[0], kb->f16Type())};
               });
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_NE(diagnostics[0].find("carried value #0 enters as 'tensor<16xf32>' "
                                "but the body yields 'tensor<16xf16>'"),
            std::string::npos);
}

TEST_F(KernelBuilderTest, UnknownNamesAreDiagnosed) {
  EXPECT_FALSE(kb->arg("q"));
  EXPECT_EQ(kb->param("BLOCK"), 16);
  kb->param("BLOCK_Z");
  EXPECT_FALSE(kb->programId(3));
  EXPECT_FALSE(kb->arange(0, 12));
  ASSERT_EQ(diagnostics.size(), 4u);
  EXPECT_NE(diagnostics[0].find("argument 'q'"), std::string::npos);
  EXPECT_NE(diagnostics[1].find("meta-parameter 'BLOCK_Z'"), std::string::npos);
  EXPECT_NE(diagnostics[2].find("axis must be 0, 1 or 2"), std::string::npos);
  EXPECT_NE(diagnostics[3].find("power of two"), std::string::npos);
}

TEST(KernelBodyTest, AMistakeInTheBodyFailsSpecialization) {
  KernelDefinition broken(
      tilec::KernelDescription("broken", "test/broken.cpp")
          .arg(tilec::pointer("p", "f32")),
      [](KernelBuilder &kb) {
        Tensor rows = kb.expandDims(kb.arange(0, 16), 1);
        Tensor ptrs = kb.arg("p") + rows;
        kb.store(ptrs, kb.load(ptrs) + kb.zeros({32, 1}, kb.f32Type()));
      });
  mlir::MLIRContext context;
  std::vector<std::string> messages;
  std::string location;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    messages.push_back(diag.str());
    llvm::raw_string_ostream os(location);
    os << diag.getLocation();
    return mlir::success();
  });
  auto module = broken.specialize(context, tilec::Config());
  EXPECT_TRUE(mlir::failed(module));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0],
            "operands of '+' have incompatible shapes 16x1 and 32x1");
  EXPECT_NE(location.find("test/broken.cpp"), std::string::npos) << location;
}

} // namespace
