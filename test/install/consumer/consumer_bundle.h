//===- consumer_bundle.h - The consumer's kernel bundle ---------*- C++ -*-===//
//
// What write_bundle writes and bundle_consumer expects: one kernel with its
// description, a cubin of it (bytes that only the format checks, no GPU
// code) and the winner of one autotune key. Written with the installed
// tuning library alone, so the consumer needs neither a GPU nor `tilec pack`.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONSUMER_CONSUMER_BUNDLE_H
#define TILEC_CONSUMER_CONSUMER_BUNDLE_H

#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/runtime/Bundle.h"

namespace consumer {

inline const char *const kKernel = "scale";
inline const char *const kConfig = "BLOCK=256,num_warps=4,num_stages=1";
inline const char *const kDevice = "NVIDIA H200";
inline const char *const kKey = "LOG2_N=20|n%16";

inline tilec::KernelDescription description() {
  tilec::KernelDescription description(kKernel, "kernels/scale.cpp", 1);
  description.param(tilec::MetaParameter("BLOCK").powerOfTwo())
      .arg(tilec::pointer("x", "f32"))
      .arg(tilec::scalar("n", "i32"))
      .key("LOG2_N", "ceil(log2(n))")
      .candidate("BLOCK=256")
      .grid({"cdiv(n, BLOCK)"});
  return description;
}

inline tilec::rt::KernelBundle::Contents contents() {
  tilec::rt::KernelBundle::Contents contents;
  contents.createdAt = "2026-01-01T00:00:00Z";
  contents.packedBy = "tilec consumer";
  contents.kernels = {{kKernel, description().toJson()}};
  tilec::CompileMetadata metadata;
  metadata.name = metadata.kernelName = kKernel;
  metadata.target = "sm_90";
  metadata.numWarps = 4;
  metadata.signature = {{"x", "ptr<f32>"}, {"n", "i32"}};
  tilec::rt::BundleCubin cubin;
  cubin.kernel = kKernel;
  cubin.config = kConfig;
  cubin.specialization = "n%16";
  cubin.target = "sm_90";
  cubin.cubinKey = std::string(64, '0');
  cubin.metadataJson = metadata.toJson();
  contents.cubins = {cubin};
  contents.cubinBytes = {std::string(4096, '\x7f')};
  contents.selections = {{kDevice, "sm_90", kKernel, kKey, 0, 12.5}};
  return contents;
}

} // namespace consumer

#endif // TILEC_CONSUMER_CONSUMER_BUNDLE_H
