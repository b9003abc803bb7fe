//===- SampleBundle.h - A small bundle for the bundle tests -----*- C++ -*-===//
//
// Two kernels, three cubins (one for another target), three selections:
// what BundleTest checks the format with, and what the fixture generator
// writes for the embedded-table test (EmbeddedBundleTest).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H
#define TILEC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H

#include "tilec/runtime/Bundle.h"

#include "tilec/contract/CompileMetadata.h"

namespace tilec::test {

inline std::string compileJson(const std::string &kernel, const std::string &target) {
  tilec::CompileMetadata metadata;
  metadata.name = metadata.kernelName = kernel;
  metadata.target = target;
  metadata.numWarps = 4;
  metadata.signature = {{"x", "ptr<f32>"}, {"n", "i32"}};
  if (kernel == "shift") {
    // Every field the compile json has, for the compiled-in form's test.
    metadata.kernelName = "shift_kernel";
    metadata.threadsPerWarp = 32;
    metadata.numStages = 3;
    metadata.sharedBytes = 49152;
    metadata.signature = {{"x", "ptr<f16>", tilec::ArgType::Ptr, 16, false},
                          {"n", "i32", tilec::ArgType::I32, 16, false},
                          {"stride", "i64", tilec::ArgType::I64, 1, true},
                          {"alpha", "bf16", tilec::ArgType::BF16, 1, false}};
    metadata.registers = 168;
    metadata.spillStores = 0;
    metadata.spillLoads = 4;
    metadata.stackFrameBytes = 8;
    metadata.config = {{"BLOCK", 256}, {"NEG", -9223372036854775807LL - 1}};
    metadata.types = {{"DTYPE", "f16"}};
    metadata.hashes = {{"ttir", std::string(64, '1')}, {"cubin", std::string(64, '2')}};
    metadata.compilerId = "tilec-0.1.0 \"quoted\" ??= build";
    metadata.compileMs = {{"ttir", 0.125}, {"cubin", 1.0 / 3.0}};
    metadata.cache = {{"ptx", {std::string(64, 'p'), "remote hit"}}};
  }
  return metadata.toJson();
}

inline std::string descriptionJson(const std::string &kernel) {
  tilec::KernelDescription description(kernel, "kernels/" + kernel + ".cpp", 3);
  description.param(tilec::MetaParameter("BLOCK").powerOfTwo());
  if (kernel == "shift")
    // Every part a description has, for the compiled-in form's test.
    description
        .param(tilec::MetaParameter("WIDTH").atLeast(2, "at least \"two\"\n")
                   .atMost(64, "caf\xc3\xa9 ??/")
                   .byDefault(8))
        .param(tilec::MetaParameter("GROUPS").derivedAs("cdiv(n, 1024)").byDefault(1))
        .typeParam(tilec::TypeParameter("DTYPE", {"f16", "bf16"}).byDefault("f16"))
        .arg(tilec::pointer("y", "DTYPE").divisibility(16))
        .arg(tilec::scalar("stride", "i32").byDefault("n"))
        .require("BLOCK >= WIDTH", "a block holds a row")
        .flops("2 * n")
        .testSizes({{"n", 4096}}, {{"n", 4097}});
  return description.arg(tilec::pointer("x", "f32"))
      .arg(tilec::scalar("n", "i32"))
      .key("LOG2_N", "ceil(log2(n))")
      .key("DTYPE")
      .candidate("BLOCK=128")
      .candidate("BLOCK=256")
      .grid({"cdiv(n, BLOCK)"})
      .toJson();
}

inline tilec::rt::KernelBundle::Contents sampleContents() {
  tilec::rt::KernelBundle::Contents contents;
  contents.createdAt = "2026-12-01T12:00:00Z";
  contents.packedBy = "tilec test";
  contents.kernels = {{"scale", descriptionJson("scale")},
                      {"shift", descriptionJson("shift")}};
  auto cubin = [](std::string kernel, std::string config, std::string target) {
    tilec::rt::BundleCubin entry;
    entry.kernel = kernel;
    entry.config = config;
    entry.specialization = "n%16";
    entry.target = target;
    entry.cubinKey = std::string(64, 'c');
    entry.metadataJson = compileJson(kernel, target);
    return entry;
  };
  contents.cubins = {cubin("scale", "BLOCK=128,num_warps=4,num_stages=1", "sm_90"),
                     cubin("shift", "BLOCK=256,num_warps=4,num_stages=1", "sm_90"),
                     cubin("scale", "BLOCK=128,num_warps=4,num_stages=1", "sm_80")};
  contents.cubinBytes = {std::string(1000, 'a'), std::string(333, 'b'),
                         std::string(77, 'c')};
  contents.selections = {
      {"NVIDIA H200", "sm_90", "scale", "LOG2_N=20|n%16", 0, 12.5},
      {"NVIDIA H100", "sm_90", "scale", "LOG2_N=20|n%16", 0, 13.0},
      {"NVIDIA H200", "sm_90", "shift", "LOG2_N=10|n%16", 1, 0}};
  return contents;
}

} // namespace tilec::test

#endif // TILEC_TEST_UNIT_BUNDLE_SAMPLEBUNDLE_H
