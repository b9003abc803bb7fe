//===- KernelDescriptionTest.cpp - Configs, calls and json of a kernel ----===//
//
// Descriptions written out here like the ones in kernels/ (the JIT test and
// the kernel tests check the real ones).
//
//===----------------------------------------------------------------------===//

#include "tilec/contract/KernelDescription.h"
#include "CallPlanExpect.h"
#include "tilec/contract/CallPlan.h"

#include <gtest/gtest.h>

using namespace tilec;

namespace {

KernelDescription matmulLike() {
  return KernelDescription("matmul", "kernels/matmul.cpp", 80)
      .param(MetaParameter("BLOCK_M").powerOfTwo().atLeast(16, "dot operands"))
      .param(MetaParameter("BLOCK_N").powerOfTwo().atLeast(16))
      .param(MetaParameter("BLOCK_K").powerOfTwo().atLeast(16))
      .param(MetaParameter("GROUP_M").atLeast(1).byDefault(8))
      .param(MetaParameter("ALLOW_TF32").atLeast(0).atMost(1).byDefault(0))
      .typeParam(TypeParameter("DTYPE", {"f16", "bf16", "f32"}).byDefault("f16"))
      .arg(pointer("a_ptr", "DTYPE").divisibility(16))
      .arg(pointer("b_ptr", "DTYPE").divisibility(16))
      .arg(pointer("c_ptr", "DTYPE").divisibility(16))
      .arg(scalar("M", "i32"))
      .arg(scalar("N", "i32"))
      .arg(scalar("K", "i32"))
      .arg(scalar("stride_am", "i32").byDefault("K"))
      .arg(scalar("stride_ak", "i32").byDefault("1"))
      .arg(scalar("stride_bk", "i32").byDefault("N"))
      .arg(scalar("stride_bn", "i32").byDefault("1"))
      .candidate("BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,num_warps=4,num_stages=4")
      .candidate("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,num_warps=2,num_stages=5")
      .key("M")
      .key("N")
      .key("K")
      .key("DTYPE")
      .key("ALLOW_TF32")
      .grid({"cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)"})
      .flops("2 * M * N * K")
      .testSizes({{"M", 512}, {"N", 512}, {"K", 512}},
                 {{"M", 203}, {"N", 176}, {"K", 208}});
}

KernelDescription softmaxLike() {
  return KernelDescription("softmax")
      .param(MetaParameter("BLOCK_N")
                 .powerOfTwo()
                 .byDefault(1024)
                 .derivedAs("next_power_of_2(n_cols)"))
      .arg(pointer("out", "f32"))
      .arg(scalar("row_stride", "i32").byDefault("n_cols"))
      .arg(scalar("n_cols", "i32"))
      .candidate("num_warps=4")
      .key("BLOCK_N", "next_power_of_2(n_cols)")
      .grid({"n_rows"})
      .require("BLOCK_N >= n_cols", "one program holds a row");
}

// matmulLike with what a launch evaluates beyond it: an argument whose
// default names a meta-parameter, a derived key entry, a requirement.
KernelDescription matmulWithTiles() {
  return matmulLike()
      .arg(scalar("tiles_m", "i32").byDefault("cdiv(M, BLOCK_M)"))
      .key("LOG2_M", "ceil(log2(M))")
      .require("tiles_m >= 1", "a tile at least");
}

Call matmulCall(int64_t m, int64_t n, int64_t k) {
  Call call;
  call.sizes = {{"M", m}, {"N", n}, {"K", k}};
  return call;
}

std::string errorOf(const Result<Config> &config) {
  return config.ok() ? "" : config.message();
}

TEST(KernelDescription, ResolvesConfigs) {
  KernelDescription matmul = matmulLike();
  auto config =
      matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,num_warps=4");
  ASSERT_TRUE(config.ok()) << config.message();
  // Defaults are filled in, so equal kernels have equal configs.
  EXPECT_EQ(config->str(), "ALLOW_TF32=0,BLOCK_K=32,BLOCK_M=64,BLOCK_N=64,"
                           "DTYPE=f16,GROUP_M=8,num_warps=4,num_stages=1");
  EXPECT_EQ(matmul.getConfigs().size(), 2u);
  EXPECT_EQ(matmul.getConfigs()[0].params.at("GROUP_M"), 8);

  auto check = [&](const std::string &text, const std::string &expected) {
    std::string message = errorOf(matmul.parseConfig(text));
    EXPECT_NE(message.find(expected), std::string::npos)
        << text << " -> " << message;
  };
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,BLOCK_Q=4",
        "kernel 'matmul': unknown meta-parameter 'BLOCK_Q'");
  check("BLOCK_M=64,BLOCK_N=64", "missing meta-parameter 'BLOCK_K'");
  check("BLOCK_M=48,BLOCK_N=64,BLOCK_K=32",
        "'BLOCK_M' must be a power of two, got 48");
  check("BLOCK_M=8,BLOCK_N=64,BLOCK_K=32",
        "'BLOCK_M' must be at least 16 (dot operands), got 8");
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=f64",
        "'DTYPE' must be one of f16, bf16, f32, got 'f64'");
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,DTYPE=16",
        "'DTYPE' is a type parameter");
  check("BLOCK_M=f16,BLOCK_N=64,BLOCK_K=32", "'BLOCK_M' takes an integer");
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,ALLOW_TF32=2", "at most 1");
  // A value the kernel's i32 constants cannot hold (it would wrap into a
  // negative number and compile): refused, whatever the declaration allows.
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,GROUP_M=2147483648",
        "'GROUP_M' must fit in a signed 32-bit integer (the kernels compute "
        "in i32), got 2147483648");
  check("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,GROUP_M=4294967297",
        "got 4294967297");
  EXPECT_TRUE(
      matmul.parseConfig("BLOCK_M=64,BLOCK_N=64,BLOCK_K=32,GROUP_M=2147483647")
          .ok());
}

