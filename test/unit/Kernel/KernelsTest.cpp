//===- KernelsTest.cpp - the kernels under kernels/ -----------------------===//

#include "CallPlanExpect.h"
#include "tilec/Dialect/Tile/IR/Tile.h"
#include "tilec/Kernel/KernelDefinition.h"
#include "tilec/Kernel/KernelRegistry.h"
#include "tilec/contract/CallPlan.h"
#include "tilec/sparse/SparseConv.h"

// stridedBuildCalls: a strided build's own list, private to tilec_sparse.
#include "MapBuild.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

using namespace tilec;
using namespace tilec::kernel;
namespace tile = tilec::tile;

namespace {

/// Specializes `kernel` for `configText` and checks that the result verifies.
mlir::OwningOpRef<mlir::ModuleOp>
specializeOrFail(mlir::MLIRContext &context, const KernelDefinition &kernel,
                 llvm::StringRef configText) {
  Result<Config> config = kernel.getDescription().parseConfig(configText.str());
  if (!config) {
    ADD_FAILURE() << config.message();
    return {};
  }
  auto module = kernel.specialize(context, *config);
  if (mlir::failed(module)) {
    ADD_FAILURE() << kernel.getName() << " failed to specialize for "
                  << configText.str();
    return {};
  }
  EXPECT_TRUE(mlir::succeeded(mlir::verify(**module)));
  return std::move(*module);
}

const KernelDefinition &kernelNamed(llvm::StringRef name) {
  const KernelDefinition *kernel = lookupKernel(name);
  EXPECT_TRUE(kernel) << name.str();
  return *kernel;
}

/// " N=3000,KS=3": a call's sizes, for a failure's trace.
std::string callDescription(const Call &call) {
  std::string text;
  for (const auto &[name, value] : call.sizes)
    text += (text.empty() ? " " : ",") + name + "=" + std::to_string(value);
  return text;
}

template <typename OpTy> int countOps(mlir::ModuleOp module) {
  int count = 0;
  module.walk([&](OpTy) { ++count; });
  return count;
}

TEST(KernelsTest, EveryKernelSpecializesForEveryCandidateConfig) {
  mlir::MLIRContext context;
  for (const KernelDefinition *kernel : listKernels()) {
    const KernelDescription &description = kernel->getDescription();
    EXPECT_FALSE(description.getConfigs().empty()) << kernel->getName();
    EXPECT_FALSE(description.getAutotuneKey().empty()) << kernel->getName();
    for (const Config &config : description.getConfigs()) {
      SCOPED_TRACE(kernel->getName() + " " + config.str());
      auto module = kernel->specialize(context, config);
      ASSERT_TRUE(mlir::succeeded(module));
      EXPECT_TRUE(mlir::succeeded(mlir::verify(**module)));
      auto funcs = llvm::to_vector((*module)->getOps<mlir::func::FuncOp>());
      ASSERT_EQ(funcs.size(), 1u);
      EXPECT_EQ(funcs[0].getName(), kernel->getName());
      EXPECT_TRUE(funcs[0]->hasAttr(tile::TileDialect::getKernelAttrName()));
    }
  }
  EXPECT_EQ(kernelNamed("matmul").getDescription().getConfigs().size(), 18u);
}

// The matmul names its operands' blocks whole (tile.load_tile: zeros
// outside the array), so that a target may copy them with TMA; no pointer
// loads remain.
TEST(KernelsTest, MatmulHasOneLoopOneDotAndTileLoads) {
  mlir::MLIRContext context;
  auto module = specializeOrFail(context, kernelNamed("matmul"),
                                 "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32");
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<mlir::scf::ForOp>(*module), 1);
  EXPECT_EQ(countOps<tile::DotOp>(*module), 1);
  EXPECT_EQ(countOps<tile::LoadOp>(*module), 0);
  std::vector<llvm::SmallVector<int64_t>> shapes;
  module->walk([&](tile::LoadTileOp load) {
    shapes.emplace_back(load.getType().getShape());
    EXPECT_TRUE(load->getParentOfType<mlir::scf::ForOp>());
  });
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], (llvm::SmallVector<int64_t>{64, 32}));
  EXPECT_EQ(shapes[1], (llvm::SmallVector<int64_t>{32, 64}));
  module->walk([&](tile::DotOp dot) {
    EXPECT_EQ(dot.getA().getType(),
              mlir::RankedTensorType::get({64, 32},
                                          mlir::Float16Type::get(&context)));
    EXPECT_EQ(dot.getInputPrecision(), tile::InputPrecision::IEEE);
  });
  module->walk([&](tile::StoreOp store) { EXPECT_TRUE(store.getMask()); });

  // Pointers carry the divisibility hints; sizes and strides do not (a call
  // specializes them).
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  auto hint = [&](unsigned index) {
    return func.getArgAttr(index, tile::TileDialect::getDivisibilityAttrName());
  };
  EXPECT_TRUE(hint(0));
  EXPECT_FALSE(hint(3));
  EXPECT_FALSE(hint(6));
}

