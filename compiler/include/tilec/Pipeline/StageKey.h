//===- StageKey.h - The cache key of each stage -----------------*- C++ -*-===//
//
// A stage's key hashes the stage's name, the compiler id, the hash of the
// stage's input (the previous stage's artifact; for ttir, the input module as
// printed) and, by name and value, every field of the options the stage runs
// with that the field lists (CompileOptions::fields(), PTXOptions::fields(),
// CubinOptions::fields()) mark as read by the stage. Nothing is listed here:
// a new option enters the keys of the stages its list entry names
// (docs/cache.md#keys).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_PIPELINE_STAGEKEY_H
#define TILEC_PIPELINE_STAGEKEY_H

#include "tilec/Pipeline/Pipeline.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tilec {

/// The options each stage runs with, as compileKernel derives them from
/// CompileOptions.
struct StageOptions {
  /// The ttgir stage's. Its `ptx` and `cubin` are the caller's, unused: the
  /// later stages run with the two below.
  CompileOptions compile;
  /// The llir and ptx stages': the caller's, with the target as chip.
  PTXOptions ptx;
  /// The cubin stage's: the caller's, with the target as chip, reporting on
  /// the compiled kernel.
  CubinOptions cubin;
};

StageOptions getStageOptions(const CompileOptions &options,
                             llvm::StringRef kernelName);

/// "ttir", "ttgir", "llir", "ptx" or "cubin".
llvm::StringRef getStageName(Stage stage);

/// The key of `stage`'s artifact made from an input hashing to `inputHash`,
/// hex; empty when the stage cannot be keyed (a derived field came out empty,
/// e.g. no ptxas to identify).
std::string getStageKey(Stage stage, llvm::StringRef compilerId,
                        llvm::StringRef inputHash, const StageOptions &options);

} // namespace tilec

#endif // TILEC_PIPELINE_STAGEKEY_H