TEST(KernelDescription, SignatureTakesTheConfigTypes) {
  KernelDescription matmul = matmulLike();
  Config config;
  config.types["DTYPE"] = "f32";
  config.params = {{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}};
  auto signature = matmul.getSignature(config);
  ASSERT_TRUE(signature.ok()) << signature.message();
  EXPECT_EQ((*signature)[0].type, "ptr<f32>");
  EXPECT_EQ((*signature)[0].divisibilityHint, 16);
  EXPECT_EQ((*signature)[3].type, "i32");
  EXPECT_EQ(matmul.getSignature()[0].type, "ptr<DTYPE>");
  EXPECT_EQ(matmul.getIntegerArguments(),
            (std::map<std::string, int64_t>{{"K", 1},
                                            {"M", 1},
                                            {"N", 1},
                                            {"stride_ak", 1},
                                            {"stride_am", 1},
                                            {"stride_bk", 1},
                                            {"stride_bn", 1}}));
}

// Which call sizes feed which integer arguments: the call's own value, else
// the argument's default expression.
TEST(KernelDescription, IntegerArgumentsOfACall) {
  KernelDescription matmul = matmulLike();
  Call call = matmulCall(1000, 300, 40);
  auto values = matmul.evaluateIntegerArguments(call);
  ASSERT_TRUE(values.ok()) << values.message();
  using Values = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(*values, (Values{{"M", 1000},
                             {"N", 300},
                             {"K", 40},
                             {"stride_am", 40},
                             {"stride_ak", 1},
                             {"stride_bk", 300},
                             {"stride_bn", 1}}));
  // A transposed B: the call gives its strides.
  call.sizes["stride_bk"] = 1;
  call.sizes["stride_bn"] = 40;
  values = matmul.evaluateIntegerArguments(call);
  ASSERT_TRUE(values.ok());
  EXPECT_EQ((*values)[5], (std::pair<std::string, int64_t>("stride_bk", 1)));
  EXPECT_EQ((*values)[6], (std::pair<std::string, int64_t>("stride_bn", 40)));

  Call missing;
  missing.sizes = {{"M", 4}, {"N", 4}};
  auto error = matmul.evaluateIntegerArguments(missing);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.message().find("gives no value for 'K'"), std::string::npos)
      << error.message();
}

