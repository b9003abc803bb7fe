//===- TtirMutatorTest.cpp - The fuzzer's structural mutations ------------===//
//
// TtirFuzzer's mutator is only worth its place if its mutants parse (so
// that they reach the verifiers and passes a byte flip never gets to), if
// they differ from their seed, and if some still verify (so that the
// passes behind the verifier see them) while others do not.
//
//===----------------------------------------------------------------------===//

#include "TtirMutator.h"

#include "tilec/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TtirMutatorTest : public ::testing::Test {
protected:
  TtirMutatorTest() {
    tilec::registerPipelineDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
  }
  /// The module `text` parses to, whether it verifies; nothing where it
  /// does not parse.
  std::optional<bool> parsesAndVerifies(const std::string &text) {
    std::string firstError;
    mlir::ScopedDiagnosticHandler quiet(context.get(),
                                        [&](mlir::Diagnostic &diagnostic) {
                                          if (firstError.empty())
                                            firstError = diagnostic.str();
                                          return mlir::success();
                                        });
    // Parsed, then verified apart: a mutant that fails only the verifier
    // parses.
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(
            text,
            mlir::ParserConfig(context.get(), /*verifyAfterParse=*/false));
    if (!module) {
      lastParseError = firstError;
      return std::nullopt;
    }
    return mlir::succeeded(mlir::verify(*module));
  }

  std::string lastParseError;
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
};

TEST_F(TtirMutatorTest, MutantsOfEverySeedParseAndMostStillVerify) {
  // In name order, so that the printed table reads the same everywhere.
  std::vector<std::filesystem::path> seeds;
  for (const auto &entry :
       std::filesystem::directory_iterator(TILEC_TTIR_CORPUS))
    if (entry.path().extension() == ".ttir")
      seeds.push_back(entry.path());
  std::sort(seeds.begin(), seeds.end());
  EXPECT_GE(seeds.size(), 8u);
  for (const std::filesystem::path &path : seeds) {
    std::string seed = readFile(path);
    ASSERT_EQ(parsesAndVerifies(seed), std::optional<bool>(true)) << path;
    int mutants = 0, parsed = 0, verified = 0, changed = 0;
    std::string unparsed;
    for (uint32_t choice = 0; choice < 100; ++choice) {
      std::optional<std::string> mutant =
          tilec::fuzz::mutateTtir(*context, seed, choice);
      if (!mutant)
        continue;
      ++mutants;
      changed += *mutant != seed;
      std::optional<bool> verifies = parsesAndVerifies(*mutant);
      if (!verifies && unparsed.empty())
        unparsed = "mutant " + std::to_string(choice) + ": " + lastParseError;
      parsed += verifies.has_value();
      verified += verifies.value_or(false);
    }
    std::printf("%-22s 100 choices: %3d mutants, %3d parse, %3d verify\n",
                path.filename().c_str(), mutants, parsed, verified);
    SCOPED_TRACE(path.filename().string());
    // Most choices find a place to mutate; nearly every mutant parses back
    // (the generic form where it no longer verifies; an enum attribute set
    // out of its range is a parse error) and each differs from its seed.
    EXPECT_GE(mutants, 60);
    EXPECT_GE(parsed, mutants * 9 / 10)
        << "first that does not parse: " << unparsed;
    EXPECT_EQ(changed, mutants);
    // Both outcomes of the verifier are reached: the passes behind it see
    // a good share of the mutants, the verifier the rest.
    EXPECT_GE(verified, mutants / 4);
    EXPECT_LT(verified, mutants);
  }
}

TEST_F(TtirMutatorTest, TextThatDoesNotParseIsLeftToByteMutations) {
  EXPECT_FALSE(tilec::fuzz::mutateTtir(*context, "module {", 1).has_value());
  EXPECT_FALSE(tilec::fuzz::mutateTtir(*context, "", 2).has_value());
}

TEST_F(TtirMutatorTest, TheSameSeedGivesTheSameMutant) {
  std::string seed =
      readFile(std::filesystem::path(TILEC_TTIR_CORPUS) / "vector_add.ttir");
  for (uint32_t choice : {3u, 17u, 1234u})
    EXPECT_EQ(tilec::fuzz::mutateTtir(*context, seed, choice),
              tilec::fuzz::mutateTtir(*context, seed, choice));
}

} // namespace