TEST(KernelsTest, MatmulDtypeAndTF32) {
  mlir::MLIRContext context;
  auto module = specializeOrFail(
      context, kernelNamed("matmul"),
      "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f32,ALLOW_TF32=1");
  ASSERT_TRUE(module);
  module->walk([&](tile::DotOp dot) {
    EXPECT_TRUE(llvm::cast<mlir::RankedTensorType>(dot.getA().getType())
                    .getElementType()
                    .isF32());
    EXPECT_EQ(dot.getInputPrecision(), tile::InputPrecision::TF32);
  });
  // f32 output: no conversion after the loop.
  EXPECT_EQ(countOps<mlir::arith::TruncFOp>(*module), 0);
}

TEST(KernelsTest, GatherMatmulMasksMissingRows) {
  mlir::MLIRContext context;
  for (llvm::StringRef dtype : {"f16", "f32"}) {
    auto module = specializeOrFail(
        context, kernelNamed("gather_matmul"),
        ("BLOCK_M=64,BLOCK_N=32,BLOCK_K=16,DTYPE=" + dtype).str());
    ASSERT_TRUE(module);
    EXPECT_EQ(countOps<tile::DotOp>(*module), 1);
    // The index load (outside the loop) fills -1 past M.
    int indexLoads = 0;
    module->walk([&](tile::LoadOp load) {
      EXPECT_TRUE(load.getMask());
      if (!load->getParentOfType<mlir::scf::ForOp>()) {
        ++indexLoads;
        EXPECT_TRUE(tile::getElementTypeOrSelf(load.getType()).isInteger(32));
      }
    });
    EXPECT_EQ(indexLoads, 1);
  }
}

TEST(KernelsTest, SoftmaxReducesEachRow) {
  mlir::MLIRContext context;
  auto module =
      specializeOrFail(context, kernelNamed("softmax"), "BLOCK_N=256");
  ASSERT_TRUE(module);
  int reductions = 0;
  module->walk([&](tile::ReduceOp reduce) {
    ++reductions;
    EXPECT_TRUE(reduce.getType().isF32());
  });
  EXPECT_EQ(reductions, 2);
  EXPECT_EQ(countOps<mlir::scf::ForOp>(*module), 0);
}

TEST(KernelsTest, SpecializationIsDeterministic) {
  mlir::MLIRContext context;
  auto print = [&](const KernelDefinition &kernel, llvm::StringRef config) {
    auto module = specializeOrFail(context, kernel, config);
    std::string text;
    llvm::raw_string_ostream os(text);
    if (module)
      module->print(os);
    return text;
  };
  std::string first =
      print(kernelNamed("matmul"), "BLOCK_M=32,BLOCK_N=32,BLOCK_K=16");
  EXPECT_FALSE(first.empty());
  EXPECT_EQ(first,
            print(kernelNamed("matmul"), "BLOCK_M=32,BLOCK_N=32,BLOCK_K=16"));
  EXPECT_NE(first,
            print(kernelNamed("matmul"), "BLOCK_M=32,BLOCK_N=32,BLOCK_K=32"));
}

} // namespace