// Only integer arguments specialize, with the values the launch passes
// (defaults included); the text is canonical.
TEST(KernelDescription, SpecializationOfACall) {
  KernelDescription matmul = matmulLike();
  Call call = matmulCall(4096, 1, 100);
  call.sizes["R"] = 32; // not an argument: no fact
  Specialization facts = matmul.specializationOf(call);
  // stride_am = K = 100 (no fact), stride_bk = N = 1, unit inner strides.
  EXPECT_EQ(facts.str(), "M%16,N=1,stride_ak=1,stride_bk=1,stride_bn=1");
  EXPECT_EQ(matmul.specializationOf(matmulCall(64, 64, 64)).str(),
            "K%16,M%16,N%16,stride_am%16,stride_bk%16,stride_ak=1,"
            "stride_bn=1");
  EXPECT_EQ(Specialization::derive({{"a", 32}, {"b", 1}, {"c", 7}}).str(),
            "a%16,b=1");
  // What the call does not determine gets no fact: N is missing, so neither
  // N nor stride_bk = N is known.
  Call partial;
  partial.sizes = {{"M", 64}, {"K", 64}};
  EXPECT_EQ(matmul.specializationOf(partial).str(),
            "K%16,M%16,stride_am%16,stride_ak=1,stride_bn=1");
  // What the declaration promises is not a fact of the call, and "= 1" does
  // not apply where the declaration promises divisibility.
  EXPECT_EQ(Specialization::derive({{"s", 1}, {"t", 32}})
                .restrictedTo({{"s", 16}, {"t", 16}})
                .str(),
            "");
}

TEST(KernelDescription, AutotuneKeys) {
  KernelDescription matmul = matmulLike();
  Call call = matmulCall(4096, 4096, 4096);
  EXPECT_EQ(*matmul.evaluateAutotuneKey(call),
            "M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0");
  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  EXPECT_EQ(*matmul.evaluateAutotuneKey(call),
            "M=4096,N=4096,K=4096,DTYPE=f32,ALLOW_TF32=1");

  Call rows;
  rows.sizes = {{"n_rows", 37}, {"n_cols", 1000}};
  EXPECT_EQ(*softmaxLike().evaluateAutotuneKey(rows), "BLOCK_N=1024");

  Call partial;
  partial.sizes = {{"M", 4096}, {"N", 4096}};
  auto key = matmul.evaluateAutotuneKey(partial);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.message().find("autotune key 'K' of matmul has no value"),
            std::string::npos)
      << key.message();
}

