//===- KernelDefinitionTest.cpp - the registry's kernels and their configs ===//

#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Kernel/KernelRegistry.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace tilec;
using namespace tilec::kernel;

namespace {

const KernelDescription &matmul() {
  return lookupKernel("matmul")->getDescription();
}

TEST(KernelDefinitionTest, RegistryHoldsEveryKernelFile) {
  std::vector<std::string> names;
  for (const KernelDefinition *kernel : listKernels())
    names.push_back(kernel->getName());
  EXPECT_EQ(names, (std::vector<std::string>{"block_offsets",
                                             "column_sums",
                                             "exclusive_scan",
                                             "gather_matmul",
                                             "mask_cover",
                                             "mask_unions",
                                             "matmul",
                                             "neighbour_keys",
                                             "neighbour_transpose",
                                             "offset_pair_counts",
                                             "offset_pairs",
                                             "output_voxels",
                                             "radix_histogram",
                                             "radix_scatter",
                                             "softmax",
                                             "sparse_conv_fwd",
                                             "sparse_conv_wgrad",
                                             "split_sum",
                                             "strided_candidates",
                                             "vector_add",
                                             "voxel_hash_insert",
                                             "voxel_neighbours"}));
  EXPECT_EQ(lookupKernel("nope"), nullptr);
  EXPECT_EQ(knownKernelNames(),
            "block_offsets, column_sums, exclusive_scan, gather_matmul, "
            "mask_cover, mask_unions, matmul, neighbour_keys, "
            "neighbour_transpose, offset_pair_counts, offset_pairs, "
            "output_voxels, radix_histogram, radix_scatter, softmax, "
            "sparse_conv_fwd, sparse_conv_wgrad, split_sum, "
            "strided_candidates, vector_add, voxel_hash_insert, "
            "voxel_neighbours");
}

TEST(KernelDefinitionTest, ResolvesAgainstTheMatmul) {
  auto config =
      matmul().parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4");
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->str(), "ALLOW_TF32=0,BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,"
                           "DTYPE=f16,GROUP_M=8,num_warps=4,num_stages=1");
  auto error = matmul().parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=8");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.message().find("'BLOCK_K' must be at least 16"),
            std::string::npos);
}

// Every stride is an argument, none declared divisible: a call's values
// specialize the kernel instead.
TEST(KernelDefinitionTest, MatmulTakesAllSixStrides) {
  Config config;
  config.types["DTYPE"] = "f32";
  config.params = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}};
  auto signature = matmul().getSignature(config);
  ASSERT_TRUE(signature.ok()) << signature.message();
  std::vector<std::string> names;
  for (const ArgumentDecl &argument : *signature) {
    names.push_back(argument.name);
    if (argument.type == "i32")
      EXPECT_EQ(argument.divisibilityHint, 0) << argument.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am",
                       "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                       "stride_cn"}));
  EXPECT_EQ((*signature)[0].type, "ptr<f32>");
  EXPECT_EQ(matmul().getSignature()[0].type, "ptr<DTYPE>");
}

TEST(KernelDefinitionTest, SpecializeReportsABadConfigAtTheKernel) {
  mlir::MLIRContext context;
  std::string message, location;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    message = diag.str();
    llvm::raw_string_ostream os(location);
    os << diag.getLocation();
    return mlir::success();
  });
  Config config;
  config.params = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 8}};
  auto module = lookupKernel("matmul")->specialize(context, config);
  EXPECT_TRUE(mlir::failed(module));
  EXPECT_NE(message.find("kernel 'matmul': 'BLOCK_K' must be at least 16"),
            std::string::npos)
      << message;
  EXPECT_NE(location.find("kernels/matmul.cpp"), std::string::npos) << location;
}

} // namespace
