//===- CallBindingTest.cpp - a call's arguments bound to a loaded kernel --===//
//
// The sparse library binds a call by the kernel description's positions into
// the pack of the kernel it loaded: a kernel compiled from another version
// of the description (a bundle or cache from before its arguments changed)
// must be refused, not handed the buffers.
//
//===----------------------------------------------------------------------===//

#include "CallBinding.h"

#include "tilec/runtime/ArgPack.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

KernelDescription transposeDescription() {
  return KernelDescription("transpose", "kernels/transpose.cpp", 1)
      .arg(pointer("nb_ptr", "i32"))
      .arg(pointer("nbt_ptr", "i32"))
      .arg(pointer("row_masks_ptr", "i32"))
      .arg(scalar("N", "i32"))
      .candidate("num_warps=4")
      .grid({"N"});
}

rt::ArgPack packOf(std::vector<std::string> pointers) {
  std::vector<KernelArg> signature;
  for (std::string &name : pointers)
    signature.push_back({std::move(name), "ptr<i32>", ArgType::Ptr});
  signature.push_back({"N", "i32", ArgType::I32});
  auto pack = rt::ArgPack::create(signature, {});
  EXPECT_TRUE(pack.ok()) << pack.message();
  return std::move(*pack);
}

TEST(CallBindingTest, AKernelOfTheDescriptionsSignatureBinds) {
  rt::ArgPack pack = packOf({"nb_ptr", "nbt_ptr", "row_masks_ptr"});
  auto pointers =
      sparse::bindIntegerArguments(pack, transposeDescription(), {{"N", 7}});
  ASSERT_TRUE(pointers.ok()) << pointers.message();
  EXPECT_EQ(pointers->size(), 3u);
}

TEST(CallBindingTest, AKernelOfAnotherSignatureIsRefused) {
  // One argument fewer, and one renamed in place (same types and slots,
  // which binding by position would not notice).
  for (auto names : {std::vector<std::string>{"nb_ptr", "nbt_ptr"},
                     std::vector<std::string>{"nb_ptr", "nbt_ptr", "masks"}}) {
    rt::ArgPack pack = packOf(names);
    auto pointers =
        sparse::bindIntegerArguments(pack, transposeDescription(), {{"N", 7}});
    ASSERT_FALSE(pointers.ok());
    EXPECT_NE(pointers.message().find(
                  "transpose: the loaded cubin takes (nb_ptr, nbt_ptr"),
              std::string::npos)
        << pointers.message();
    EXPECT_NE(pointers.message().find(
                  "where the kernel takes (nb_ptr, nbt_ptr, row_masks_ptr, N)"),
              std::string::npos)
        << pointers.message();
  }
}

} // namespace