TEST(KernelDescription, ConfigForACall) {
  KernelDescription matmul = matmulLike();
  auto candidate = Config::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,num_warps=2");
  ASSERT_TRUE(candidate.ok());
  Call call;
  call.types = {{"DTYPE", "f32"}};
  call.params = {{"ALLOW_TF32", 1}};
  auto config = matmul.configForCall(*candidate, call);
  ASSERT_TRUE(config.ok()) << config.message();
  EXPECT_EQ(config->str(), "ALLOW_TF32=1,BLOCK_K=32,BLOCK_M=64,BLOCK_N=32,"
                           "DTYPE=f32,GROUP_M=8,num_warps=2,num_stages=1");

  call.params = {{"BLOCK_Q", 1}};
  auto unknown = matmul.configForCall(*candidate, call);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("no meta-parameter 'BLOCK_Q'"),
            std::string::npos)
      << unknown.message();

  // A candidate naming a type or a key parameter the call does not have
  // would be stored under a key that does not describe it: refused.
  Call plain;
  auto f32 = matmul.configForCall(
      *Config::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,DTYPE=f32"), plain);
  ASSERT_FALSE(f32.ok());
  EXPECT_NE(f32.message().find("the candidate sets DTYPE=f32 but the call's "
                               "DTYPE is f16"),
            std::string::npos)
      << f32.message();
  auto tf32 = matmul.configForCall(
      *Config::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,ALLOW_TF32=1"), plain);
  ASSERT_FALSE(tf32.ok());
  EXPECT_NE(tf32.message().find("ALLOW_TF32=1"), std::string::npos);
  // The declared candidates carry the defaults; the call's values replace
  // them.
  Call f32Types;
  f32Types.types = {{"DTYPE", "f32"}};
  auto f32Call = matmul.configForCall(matmul.getConfigs()[0], f32Types);
  ASSERT_TRUE(f32Call.ok()) << f32Call.message();
  EXPECT_EQ(f32Call->types.at("DTYPE"), "f32");

  Call rows;
  rows.sizes = {{"n_rows", 4}, {"n_cols", 3000}};
  auto softmax =
      softmaxLike().configForCall(*Config::parse("num_warps=8"), rows);
  ASSERT_TRUE(softmax.ok()) << softmax.message();
  EXPECT_EQ(softmax->params.at("BLOCK_N"), 4096);
}

TEST(KernelDescription, GridsAndRequirements) {
  KernelDescription matmul = matmulLike();
  auto config = Config::parse("BLOCK_M=64,BLOCK_N=32");
  auto grid = matmul.evaluateGrid(*config, matmulCall(203, 176, 208));
  ASSERT_TRUE(grid.ok()) << grid.message();
  EXPECT_EQ(grid->x, 24u);
  EXPECT_EQ(grid->y, 1u);
  EXPECT_EQ(grid->z, 1u);

  auto bad = matmulLike().grid({"cdiv(M, BLOCK_Q)"});
  grid = bad.evaluateGrid(*config, matmulCall(203, 176, 208));
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.message().find("grid of matmul"), std::string::npos);
  EXPECT_NE(grid.message().find("no value for 'BLOCK_Q'"), std::string::npos);

  // A config that would compute a wrong answer is refused before launch.
  Call rows;
  rows.sizes = {{"n_rows", 37}, {"n_cols", 1000}};
  auto small = Config::parse("BLOCK_N=512");
  grid = softmaxLike().evaluateGrid(*small, rows);
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.message().find("softmax requires BLOCK_N >= n_cols (one "
                                "program holds a row)"),
            std::string::npos)
      << grid.message();
  EXPECT_TRUE(
      softmaxLike().evaluateGrid(*Config::parse("BLOCK_N=1024"), rows).ok());

  // Requirements see the integer arguments, defaults included: 32-bit
  // offsets of a matrix too large for them are refused.
  auto offsets = matmulLike().require(
      "(M - 1) * stride_am + (K - 1) * stride_ak < 2147483648",
      "A's element offsets are 32-bit");
  EXPECT_TRUE(offsets.evaluateGrid(*config, matmulCall(4096, 16, 4096)).ok());
  grid = offsets.evaluateGrid(*config, matmulCall(65536, 16, 65536));
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.message().find("A's element offsets are 32-bit"),
            std::string::npos)
      << grid.message();
}

// evaluateCall gives what the four functions give separately, over calls
// with given and defaulted arguments, a derived key, specializations and a
// requirement; its grid sees the config where a default names a
// meta-parameter.
TEST(KernelDescription, OneEvaluationOfACallAgreesWithTheParts) {
  KernelDescription matmul = matmulWithTiles();
  auto config = Config::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32");
  ASSERT_TRUE(config.ok());
  Call strided = matmulCall(203, 176, 208);
  strided.sizes["stride_am"] = 1;
  strided.params["BLOCK_M"] = 32;
  Call withParams = matmulCall(4096, 32, 64);
  withParams.params["BLOCK_M"] = 128;
  for (const Call &call : {matmulCall(512, 512, 512), matmulCall(203, 176, 208),
                           strided, withParams, matmulCall(1, 16, 1)}) {
    // tiles_m needs BLOCK_M from the call's parameters: without it both
    // fail alike.
    auto evaluation = matmul.evaluateCall(call);
    auto integers = matmul.evaluateIntegerArguments(call);
    ASSERT_EQ(evaluation.ok(), integers.ok());
    if (!integers.ok()) {
      EXPECT_EQ(evaluation.message(), integers.message());
      continue;
    }
    EXPECT_EQ(evaluation->integerArguments, *integers);
    auto key = matmul.evaluateAutotuneKey(call);
    ASSERT_TRUE(key.ok());
    EXPECT_EQ(evaluation->autotuneKey, *key);
    EXPECT_EQ(evaluation->specialization.str(),
              matmul.specializationOf(call).str());
    auto separate = matmul.evaluateGrid(*config, call);
    auto together = matmul.evaluateGrid(*config, *evaluation);
    ASSERT_EQ(separate.ok(), together.ok());
    if (separate.ok()) {
      EXPECT_EQ(together->x, separate->x);
      EXPECT_EQ(together->y, separate->y);
    }
  }
  // The launch's tiles_m is over the call's BLOCK_M (128: 32 tiles), the
  // requirement's over the config's (64: 64 tiles), as evaluateGrid alone.
  auto evaluation = matmul.evaluateCall(withParams);
  ASSERT_TRUE(evaluation.ok()) << evaluation.message();
  EXPECT_EQ(evaluation->integerArguments.back(),
            (std::pair<std::string, int64_t>{"tiles_m", 32}));
  auto tight =
      KernelDescription(matmul).require("tiles_m == 64", "the config's tiles");
  auto grid = tight.evaluateGrid(*config, *tight.evaluateCall(withParams));
  ASSERT_TRUE(grid.ok()) << grid.message();
  EXPECT_EQ(grid->x, 64u);
  EXPECT_TRUE(tight.evaluateGrid(*config, withParams).ok());
  // A call without a value for an argument is the same error.
  Call missing;
  missing.sizes = {{"M", 5}, {"N", 5}};
  auto failed = matmul.evaluateCall(missing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.message(),
            matmul.evaluateIntegerArguments(missing).message());
}