namespace {

TEST(SpecializationTest, DeriveDivisibilityAndUnitValues) {
  Specialization facts =
      Specialization::derive({{"M", 4096}, {"N", 1000}, {"stride", 1}});
  EXPECT_EQ(facts.divisibility, (std::map<std::string, int64_t>{{"M", 16}}));
  EXPECT_EQ(facts.equalToOne, (std::set<std::string>{"stride"}));
  EXPECT_EQ(facts.str(), "M%16,stride=1");
  EXPECT_TRUE(Specialization::derive({{"N", 1000}}).empty());
}

// An argument that specializes from 2 says what power of two, up to 16,
// its value has; the others keep Triton's rule.
TEST(SpecializationTest, SmallerDivisorsWhereTheArgumentAsks) {
  std::map<std::string, int64_t> values = {
      {"odd", 3333},  {"even", 2222}, {"four", 1004}, {"eight", 1000},
      {"many", 4096}, {"zero", 0},    {"one", 1},     {"plain", 1000}};
  std::map<std::string, int64_t> from2 = {
      {"odd", 2},  {"even", 2}, {"four", 2}, {"eight", 2},
      {"many", 2}, {"zero", 2}, {"one", 2}};
  Specialization facts = Specialization::derive(values, from2);
  EXPECT_EQ(facts.str(), "eight%8,even%2,four%4,many%16,zero%16,one=1");
  // From 4, an even value says nothing.
  EXPECT_EQ(Specialization::derive({{"even", 2222}, {"four", 1004}},
                                   {{"even", 4}, {"four", 4}})
                .str(),
            "four%4");
  // The facts read back from their text.
  auto parsed = Specialization::parse(facts.str());
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  EXPECT_EQ(parsed->divisibility, facts.divisibility);
}

TEST(SpecializationTest, FactsSpecializeTheKernel) {
  mlir::MLIRContext context;
  const KernelDefinition &softmax = kernelNamed("softmax");
  auto config = softmax.getDescription().parseConfig("BLOCK_N=256");
  ASSERT_TRUE(config.ok()) << config.message();
  Specialization facts =
      Specialization::derive({{"input_row_stride", 1}, {"n_cols", 256}});
  auto module = softmax.specialize(context, *config, facts);
  ASSERT_TRUE(mlir::succeeded(module));
  mlir::func::FuncOp func = *module->get().getOps<mlir::func::FuncOp>().begin();
  unsigned strideIndex = 0, colsIndex = 0;
  for (auto [index, arg] :
       llvm::enumerate(softmax.getDescription().getSignature())) {
    if (arg.name == "input_row_stride")
      strideIndex = index;
    if (arg.name == "n_cols")
      colsIndex = index;
  }
  // A unit stride is a constant: the argument stays, unused.
  EXPECT_TRUE(func.getArgument(strideIndex).use_empty());
  auto divisibility = func.getArgAttrOfType<mlir::IntegerAttr>(
      colsIndex, tile::TileDialect::getDivisibilityAttrName());
  ASSERT_TRUE(divisibility);
  EXPECT_EQ(divisibility.getInt(), 16);
}

TEST(SpecializationTest, UnknownArgumentIsAnError) {
  mlir::MLIRContext context;
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  const KernelDefinition &kernel = kernelNamed("vector_add");
  auto config = kernel.getDescription().parseConfig("BLOCK=1024");
  ASSERT_TRUE(config.ok());
  Specialization facts;
  facts.divisibility["nope"] = 16;
  EXPECT_TRUE(mlir::failed(kernel.specialize(context, *config, facts)));
  EXPECT_EQ(message, "a fact names 'nope', which is not an argument of "
                     "vector_add");
}

} // namespace

