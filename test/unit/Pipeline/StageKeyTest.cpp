//===- StageKeyTest.cpp - Every option keys exactly the stages it names ---===//
//
// Walks the field list of each stage's options (CompileOptions::fields(),
// PTXOptions::fields(), CubinOptions::fields()), changes one field at a time
// and checks that exactly the keys of the stages its entry names change: a
// field added to a list is tested here with no new line, and a field missing
// from its list fails the build.
//
//===----------------------------------------------------------------------===//

#include "tilec/Pipeline/StageKey.h"
#include "tilec/runtime/StageCache.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>

using namespace tilec;

namespace {

constexpr std::array<Stage, 5> kAllStages = {
    Stage::TTIR, Stage::TTGIR, Stage::LLIR, Stage::PTX, Stage::Cubin};

// A value other than `value`, for each type an option field has; a field of
// a new type does not compile here until it gets one. Strings gain an "x":
// the fixture makes the files such a changed path names.
void change(unsigned &value) { ++value; }
void change(bool &value) { value = !value; }
void change(std::string &value) { value += "x"; }
void change(std::vector<std::string> &value) { value.push_back("x"); }
void change(CubinBackend &value) {
  value = value == CubinBackend::Ptxas ? CubinBackend::NvJitLink
                                       : CubinBackend::Ptxas;
}
void change(std::map<std::string, int64_t> &value) { ++value["X"]; }
void change(std::map<std::string, std::string> &value) { value["X"] += "x"; }
void change(std::function<void(mlir::PassManager &)> &value) {
  value = [](mlir::PassManager &) {};
}
void change(std::shared_ptr<rt::StageCache> &value) {
  value = std::make_shared<rt::StageCache>("/nonexistent/tilec-cache");
}
void change(PTXOptions &value);
void change(CubinOptions &value);

template <class Options> void changeEveryField(Options &options) {
  forEachField<Options>(
      [&](const auto &field) { change(options.*field.member); });
}
void change(PTXOptions &value) { changeEveryField(value); }
void change(CubinOptions &value) { changeEveryField(value); }

using Keys = std::array<std::string, kAllStages.size()>;

class StageKeyTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/tilec-stage-key-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root = pattern;
    // Two libdevice files and two ptxas that tell themselves apart, at the
    // base path and at the path change() makes of it.
    write(root + "/libdevice.bc", "one");
    write(root + "/libdevice.bcx", "two");
    write(root + "/ptxas", "#!/bin/sh\necho 'ptxas one'\n");
    write(root + "/ptxasx", "#!/bin/sh\necho 'ptxas two'\n");
    ASSERT_EQ(::chmod((root + "/ptxas").c_str(), 0755), 0);
    ASSERT_EQ(::chmod((root + "/ptxasx").c_str(), 0755), 0);
    base = getStageOptions(CompileOptions(), "kernel");
    base.ptx.libdevicePath = root + "/libdevice.bc";
    base.cubin.ptxasPath = root + "/ptxas";
  }
  void TearDown() override {
    ASSERT_EQ(std::system(("rm -rf '" + root + "'").c_str()), 0);
  }

  static void write(const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
  }

  static Keys keys(const StageOptions &options) {
    Keys keys;
    for (Stage stage : kAllStages)
      keys[unsigned(stage)] =
          getStageKey(stage, "compiler", "input-sha256", options);
    return keys;
  }

  // Changes each field of `base.*part` in turn: the keys of the stages its
  // entry names change, every other key stays.
  template <class Options> void checkEveryField(Options StageOptions::*part) {
    Keys before = keys(base);
    for (const std::string &key : before)
      ASSERT_EQ(key.size(), 64u);
    forEachField<Options>([&](const auto &field) {
      StageOptions options = base;
      change(options.*part.*field.member);
      Keys after = keys(options);
      for (Stage stage : kAllStages)
        EXPECT_EQ(after[unsigned(stage)] != before[unsigned(stage)],
                  field.stages.contains(stage))
            << "changing " << field.name << ", the "
            << getStageName(stage).str() << " key";
    });
  }

  std::string root;
  StageOptions base;
};

TEST_F(StageKeyTest, CompileOptionsKeyTheStagesTheyName) {
  checkEveryField(&StageOptions::compile);
}

TEST_F(StageKeyTest, PTXOptionsKeyTheStagesTheyName) {
  checkEveryField(&StageOptions::ptx);
}

TEST_F(StageKeyTest, CubinOptionsKeyTheStagesTheyName) {
  checkEveryField(&StageOptions::cubin);
}

template <class Options> void expectWellFormedList() {
  std::set<std::string> names;
  forEachField<Options>([&](const auto &field) {
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    if constexpr (std::decay_t<decltype(field)>::kind == FieldKind::Excluded) {
      ASSERT_NE(field.reason, nullptr) << field.name;
      EXPECT_GT(std::strlen(field.reason), 0u) << field.name;
    } else {
      EXPECT_FALSE(field.stages.empty()) << field.name;
    }
  });
  EXPECT_EQ(names.size(), countFields<Options>());
}