TEST(KernelDescription, Flops) {
  EXPECT_DOUBLE_EQ(*matmulLike().evaluateFlops(matmulCall(8192, 8192, 8192)),
                   2.0 * 8192 * 8192 * 8192);
  Call rows;
  rows.sizes = {{"n_rows", 1}, {"n_cols", 1}};
  EXPECT_EQ(*softmaxLike().evaluateFlops(rows), 0.0);
}

// The autotune cache stores descriptions: what is written reads back to the
// same description, and it answers a call the same way.
TEST(KernelDescription, JsonRoundTrip) {
  for (const KernelDescription &kernel : {matmulLike(), softmaxLike()}) {
    std::string json = kernel.toJson();
    auto back = KernelDescription::fromJson(json);
    ASSERT_TRUE(back.ok()) << back.message() << "\n" << json;
    EXPECT_EQ(back->toJson(), json);
    EXPECT_EQ(back->getName(), kernel.getName());
    EXPECT_EQ(back->getConfigs().size(), kernel.getConfigs().size());
  }
  auto back = *KernelDescription::fromJson(matmulLike().toJson());
  Call call = matmulCall(1000, 1000, 1000);
  EXPECT_EQ(back.specializationOf(call).str(),
            matmulLike().specializationOf(call).str());
  EXPECT_EQ(back.getMetaParameters()[0].minReason, "dot operands");
  EXPECT_EQ(back.getTailSizes().at("M"), 203);
  EXPECT_EQ(back.getSourceFile(), "kernels/matmul.cpp");
  EXPECT_EQ(back.getLine(), 80u);

  // An argument that specializes from a smaller divisor keeps it.
  KernelDescription odd = KernelDescription("odd")
                              .arg(scalar("n", "i32").specializeFrom(2))
                              .arg(scalar("m", "i32"));
  auto oddBack = KernelDescription::fromJson(odd.toJson());
  ASSERT_TRUE(oddBack.ok()) << oddBack.message();
  EXPECT_EQ(oddBack->toJson(), odd.toJson());
  Call even;
  even.sizes = {{"n", 2222}, {"m", 2222}};
  EXPECT_EQ(oddBack->specializationOf(even).str(), "n%2");
  std::string json = odd.toJson();
  json.replace(json.find("\"specialize_from\":2"), 19,
               "\"specialize_from\":3");
  auto bad = KernelDescription::fromJson(json);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("specialize_from"), std::string::npos)
      << bad.message();
}

// An argument that does not specialize gives no facts for any value (not
// %16, not == 1), so every value of a bucket shares one kernel; the other
// arguments still specialize, and the choice survives the JSON.
TEST(KernelDescription, DoNotSpecialize) {
  KernelDescription stream = KernelDescription("stream")
                                 .arg(scalar("N", "i32").doNotSpecialize())
                                 .arg(scalar("V", "i32"));
  auto back = KernelDescription::fromJson(stream.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->toJson(), stream.toJson());
  EXPECT_NE(stream.toJson().find("\"specialize\":false"), std::string::npos);
  for (const KernelDescription *description : {&stream, &*back}) {
    for (int64_t n : {1, 16, 4096, 1000, 65536}) {
      Call call;
      call.sizes = {{"N", n}, {"V", 32}};
      EXPECT_EQ(description->specializationOf(call).str(), "V%16") << n;
    }
    Call one;
    one.sizes = {{"N", 1}, {"V", 1}};
    EXPECT_EQ(description->specializationOf(one).str(), "V=1");
  }
  std::string json = stream.toJson();
  const std::string unspecialized = "\"specialize\":false";
  json.replace(json.find(unspecialized), unspecialized.size(),
               "\"specialize\":0");
  auto bad = KernelDescription::fromJson(json);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("specialize"), std::string::npos)
      << bad.message();
}

