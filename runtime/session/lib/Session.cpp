//===- Session.cpp - One device's runtime, made from one options struct ---===//

#include "tilec/runtime/Session.h"

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/CounterFile.h"
#include "tilec/runtime/KernelCompiler.h"
#include "tilec/runtime/KernelProvider.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/StageCache.h"
#include "tilec/sparse/SparseConv.h"

#include <cmath>
#include <string_view>

namespace tilec::rt {

// A percentage written "2", "0.5" or "0" (no sign, no exponent): `percent`.
static bool parsePercent(std::string_view text, double &percent) {
  size_t point = text.find('.');
  std::string_view whole = text.substr(0, point);
  std::string_view fraction =
      point == std::string_view::npos ? "" : text.substr(point + 1);
  uint64_t wholeValue = 0, fractionValue = 0;
  if (whole.size() > 3 || fraction.size() > 6 ||
      !parseDecimalCount(whole, wholeValue) ||
      (point != std::string_view::npos &&
       !parseDecimalCount(fraction, fractionValue)))
    return false;
  percent = double(wholeValue) +
            double(fractionValue) / std::pow(10.0, double(fraction.size()));
  return true;
}

Result<SessionOptions>
SessionOptions::fromEnvironment(const Environment &environment) {
  SessionOptions options;
  options.stageCacheDirectory = environment.stageCacheDirectory();
  options.autotuneCachePath = environment.autotuneCachePath();
  options.remote = RemoteCache::shared(environment);
  if (!environment.bundle.empty()) {
    auto bundle = KernelBundle::open(environment.bundle);
    if (!bundle)
      return bundle.status().withContext("TILEC_BUNDLE");
    options.bundle = std::move(*bundle);
    options.bundlePolicy = environment.bundleFallBack ? BundlePolicy::FallBack
                                                      : BundlePolicy::Strict;
  }
  auto pins = PinnedConfigs::fromEnvironment(environment);
  if (!pins)
    return pins.status();
  options.pins = std::move(*pins);
  if (!environment.autotuneScreen.empty()) {
    // How many screened candidates a tuning times in full; 0: every one.
    uint64_t keep = 0;
    if (!parseDecimalCount(environment.autotuneScreen, keep) || keep > 999)
      return Status::error(ErrorKind::InvalidArgument,
                           "TILEC_AUTOTUNE_SCREEN must be a count of "
                           "candidates from 0 to 999 (0: time every "
                           "candidate in full), got '" +
                               environment.autotuneScreen + "'");
    options.tuning.screening.keep = int(keep);
  }
  if (environment.firstUse == "predict")
    options.tuning.firstUse = FirstUse::Predict;
  else if (!environment.firstUse.empty() && environment.firstUse != "tune")
    return Status::error(ErrorKind::InvalidArgument,
                         "TILEC_FIRST_USE must be 'tune' (a new key is tuned "
                         "on its first call) or 'predict' (it runs the "
                         "kernel's prediction until retirePredictions), got '" +
                             environment.firstUse + "'");
  if (!environment.autotuneTargetError.empty()) {
    // The full measurement's precision, in percent; 0: repetitions fill the
    // budgets, in both rounds.
    double percent = 0;
    if (!parsePercent(environment.autotuneTargetError, percent) || percent > 50)
      return Status::error(
          ErrorKind::InvalidArgument,
          "TILEC_AUTOTUNE_TARGET_ERROR must be a percentage from 0 to 50 "
          "(e.g. 0.5; 0: repetitions fill the budget), got '" +
              environment.autotuneTargetError + "'");
    options.tuning.benchmark.targetError = percent / 100;
  }
  return options;
}

Session::Session() = default;
// The members free device memory and modules in the session's context,
// which need not be current on the destroying thread (another session's,
// or none, may be).
Session::~Session() {
  if (context_)
    (void)context_->makeCurrent();
}

Result<std::unique_ptr<Session>> Session::create(SessionOptions options) {
  std::unique_ptr<Session> session(new Session());
  session->device_ = options.device;
  auto context = options.driver
                     ? Context::create(*options.driver, options.device)
                     : Context::create(options.device);
  if (!context)
    return context.status();
  session->context_ = std::make_unique<Context>(std::move(*context));

  // A strict bundle answers every call: nothing would read a cache or
  // compile, and a deployed program must not touch the disk for them.
  bool bundleOnly =
      options.bundle && options.bundlePolicy == BundlePolicy::Strict;
  if (!bundleOnly && !options.stageCacheDirectory.empty())
    session->stageCache_ = std::make_shared<StageCache>(
        options.stageCacheDirectory, options.remote);
  if (!bundleOnly && options.compiler)
    session->compiler_ = options.compiler(session->stageCache_);
  session->provider_ = std::make_unique<KernelProvider>(
      *session->context_, session->compiler_.get(), session->stageCache_);
  if (options.bundle)
    TILEC_RETURN_IF_ERROR(
        session->provider_->setBundle(options.bundle, options.bundlePolicy));

  session->autotuneCache_ = std::make_unique<AutotuneCache>(
      options.autotuneCachePath, options.remote);
  if (!bundleOnly)
    TILEC_RETURN_IF_ERROR(session->autotuneCache_->load());
  session->autotuner_ = std::make_unique<Autotuner>(
      *session->provider_, *session->autotuneCache_, std::move(options.pins),
      std::move(options.tuning));
  session->sparse_ = std::make_unique<sparse::SparseEngine>(
      *session->provider_, *session->autotuner_, *session->autotuneCache_);
  return session;
}

} // namespace tilec::rt