TEST(OptionFields, EveryEntryHasANameAndAStageOrAReason) {
  expectWellFormedList<CompileOptions>();
  expectWellFormedList<PTXOptions>();
  expectWellFormedList<CubinOptions>();
}

struct Counted {
  unsigned a = 1;
  std::string b;
  std::vector<std::string> c;
  PTXOptions d;
};
static_assert(countFields<Counted>() == 4);

struct MissesAField {
  unsigned a = 1;
  std::string b;
  static constexpr auto fields() {
    return std::make_tuple(keyedField("a", &MissesAField::a, Stage::TTGIR));
  }
};
struct NamesAFieldTwice {
  unsigned a = 1;
  unsigned b = 2;
  static constexpr auto fields() {
    return std::make_tuple(keyedField("a", &NamesAFieldTwice::a, Stage::TTGIR),
                           keyedField("b", &NamesAFieldTwice::a, Stage::TTGIR));
  }
};

// What the static_asserts next to the option structs rely on.
TEST(OptionFields, TheCheckCatchesAMissingOrRepeatedField) {
  EXPECT_EQ(countFields<Counted>(), 4u);
  EXPECT_FALSE(listsEveryFieldOnce<MissesAField>());
  EXPECT_FALSE(listsEveryFieldOnce<NamesAFieldTwice>());
  EXPECT_TRUE(listsEveryFieldOnce<PTXOptions>());
}

// The later stages run with the target as their chip; the ttir key holds no
// option at all.
TEST_F(StageKeyTest, TheTargetKeysEveryStageAfterTTIR) {
  CompileOptions options;
  options.target = "sm_80";
  options.ptx.chip = "sm_90";
  options.cubin.chip = "sm_90";
  options.cubin.ptxasPath = base.cubin.ptxasPath;
  StageOptions sm80 = getStageOptions(options, "kernel");
  EXPECT_EQ(sm80.ptx.chip, "sm_80");
  EXPECT_EQ(sm80.cubin.chip, "sm_80");
  EXPECT_EQ(sm80.cubin.kernelName, "kernel");
  options.target = "sm_90";
  Keys a = keys(sm80), b = keys(getStageOptions(options, "kernel"));
  EXPECT_EQ(a[0], b[0]);
  for (unsigned i = 1; i < a.size(); ++i)
    EXPECT_NE(a[i], b[i]) << getStageName(kAllStages[i]).str();
}

// Derived fields key what they select: an unset option, the environment
// variable naming the same thing and the explicit default key alike.
TEST_F(StageKeyTest, UnsetAndDefaultKeyAlike) {
  auto llirKey = [](const StageOptions &options) {
    return getStageKey(Stage::LLIR, "compiler", "input-sha256", options);
  };
  StageOptions passes = base;
  passes.ptx.llvmPasses = kKernelPassPipeline;
  EXPECT_EQ(llirKey(passes), llirKey(base));

  StageOptions unset = base;
  unset.ptx.libdevicePath.clear();
  ASSERT_EQ(::setenv("TILEC_LIBDEVICE", base.ptx.libdevicePath.c_str(), 1), 0);
  EXPECT_EQ(llirKey(unset), llirKey(base));
  ASSERT_EQ(::setenv("TILEC_LIBDEVICE", (root + "/libdevice.bcx").c_str(), 1),
            0);
  EXPECT_NE(llirKey(unset), llirKey(base));
  ASSERT_EQ(::unsetenv("TILEC_LIBDEVICE"), 0);

  auto cubinKey = [](const StageOptions &options) {
    return getStageKey(Stage::Cubin, "compiler", "input-sha256", options);
  };
  unset.cubin.ptxasPath.clear();
  ASSERT_EQ(::setenv("TILEC_PTXAS", base.cubin.ptxasPath.c_str(), 1), 0);
  EXPECT_EQ(cubinKey(unset), cubinKey(base));
  ASSERT_EQ(::unsetenv("TILEC_PTXAS"), 0);
}

// Without a ptxas to identify, the cubin cannot be keyed (it then runs
// uncached); the stages before it are unaffected.
TEST_F(StageKeyTest, AnUnknownPtxasLeavesOnlyTheCubinUnkeyed) {
  StageOptions missing = base;
  missing.cubin.ptxasPath = root + "/no-ptxas";
  Keys before = keys(base), after = keys(missing);
  EXPECT_EQ(after[unsigned(Stage::Cubin)], "");
  for (Stage stage : {Stage::TTIR, Stage::TTGIR, Stage::LLIR, Stage::PTX})
    EXPECT_EQ(after[unsigned(stage)], before[unsigned(stage)]);
}

} // namespace