// A prune condition speaks of the config (num_warps included) and the call;
// it says why a candidate is not worth compiling, and survives the JSON.
TEST(KernelDescription, PruneConditions) {
  KernelDescription matmul = matmulLike().pruneUnless(
      "BLOCK_M * BLOCK_N <= 4096 * num_warps", "128 f32 accumulators a thread");
  auto small = matmul.parseConfig("BLOCK_M=64,BLOCK_N=256,BLOCK_K=32");
  auto large =
      matmul.parseConfig("BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_warps=4");
  auto wide =
      matmul.parseConfig("BLOCK_M=128,BLOCK_N=256,BLOCK_K=32,num_warps=8");
  ASSERT_TRUE(small.ok() && large.ok() && wide.ok());
  Call call = matmulCall(512, 512, 512);
  EXPECT_EQ(*matmul.pruneReason(*small, call), std::nullopt);
  EXPECT_EQ(*matmul.pruneReason(*wide, call), std::nullopt);
  auto reason = matmul.pruneReason(*large, call);
  ASSERT_TRUE(reason.ok() && reason->has_value());
  EXPECT_EQ(**reason, "not worth trying: BLOCK_M * BLOCK_N <= 4096 * "
                      "num_warps does not hold (128 f32 accumulators a "
                      "thread)");
  auto back = KernelDescription::fromJson(matmul.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->toJson(), matmul.toJson());
  EXPECT_EQ(back->getPruneConditions(), matmul.getPruneConditions());
  // A condition that names nothing known is an error, not a pass.
  KernelDescription broken = matmulLike().pruneUnless("TILES <= 4", "typo");
  EXPECT_FALSE(broken.pruneReason(*small, call).ok());
}

// A first use without tuning runs the first prediction whose conditions all
// hold and which no prune condition rejects, else the first candidate none
// rejects; the rest follow, each once. Predictions survive the JSON.
TEST(KernelDescription, PredictedConfigs) {
  const std::string big = "BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,num_warps=4,"
                          "num_stages=4";
  const std::string small = "BLOCK_M=64,BLOCK_N=32,BLOCK_K=32,num_warps=2,"
                            "num_stages=5";
  KernelDescription matmul =
      matmulLike()
          .pruneUnless("BLOCK_M <= 2 * M", "rows past twice M are masked")
          .predictWhen({"M >= 1024", "N >= 1024"}, big)
          .predictWhen({}, small);
  auto texts = [&](const Call &call) {
    std::vector<std::string> out;
    auto configs = matmul.predictedConfigs(call);
    EXPECT_TRUE(configs.ok()) << configs.message();
    if (configs.ok())
      for (const Config &config : *configs)
        out.push_back(config.str());
    return out;
  };
  auto full = [&](const std::string &text) {
    return matmul.configForCall(*matmul.parseConfig(text), matmulCall(1, 1, 1))
        ->str();
  };
  // Both conditions hold: the large tile first, then the small one.
  EXPECT_EQ(texts(matmulCall(2048, 2048, 64)),
            (std::vector<std::string>{full(big), full(small)}));
  // One of them fails: the next prediction first.
  EXPECT_EQ(texts(matmulCall(2048, 512, 64)),
            (std::vector<std::string>{full(small), full(big)}));
  // The large tile is pruned for M = 32: it is not predicted, nor tried.
  EXPECT_EQ(texts(matmulCall(32, 4096, 64)),
            (std::vector<std::string>{full(small)}));

  auto back = KernelDescription::fromJson(matmul.toJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->toJson(), matmul.toJson());
  ASSERT_EQ(back->getPredictions().size(), 2u);
  EXPECT_EQ(back->getPredictions()[0].conditions,
            (std::vector<std::string>{"M >= 1024", "N >= 1024"}));
  EXPECT_EQ(*back->predictedConfigs(matmulCall(2048, 2048, 64)),
            *matmul.predictedConfigs(matmulCall(2048, 2048, 64)));

  // Without predictions: the candidates in declaration order.
  EXPECT_EQ(matmulLike().predictedConfigs(matmulCall(2048, 2048, 64))->front(),
            *matmul.configForCall(*matmul.parseConfig(big),
                                  matmulCall(2048, 2048, 64)));
  // A condition that names nothing known is an error, not a pass.
  KernelDescription broken = matmulLike().predictWhen({"TILES <= 4"}, small);
  EXPECT_FALSE(broken.predictedConfigs(matmulCall(64, 64, 64)).ok());
  // A prediction in the JSON that is not a candidate is refused.
  std::string json = matmul.toJson();
  size_t at = json.find("\"predictions\"");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(json.find("BLOCK_M=64", at), 10, "BLOCK_M=32");
  auto refused = KernelDescription::fromJson(json);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("is not one of the configs"),
            std::string::npos)
      << refused.message();
}