// The sparse maps size the radix sort's digit counts by the keys a program
// moves (BLOCK * CHUNKS): a winner stored for another count must not be
// found for the call, so both kernels key it, and a tuned config carries
// the call's values.
TEST(KernelsTest, RadixKernelsKeyTheKeysAProgramMoves) {
  for (llvm::StringRef name : {"radix_histogram", "radix_scatter"}) {
    SCOPED_TRACE(name.str());
    const KernelDescription &description = kernelNamed(name).getDescription();
    Call call;
    call.sizes = {{"N", 100000}, {"SHIFT", 4}};
    call.params = {{"BLOCK", 256}, {"CHUNKS", 4}};
    Result<std::string> key = description.evaluateAutotuneKey(call);
    ASSERT_TRUE(key.ok()) << key.message();
    EXPECT_NE(key->find("BLOCK=256"), std::string::npos) << *key;
    EXPECT_NE(key->find("CHUNKS=4"), std::string::npos) << *key;
    Call older = call;
    older.params["CHUNKS"] = 16;
    Result<std::string> olderKey = description.evaluateAutotuneKey(older);
    ASSERT_TRUE(olderKey.ok()) << olderKey.message();
    EXPECT_NE(*key, *olderKey);
    for (const Config &candidate : description.getConfigs()) {
      Result<Config> config = description.configForCall(candidate, call);
      ASSERT_TRUE(config.ok()) << config.message();
      EXPECT_EQ(config->params.at("BLOCK"), 256);
      EXPECT_EQ(config->params.at("CHUNKS"), 4);
    }
  }
}

