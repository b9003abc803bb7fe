//===- DriverTest.cpp - Loading the driver where there may be none --------===//
//
// These run everywhere: on a machine without a GPU they check that the
// absence of a driver is a clean error, not a loader failure.
//
//===----------------------------------------------------------------------===//

#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Context.h"

#include <gtest/gtest.h>

#include <string>

#include <unistd.h>

namespace {

using tilec::rt::Driver;
using tilec::Result;

TEST(DriverTest, MissingLibraryIsACleanError) {
  Result<std::unique_ptr<Driver>> driver =
      Driver::load("libtilec-no-such-driver.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.message().rfind("no CUDA driver: "
                                   "libtilec-no-such-driver.so.1 not found (",
                                   0),
            0u)
      << driver.message();
  EXPECT_NE(driver.message().find("cannot open shared object file"),
            std::string::npos)
      << driver.message();
}

// Whatever this machine has, the process driver and a context agree on it:
// both succeed, or both carry the same message (the failure is cached).
TEST(DriverTest, ProcessDriverFailureIsCachedAndShared) {
  Result<const Driver *> first = Driver::get();
  Result<const Driver *> second = Driver::get();
  ASSERT_EQ(first.ok(), second.ok());
  Result<tilec::rt::Context> context = tilec::rt::Context::create(0);
  if (first.ok()) {
    EXPECT_EQ(*first, *second);
    if (!context.ok()) {
      EXPECT_NE(context.message().find("CUDA"), std::string::npos);
    }
    return;
  }
  std::cout << "no driver here: " << first.message() << "\n";
  EXPECT_EQ(first.message(), second.message());
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.message(), first.message());
}

// The stub's soname is libcuda.so.1: once it is loaded, dlopen("libcuda.so.1")
// in the same process finds it. The test above therefore comes first (ctest
// also runs every test in a process of its own).
TEST(DriverTest, TheToolkitStubIsReportedAsAStub) {
  std::string stub = TILEC_TEST_CUDA_STUB_LIBRARY;
  if (stub.empty())
    GTEST_SKIP() << "the CUDA toolkit's stub libcuda.so was not found at "
                    "configure time";
  // The test binary may run on another machine than the one it was built on.
  if (access(stub.c_str(), R_OK) != 0)
    GTEST_SKIP() << stub << " does not exist on this machine";
  Result<std::unique_ptr<Driver>> driver = Driver::load(stub);
  ASSERT_TRUE(driver.ok()) << driver.message();
  tilec::Status status = (*driver)->initialize();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "cuInit failed: CUDA_ERROR_STUB_LIBRARY (CUDA driver is a stub "
            "library): " +
                stub +
                " is the CUDA toolkit's stub library, not a driver (is the "
                "NVIDIA driver installed?)");
}

TEST(DriverTest, DescribesErrorsWithoutADriver) {
  EXPECT_EQ(tilec::rt::describeCudaError(nullptr, CUDA_ERROR_INVALID_IMAGE),
            "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)");
  EXPECT_EQ(tilec::rt::describeCudaError(nullptr, static_cast<CUresult>(12345)),
            "CUresult 12345 (no description from the driver)");
}

} // namespace