// A prediction must be one of the candidates: a tuning could choose it.
TEST(KernelDescriptionDeathTest, APredictionThatIsNotACandidateAborts) {
  EXPECT_DEATH(matmulLike().predictWhen(
                   {}, "BLOCK_M=32,BLOCK_N=32,BLOCK_K=32,num_warps=4"),
               "is not a candidate declared before it");
}

TEST(KernelDescription, JsonErrorsNameTheField) {
  auto error = [](const std::string &json) {
    auto description = KernelDescription::fromJson(json);
    EXPECT_FALSE(description.ok()) << json;
    return description.ok() ? "" : description.message();
  };
  EXPECT_NE(error("[1]").find("expected a json object"), std::string::npos);
  EXPECT_NE(error("{").find("invalid json"), std::string::npos);
  EXPECT_NE(error(R"({"params": []})").find("field 'name' is missing"),
            std::string::npos);
  EXPECT_NE(error(R"({"name": "k", "params": [{"name": 3}]})")
                .find("field 'params[0].name' must be a string"),
            std::string::npos);
  std::string json = matmulLike().toJson();
  std::string broken = json;
  broken.replace(broken.find("num_warps=4"), 11, "num_warps=3");
  EXPECT_NE(error(broken).find("configs[0]"), std::string::npos)
      << error(broken);
}

// A plan of a call's shape gives what evaluateCall and evaluateGrid give
// where they succeed, and nothing where they fail (their errors are then
// the description's to give): a size a parameter overrides, a default over
// a parameter, a derived key, a requirement that breaks for some sizes, a
// grid axis past its limit, a key entry that fails for some sizes.
TEST(KernelDescription, ACallPlanAgreesWithTheDescription) {
  KernelDescription matmul = matmulWithTiles().require("K % 2 == 0", "even K");
  auto config = Config::parse("BLOCK_M=64,BLOCK_N=32,BLOCK_K=32");
  ASSERT_TRUE(config.ok());
  Call shape = matmulCall(512, 512, 512);
  shape.params["BLOCK_M"] = 128;
  shape.sizes["stride_am"] = 3;
  Call overridden = shape;
  overridden.sizes["BLOCK_M"] = 7; // the call's parameter wins in names
  int successes = 0, failures = 0;
  for (const Call &base : {shape, overridden}) {
    CallPlan plan(matmul, base);
    CallPlan::Grid grid = plan.grid(*config);
    for (int64_t m : {1, 2, 203, 4096, 1 << 20})
      for (int64_t k : {0, 7, 64}) {
        Call call = base;
        call.sizes["M"] = m;
        call.sizes["K"] = k;
        call.sizes["N"] = m == 1 << 20 ? int64_t(1) << 40 : 512;
        SCOPED_TRACE(std::to_string(m) + " " + std::to_string(k));
        auto planned =
            tilec::test::expectPlannedAsDescribed(matmul, plan, call);
        if (!planned)
          continue;
        auto separate = matmul.evaluateGrid(*config, call);
        auto planGrid = grid.evaluate(*planned);
        ASSERT_EQ(planGrid.has_value(), separate.ok());
        (planGrid ? successes : failures) += 1;
        if (planGrid) {
          EXPECT_EQ(planGrid->x, separate->x);
          EXPECT_EQ(planGrid->y, separate->y);
        }
      }
  }
  // Both kinds occur: odd K breaks a requirement, N = 2^40 the grid's limit.
  EXPECT_GT(successes, 10);
  EXPECT_GT(failures, 10);
  // A key that cannot be evaluated for a call plans nothing for it.
  KernelDescription logKey =
      KernelDescription(matmulLike()).key("LOG2_K", "ceil(log2(K))");
  CallPlan plan(logKey, matmulCall(64, 64, 64));
  EXPECT_TRUE(plan.evaluate(matmulCall(64, 64, 8)).has_value());
  EXPECT_FALSE(plan.evaluate(matmulCall(64, 64, 0)).has_value());
  EXPECT_FALSE(logKey.evaluateCall(matmulCall(64, 64, 0)).ok());
  // Another shape does not fit.
  Call typed = matmulCall(64, 64, 64);
  typed.types["DTYPE"] = "f32";
  EXPECT_FALSE(plan.fits(typed));
  EXPECT_TRUE(CallPlan(logKey, typed).fits(typed));
}

