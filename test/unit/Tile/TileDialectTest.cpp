//===- TileDialectTest.cpp - C++ API of the tile dialect ------------------===//

#include "tilec/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

namespace {

class TileDialectTest : public ::testing::Test {
protected:
  TileDialectTest() {
    context.loadDialect<tilec::tile::TileDialect, mlir::func::FuncDialect>();
  }
  mlir::MLIRContext context;
};

TEST_F(TileDialectTest, PointerTypeDefaultsToGlobalAddressSpace) {
  auto f16 = mlir::Float16Type::get(&context);
  auto ptr = tilec::tile::PointerType::get(f16);
  EXPECT_EQ(ptr.getAddressSpace(), 1);
  EXPECT_EQ(ptr.getPointeeType(), f16);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  mlir::Type(ptr).print(os);
  EXPECT_EQ(printed, "!tile.ptr<f16>");
  EXPECT_NE(ptr, tilec::tile::PointerType::get(f16, 3));
}

TEST_F(TileDialectTest, PointeeOfTensorKeepsShape) {
  auto f32 = mlir::Float32Type::get(&context);
  auto ptrTensor =
      mlir::RankedTensorType::get({64, 32}, tilec::tile::PointerType::get(f32));
  auto pointee = tilec::tile::getPointeeTypeOrTensorOf(ptrTensor);
  EXPECT_EQ(pointee, mlir::RankedTensorType::get({64, 32}, f32));
  auto mask = tilec::tile::getI1TypeWithShapeOf(ptrTensor);
  EXPECT_EQ(mask, mlir::RankedTensorType::get(
                      {64, 32}, mlir::IntegerType::get(&context, 1)));
  EXPECT_FALSE(tilec::tile::getPointeeTypeOrTensorOf(f32));
}

TEST_F(TileDialectTest, BuildersInferLoadResultAndVerify) {
  mlir::OpBuilder builder(&context);
  auto loc = builder.getUnknownLoc();
  auto module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module.getBody());
  auto f32 = builder.getF32Type();
  auto ptrType = tilec::tile::PointerType::get(f32);
  auto func = mlir::func::FuncOp::create(
      builder, loc, "k", builder.getFunctionType({ptrType}, {}));
  func->setAttr(tilec::tile::TileDialect::getKernelAttrName(),
                builder.getUnitAttr());
  builder.setInsertionPointToEnd(func.addEntryBlock());
  auto range = tilec::tile::MakeRangeOp::create(
      builder, loc, mlir::RankedTensorType::get({128}, builder.getI32Type()), 0,
      128);
  auto ptrTensor = mlir::RankedTensorType::get({128}, ptrType);
  auto splat = tilec::tile::SplatOp::create(builder, loc, ptrTensor,
                                            func.getArgument(0));
  auto ptrs =
      tilec::tile::AddPtrOp::create(builder, loc, ptrTensor, splat, range);
  auto load = tilec::tile::LoadOp::create(builder, loc, ptrs, mlir::Value(),
                                          mlir::Value());
  EXPECT_EQ(load.getType(), mlir::RankedTensorType::get({128}, f32));
  tilec::tile::StoreOp::create(builder, loc, ptrs, load, mlir::Value());
  mlir::func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(module)));
  module->erase();
}

TEST_F(TileDialectTest, VerifierReportsDotShapeMismatch) {
  const char *source = R"mlir(
    func.func @f(%a: tensor<16x8xf16>, %b: tensor<4x16xf16>, %c: tensor<16x16xf32>) {
      %d = tile.dot %a, %b, %c : tensor<16x8xf16> * tensor<4x16xf16> -> tensor<16x16xf32>
      return
    })mlir";
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    message = diag.str();
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  EXPECT_FALSE(module);
  EXPECT_EQ(message, "'tile.dot' op K of a (8) differs from K of b (4)");
}

} // namespace