// The sparse engine plans every launch from one evaluateCall (a stream of
// new voxel counts plans each launch anew): for every kernel, on its test
// sizes and on those sizes scaled to many other counts, the evaluation gives
// what the separate functions give, and its grid is evaluateGrid's for each
// candidate config (or the same error).
TEST(KernelsTest, OneEvaluationOfEveryKernelsCallsAgreesWithTheParts) {
  int compared = 0;
  for (const KernelDefinition *kernel : listKernels()) {
    const KernelDescription &description = kernel->getDescription();
    for (const auto *sizes :
         {&description.getDefaultSizes(), &description.getTailSizes()}) {
      for (int64_t scale : {1, 2, 3, 7, 16, 1000, 4099}) {
        Call call;
        for (const auto &[name, value] : *sizes)
          // The counts grow; the shapes (kernel size, channels, shifts)
          // stay, as in a stream of clouds.
          call.sizes[name] = name == "N" || name == "M" || name == "T"
                                 ? value * scale + scale / 3
                                 : value;
        SCOPED_TRACE(kernel->getName() + callDescription(call));
        auto evaluation = description.evaluateCall(call);
        auto integers = description.evaluateIntegerArguments(call);
        ASSERT_EQ(evaluation.ok(), integers.ok());
        if (!integers.ok())
          continue;
        EXPECT_EQ(evaluation->integerArguments, *integers);
        auto key = description.evaluateAutotuneKey(call);
        ASSERT_TRUE(key.ok()) << key.message();
        EXPECT_EQ(evaluation->autotuneKey, *key);
        EXPECT_EQ(evaluation->specialization.str(),
                  description.specializationOf(call).str());
        for (const Config &candidate : description.getConfigs()) {
          auto config = description.configForCall(candidate, call);
          if (!config)
            continue;
          auto separate = description.evaluateGrid(*config, call);
          auto together = description.evaluateGrid(*config, *evaluation);
          ASSERT_EQ(separate.ok(), together.ok())
              << config->str() << ": "
              << (separate.ok() ? together.message() : separate.message());
          if (!separate.ok()) {
            EXPECT_EQ(separate.message(), together.message());
            continue;
          }
          EXPECT_EQ(together->x, separate->x) << config->str();
          EXPECT_EQ(together->y, separate->y) << config->str();
          EXPECT_EQ(together->z, separate->z) << config->str();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 500);
}

// A stream of new voxel counts plans every launch from its shape's plan: for
// every kernel, on its test sizes and on those sizes scaled to many other
// counts (with and without the integer arguments that have defaults), the
// plan gives exactly what evaluateCall and evaluateGrid give, and it gives
// something exactly where they succeed (so it is never silently skipped).
TEST(KernelsTest, EveryKernelsCallPlanAgreesWithItsDescription) {
  int compared = 0, grids = 0;
  for (const KernelDefinition *kernel : listKernels()) {
    const KernelDescription &description = kernel->getDescription();
    for (const auto *sizes :
         {&description.getDefaultSizes(), &description.getTailSizes()}) {
      for (bool withDefaults : {false, true}) {
        Call shape;
        shape.sizes = *sizes;
        // The arguments the call could leave out, given as their values.
        if (withDefaults) {
          auto integers = description.evaluateIntegerArguments(shape);
          ASSERT_TRUE(integers.ok()) << integers.message();
          for (const auto &[name, value] : *integers)
            shape.sizes.insert({name, value});
        }
        CallPlan plan(description, shape);
        std::map<std::string, CallPlan::Grid> planGrids;
        for (int64_t scale : {1, 2, 3, 7, 16, 1000, 4099}) {
          Call call = shape;
          for (auto &[name, value] : call.sizes)
            if (name == "N" || name == "M" || name == "T" ||
                name == "n_elements")
              value = value * scale + scale / 3;
          SCOPED_TRACE(kernel->getName() + callDescription(call));
          auto planned =
              tilec::test::expectPlannedAsDescribed(description, plan, call);
          if (!planned)
            continue;
          ++compared;
          for (const Config &candidate : description.getConfigs()) {
            auto config = description.configForCall(candidate, call);
            if (!config)
              continue;
            auto grid = planGrids.try_emplace(config->str(), plan.grid(*config))
                            .first->second.evaluate(*planned);
            auto separate = description.evaluateGrid(*config, call);
            ASSERT_EQ(grid.has_value(), separate.ok())
                << config->str() << ": "
                << (separate.ok() ? "" : separate.message());
            if (!grid)
              continue;
            EXPECT_EQ(grid->x, separate->x) << config->str();
            EXPECT_EQ(grid->y, separate->y) << config->str();
            EXPECT_EQ(grid->z, separate->z) << config->str();
            ++grids;
          }
        }
        // Another shape does not fit.
        Call other = shape;
        other.sizes["NOT_A_SIZE"] = 1;
        EXPECT_FALSE(plan.fits(other));
        EXPECT_FALSE(plan.evaluate(other).has_value());
      }
    }
  }
  EXPECT_GT(compared, 250);
  EXPECT_GT(grids, 1000);
}

// The calls the sparse library makes (a map build's, for several windows
// and row orders; a convolution's, for several dtypes, biases and row
// strides) over a stream of new voxel counts: their plans, kept per shape
// as the engine keeps them, give what their descriptions give.
TEST(KernelsTest, TheSparseLibraryCallsArePlannedAsDescribed) {
  std::vector<std::vector<std::pair<std::string, Call>>> streams;
  for (int64_t n : {1, 15192, 15193, 64160, 500000}) {
    for (const sparse::Window &window :
         {sparse::Window::cube(3), sparse::Window::cube(5, 2),
          sparse::Window{{1, 3, 3}, {1, 2, 1}}})
      for (bool lean : {false, true})
        streams.push_back(sparse::mapBuildCalls(n, window, lean));
    for (sparse::DType dtype :
         {sparse::DType::F16, sparse::DType::BF16, sparse::DType::F32}) {
      sparse::ConvArguments arguments;
      arguments.ci = 48;
      arguments.co = 17;
      arguments.dtype = dtype;
      arguments.allowTf32 = dtype == sparse::DType::F32;
      arguments.bias = tilec::rt::DevicePtr{n % 2 ? 0x1000u : 0u};
      arguments.xRowStride = n % 2 ? 64 : 0;
      arguments.window = sparse::Window{{3, 1, 3}, {1, 1, 1}};
      streams.push_back(sparse::convKernelCalls(arguments, n));
    }
  }
  std::map<std::string, CallPlan> plans;
  size_t compared = 0, total = 0;
  for (const auto &calls : streams)
    total += calls.size();
  for (const auto &calls : streams)
    for (const auto &[kernel, call] : calls) {
      SCOPED_TRACE(kernel + callDescription(call));
      const KernelDefinition *definition = lookupKernel(kernel);
      ASSERT_NE(definition, nullptr);
      const KernelDescription &description = definition->getDescription();
      auto plan =
          plans.try_emplace(kernel + CallPlan::shapeOf(call), description, call)
              .first;
      if (tilec::test::expectPlannedAsDescribed(description, plan->second,
                                                call))
        ++compared;
    }
  // Every call is planned (none is left to the description).
  EXPECT_EQ(compared, total);
  EXPECT_GT(total, 750u);
}

namespace {

/// The configs of `kernel` the tuner keeps for `call` (pruneReason finds
/// nothing), as "BLOCK_N/BLOCK_K" pairs.
std::vector<std::string> keptTiles(const KernelDescription &kernel,
                                   const Call &call) {
  std::vector<std::string> kept;
  for (const Config &candidate : kernel.getConfigs()) {
    Result<Config> config = kernel.configForCall(candidate, call);
    EXPECT_TRUE(config.ok()) << config.message();
    if (!config)
      continue;
    auto reason = kernel.pruneReason(*config, call);
    EXPECT_TRUE(reason.ok()) << reason.message();
    if (reason && !*reason)
      kept.push_back(std::to_string(config->params.at("BLOCK_N")) + "/" +
                     std::to_string(config->params.at("BLOCK_K")));
  }
  return kept;
}

} // namespace

// A column tile or K step of an eighth of the channels or less never won a
// tuning on the H200 (kernels/sparse_conv.cpp): the tuner does not compile
// one, and keeps every other candidate.
TEST(KernelsTest, SparseConvPrunesTilesOfAnEighthOfTheChannels) {
  const KernelDescription &conv =
      lookupKernel("sparse_conv_fwd")->getDescription();
  auto call = [](int64_t channels) {
    Call c;
    c.sizes = {{"N", 64160}, {"CI", channels}, {"CO", channels}, {"V", 27}};
    return c;
  };
  std::vector<std::string> wide = keptTiles(conv, call(256));
  for (const std::string &tile : wide) {
    int64_t n = std::stoll(tile.substr(0, tile.find('/')));
    int64_t k = std::stoll(tile.substr(tile.find('/') + 1));
    EXPECT_GT(8 * n, 256) << tile;
    EXPECT_GT(8 * k, 256) << tile;
  }
  // At 256 channels (N large: no halves) 7 of the 11 the other rules keep:
  // 32/32, 64/32, 128/32 and 32/16 go.
  EXPECT_EQ(wide,
            (std::vector<std::string>{"64/64", "128/64", "128/64", "256/64",
                                      "128/128", "256/64", "128/64"}));
  // At 64, no tile is an eighth of the channels: the other rules' 9 stay.
  EXPECT_EQ(
      keptTiles(conv, call(64)),
      (std::vector<std::string>{"32/32", "64/32", "64/64", "128/32", "128/64",
                                "128/64", "128/128", "128/64", "32/16"}));
}

// A convolution's first use without tuning (TILEC_FIRST_USE=predict) runs
// one config a key: column tiles covering the output channels up to 128,
// K steps as deep as the input channels allow, halves where the tiles fill
// under half the SMs. The first prediction of each call below is the
// winner of that key in the SpUNet's first-call tunings (H100, f16).
TEST(KernelsTest, SparseConvPredictsOneConfigAKey) {
  const KernelDescription &conv =
      lookupKernel("sparse_conv_fwd")->getDescription();
  auto predicted = [&](int64_t n, int64_t ci, int64_t co, int64_t v,
                       int64_t rows) {
    Call c;
    c.sizes = {{"N", n}, {"CI", ci}, {"CO", co}, {"V", v}};
    c.params = {{"BLOCK_M", rows}};
    Result<std::vector<Config>> configs = conv.predictedConfigs(c);
    EXPECT_TRUE(configs.ok()) << configs.message();
    if (!configs.ok() || configs->empty())
      return std::string();
    const Config &first = configs->front();
    return std::to_string(first.params.at("BLOCK_N")) + "/" +
           std::to_string(first.params.at("BLOCK_K")) + "/" +
           std::to_string(first.numWarps) + "/" +
           std::to_string(first.numStages) + "/" +
           std::to_string(first.params.at("SPLIT_K"));
  };
  // 2^15 voxels, 32 channels: 32-wide tiles.
  EXPECT_EQ(predicted(20000, 32, 32, 27, 64), "32/32/4/3/1");
  // 2^16 voxels, 96 channels, 128-row blocks: 512 tiles, 32-deep K steps.
  EXPECT_EQ(predicted(60000, 96, 96, 27, 128), "128/32/4/3/1");
  // 2^11 voxels, 256 channels: 64 tiles, under half the SMs: halves.
  EXPECT_EQ(predicted(2000, 256, 256, 27, 64), "128/128/8/3/2");
  // 2^13 voxels, 64 channels: 128 tiles, no halves, 64-deep K steps.
  EXPECT_EQ(predicted(8000, 64, 64, 27, 64), "64/64/4/3/1");
  // 4 input channels: a 16-deep K step (the 32-deep one is pruned).
  EXPECT_EQ(predicted(60000, 4, 32, 125, 64), "32/16/4/4/1");
  // Every candidate the tuning would try follows, each once.
  Call c;
  c.sizes = {{"N", 60000}, {"CI", 96}, {"CO", 96}, {"V", 27}};
  c.params = {{"BLOCK_M", 128}};
  std::vector<std::string> kept = keptTiles(conv, c);
  EXPECT_EQ(conv.predictedConfigs(c)->size(), kept.size());
  EXPECT_EQ(sparse::predictedRowBlock(60000), 128);
  EXPECT_EQ(sparse::predictedRowBlock(30000), 64);
  EXPECT_EQ(sparse::predictedRowBlock(3000), 64);
}

namespace {

// Each call's kernel build (its single config and specialization), as the
// provider keys a loaded kernel: "kernel config [specialization]".
std::set<std::string>
singleConfigBuilds(const std::vector<std::pair<std::string, Call>> &calls) {
  std::set<std::string> kernels;
  for (const auto &[name, call] : calls) {
    const KernelDescription &description = lookupKernel(name)->getDescription();
    Result<std::vector<KernelDescription::CallCandidate>> candidates =
        description.candidatesForCall(description.getConfigs(), call);
    EXPECT_TRUE(candidates.ok()) << name << ": " << candidates.message();
    if (!candidates.ok())
      continue;
    EXPECT_EQ(candidates->size(), 1u) << name << " has a single config";
    for (const auto &candidate : *candidates)
      kernels.insert(name + " " + candidate.config.str() + " [" +
                     description.specializationOf(call).str() + "]");
  }
  return kernels;
}

} // namespace

// What a network's plan precompiles for its maps (sparse::compileLayersAhead)
// is planned at one voxel count: the kernels a map build of any smaller count
// of the same window loads must be among them (a count keys the map kernels
// but does not specialize them, and a build's list of calls only grows with
// the count).
TEST(KernelsTest, MapBuildCallsOfACountServeEverySmallerCount) {
  for (int extent : {1, 3, 5})
    for (bool lean : {false, true}) {
      sparse::Window window = sparse::Window::cube(extent);
      std::set<std::string> planned =
          singleConfigBuilds(sparse::mapBuildCalls(65000, window, lean));
      for (int64_t n : {1, 16, 17, 600, 4096, 5000, 40000, 65000}) {
        for (const std::string &kernel :
             singleConfigBuilds(sparse::mapBuildCalls(n, window, lean)))
          EXPECT_TRUE(planned.count(kernel))
              << kernel << " at " << n << " voxels, window " << extent
              << (lean ? ", lean" : "");
      }
    }
}

// A submanifold layer planned at a large count: the radix passes of smaller
// counts take fewer keys a program (radixPerProgram), and the plan must
// have compiled them too.
TEST(KernelsTest, ALayerPlannedAtACountServesEverySmallerCount) {
  for (bool lean : {false, true}) {
    sparse::LayerPlan plan;
    plan.layer.voxels = 500000;
    plan.layer.inChannels = plan.layer.outChannels = lean ? 256 : 32;
    plan.layer.kernelSize = {3, 3, 3};
    std::set<std::string> planned =
        singleConfigBuilds(sparse::layerSingleConfigCalls({plan}));
    sparse::Window window = sparse::Window::cube(3);
    for (int64_t n : {1000, 65536, 65537, 131073, 262145, 300000, 500000})
      for (const std::string &kernel :
           singleConfigBuilds(sparse::mapBuildCalls(n, window, lean)))
        EXPECT_TRUE(planned.count(kernel))
            << kernel << " at " << n << " voxels" << (lean ? ", lean" : "");
  }
}

// A strided layer's plan with its stride and padding plans its build on a
// grid of its own: the kernels a build of the same geometry loads on any
// grid and batch count, at the planned count or below, must be among them.
TEST(KernelsTest, AStridedBuildPlannedOnAnyGridServesEveryGrid) {
  struct Case {
    std::array<int, 3> kernel, stride, padding;
  };
  for (const Case &c : {Case{{2, 2, 2}, {2, 2, 2}, {0, 0, 0}},
                        Case{{3, 3, 3}, {2, 2, 2}, {1, 1, 1}},
                        Case{{3, 1, 1}, {2, 1, 1}, {0, 0, 0}}}) {
    sparse::LayerPlan plan;
    plan.layer.voxels = 65000;
    plan.layer.inChannels = plan.layer.outChannels = 32;
    plan.layer.kernelSize = c.kernel;
    plan.strided = true;
    plan.stride = c.stride;
    plan.padding = c.padding;
    std::set<std::string> planned =
        singleConfigBuilds(sparse::layerSingleConfigCalls({plan}));
    EXPECT_TRUE(std::any_of(planned.begin(), planned.end(),
                            [](const std::string &kernel) {
                              return kernel.rfind("strided_candidates", 0) == 0;
                            }));
    sparse::ConvGeometry g;
    g.kernel = c.kernel;
    g.stride = c.stride;
    g.padding = c.padding;
    for (auto [grid, batches] :
         {std::pair{std::array<int64_t, 3>{128, 128, 128}, int64_t(1)},
          std::pair{std::array<int64_t, 3>{201, 97, 33}, int64_t(2)},
          std::pair{std::array<int64_t, 3>{2048, 2048, 41}, int64_t(1)}})
      for (int64_t n : {1000, 65000}) {
        Result<std::array<int64_t, 3>> out = g.outputShape(grid);
        ASSERT_TRUE(out.ok()) << out.message();
        for (const std::string &kernel : singleConfigBuilds(
                 sparse::stridedBuildCalls(n, g, grid, *out, batches)))
          EXPECT_TRUE(planned.count(kernel))
              << kernel << " at " << n << " voxels, grid " << grid[0] << "x"
              << grid[1] << "x" << grid[2] << ", kernel " << c.kernel[0]
              << c.kernel[1] << c.kernel[2];
      }
  }
}