// Two arguments of one name could not both take a call's value of it: a
// kernel's own declaration of them aborts, a description read back is an
// error naming the field.
TEST(KernelDescription, AnArgumentNameIsDeclaredOnce) {
  EXPECT_DEATH(KernelDescription("twice")
                   .arg(scalar("X", "i32"))
                   .arg(scalar("X", "i32").byDefault("16")),
               "argument 'X' is declared twice");
  std::string json = KernelDescription("twice")
                         .arg(scalar("X", "i32"))
                         .arg(scalar("Y", "i32"))
                         .toJson();
  json.replace(json.find("\"name\":\"Y\""), 10, "\"name\":\"X\"");
  auto bad = KernelDescription::fromJson(json);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("signature[1].name: 'X' names an earlier "
                               "argument too"),
            std::string::npos)
      << bad.message();
}

// evaluateGrid leaves out an argument whose default fails over the config
// (here BLOCK - 16 = 0): the grid stands where nothing reads it, and fails
// where something does; a plan's grid does the same. A grid answers only
// evaluations of its own plan.
TEST(KernelDescription, ACallPlansGridLeavesOutAFailedDefaultAsTheDescription) {
  auto describe = [](std::string axis) {
    return KernelDescription("k")
        .param(MetaParameter("BLOCK").powerOfTwo().byDefault(64))
        .arg(scalar("N", "i32"))
        .arg(scalar("s", "i32").byDefault("100 // (BLOCK - 16)"))
        .candidate("BLOCK=16")
        .grid({axis});
  };
  Call call;
  call.sizes = {{"N", 48}};
  auto config = Config::parse("BLOCK=16");
  ASSERT_TRUE(config.ok());
  KernelDescription unread = describe("N"), read = describe("N + s");
  CallPlan unreadPlan(unread, call), readPlan(read, call);
  auto unreadGrid = unread.evaluateGrid(*config, call);
  ASSERT_TRUE(unreadGrid.ok()) << unreadGrid.message();
  auto planned = unreadPlan.evaluate(call);
  ASSERT_TRUE(planned.has_value());
  auto grid = unreadPlan.grid(*config).evaluate(*planned);
  ASSERT_TRUE(grid.has_value());
  EXPECT_EQ(grid->x, unreadGrid->x);
  EXPECT_FALSE(read.evaluateGrid(*config, call).ok());
  auto readEvaluation = readPlan.evaluate(call);
  ASSERT_TRUE(readEvaluation.has_value());
  EXPECT_FALSE(readPlan.grid(*config).evaluate(*readEvaluation).has_value());
  // Another plan's evaluation has other slots.
  EXPECT_FALSE(readPlan.grid(*config).evaluate(*planned).has_value());
  // Nothing compiled evaluates to an error, not to a read of nothing.
  EXPECT_FALSE(CompiledExpression().evaluate(nullptr).ok());
}

} // namespace
