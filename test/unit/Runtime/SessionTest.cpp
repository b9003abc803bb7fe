//===- SessionTest.cpp - One device's runtime from one options struct -----===//
//
// What needs no GPU: the options a session gets from an environment, the
// errors that name a variable, and a device the driver lacks (an error
// with or without a driver). test/gpu/SessionGpuTest.cpp runs sessions.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Session.h"
#include "tilec/runtime/Device.h"
#include "tilec/runtime/Driver.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace {

namespace rt = tilec::rt;

TEST(SessionOptionsTest, TheEnvironmentSetsTheCachesAndPins) {
  rt::Environment environment;
  environment.cacheDirectory = "/caches/stages";
  environment.autotuneCache = "/caches/tuned.json";
  environment.pinConfig = "matmul=BLOCK_M=64,BLOCK_N=64,BLOCK_K=32";
  auto options = rt::SessionOptions::fromEnvironment(environment);
  ASSERT_TRUE(options.ok()) << options.message();
  EXPECT_EQ(options->device, 0);
  EXPECT_EQ(options->stageCacheDirectory, "/caches/stages");
  EXPECT_EQ(options->autotuneCachePath, "/caches/tuned.json");
  EXPECT_EQ(options->pins.find("matmul", "any"),
            "BLOCK_M=64,BLOCK_N=64,BLOCK_K=32");
  EXPECT_EQ(options->remote, nullptr);
  EXPECT_EQ(options->bundle, nullptr);
  EXPECT_FALSE(options->compiler);
  EXPECT_EQ(options->tuning.screening.keep, rt::ScreeningOptions().keep);

  environment.autotuneScreen = "0";
  auto full = rt::SessionOptions::fromEnvironment(environment);
  ASSERT_TRUE(full.ok()) << full.message();
  EXPECT_EQ(full->tuning.screening.keep, 0);
  EXPECT_EQ(full->tuning.benchmark.targetError,
            rt::BenchmarkOptions().targetError);

  for (auto [text, fraction] :
       {std::pair{"0.25", 0.0025}, std::pair{"2", 0.02}, std::pair{"0", 0.0}}) {
    environment.autotuneTargetError = text;
    auto precise = rt::SessionOptions::fromEnvironment(environment);
    ASSERT_TRUE(precise.ok()) << precise.message();
    EXPECT_DOUBLE_EQ(precise->tuning.benchmark.targetError, fraction) << text;
  }
}

TEST(SessionOptionsTest, FirstUse) {
  rt::Environment environment;
  EXPECT_EQ(rt::SessionOptions::fromEnvironment(environment)->tuning.firstUse,
            rt::FirstUse::Tune);
  environment.firstUse = "predict";
  EXPECT_EQ(rt::SessionOptions::fromEnvironment(environment)->tuning.firstUse,
            rt::FirstUse::Predict);
  environment.firstUse = "tune";
  EXPECT_EQ(rt::SessionOptions::fromEnvironment(environment)->tuning.firstUse,
            rt::FirstUse::Tune);
  environment.firstUse = "guess";
  auto bad = rt::SessionOptions::fromEnvironment(environment);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("TILEC_FIRST_USE"), std::string::npos)
      << bad.message();
}

TEST(SessionOptionsTest, ABadVariableIsAnErrorNamingIt) {
  rt::Environment pins;
  pins.pinConfig = "matmul";
  auto badPins = rt::SessionOptions::fromEnvironment(pins);
  ASSERT_FALSE(badPins.ok());
  EXPECT_NE(badPins.message().find("TILEC_PIN_CONFIG"), std::string::npos)
      << badPins.message();

  for (const char *text : {"-1", "four", "4.5", "100000"}) {
    rt::Environment screen;
    screen.autotuneScreen = text;
    auto badScreen = rt::SessionOptions::fromEnvironment(screen);
    ASSERT_FALSE(badScreen.ok()) << text;
    EXPECT_NE(badScreen.message().find("TILEC_AUTOTUNE_SCREEN"),
              std::string::npos)
        << badScreen.message();
  }

  for (const char *text :
       {"-1", "half", "51", "1e-2", ".5", "5.", "0.1234567", "1,5"}) {
    rt::Environment precision;
    precision.autotuneTargetError = text;
    auto badPrecision = rt::SessionOptions::fromEnvironment(precision);
    ASSERT_FALSE(badPrecision.ok()) << text;
    EXPECT_NE(badPrecision.message().find("TILEC_AUTOTUNE_TARGET_ERROR"),
              std::string::npos)
        << badPrecision.message();
  }

  rt::Environment bundle;
  bundle.bundle = "/nonexistent/net.bundle";
  auto badBundle = rt::SessionOptions::fromEnvironment(bundle);
  ASSERT_FALSE(badBundle.ok());
  EXPECT_NE(badBundle.message().find("TILEC_BUNDLE"), std::string::npos)
      << badBundle.message();
  EXPECT_NE(badBundle.message().find("/nonexistent/net.bundle"),
            std::string::npos)
      << badBundle.message();
}

// Without a driver the driver's error; with one, the ordinal it lacks.
TEST(SessionTest, ADeviceTheDriverLacksIsAnError) {
  rt::SessionOptions options;
  options.device = 4096;
  auto session = rt::Session::create(std::move(options));
  ASSERT_FALSE(session.ok());
  EXPECT_FALSE(session.message().empty());
  auto driver = rt::Driver::get();
  if (driver.ok() && rt::Device::count(**driver).ok())
    EXPECT_NE(session.message().find("CUDA device 4096 does not exist"),
              std::string::npos)
        << session.message();
}

} // namespace
