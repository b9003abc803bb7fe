//===- ArgPackTest.cpp - Argument types, layout, conversions, errors ------===//

#include "tilec/runtime/ArgPack.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

// Counts heap allocations so that the tests can check that setting arguments
// allocates nothing (the launch path must not). GCC warns that memory from a
// replaced operator new reaches free(), which is exactly what this pair does.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<size_t> allocationCount{0};

void *operator new(size_t size) {
  ++allocationCount;
  if (void *p = std::malloc(size ? size : 1))
    return p;
  std::abort();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

using tilec::rt::ArgPack;
using tilec::ArgType;
using tilec::rt::DevicePtr;
using tilec::KernelArg;
using tilec::Result;
using tilec::Status;

KernelArg arg(const char *name, const char *spelling) {
  Result<ArgType> type = tilec::parseArgType(spelling);
  EXPECT_TRUE(type.ok()) << type.message();
  return KernelArg{name, spelling, type.ok() ? *type : ArgType::Ptr};
}

ArgPack makePack(std::vector<KernelArg> signature) {
  Result<ArgPack> pack = ArgPack::create(std::move(signature));
  EXPECT_TRUE(pack.ok()) << pack.message();
  return std::move(*pack);
}

template <typename T> T readArg(const ArgPack &pack, size_t index) {
  T value;
  std::memcpy(&value, pack.kernelParams()[index], sizeof(T));
  return value;
}

TEST(ArgTypeTest, ParsesEverySpelling) {
  struct Case {
    const char *spelling;
    ArgType type;
    size_t size;
  };
  const Case cases[] = {
      {"ptr", ArgType::Ptr, 8},          {"ptr<f16>", ArgType::Ptr, 8},
      {"ptr<ptr<i8>>", ArgType::Ptr, 8}, {"i8", ArgType::I8, 1},
      {"i16", ArgType::I16, 2},          {"i32", ArgType::I32, 4},
      {"i64", ArgType::I64, 8},          {"u8", ArgType::U8, 1},
      {"u16", ArgType::U16, 2},          {"u32", ArgType::U32, 4},
      {"u64", ArgType::U64, 8},          {"f16", ArgType::F16, 2},
      {"bf16", ArgType::BF16, 2},        {"f32", ArgType::F32, 4},
      {"f64", ArgType::F64, 8},
  };
  for (const Case &c : cases) {
    Result<ArgType> type = tilec::parseArgType(c.spelling);
    ASSERT_TRUE(type.ok()) << c.spelling << ": " << type.message();
    EXPECT_EQ(*type, c.type) << c.spelling;
    EXPECT_EQ(tilec::argTypeSize(*type), c.size) << c.spelling;
  }
  EXPECT_STREQ(tilec::argTypeName(ArgType::BF16), "bf16");
}

TEST(ArgTypeTest, RejectsUnknownSpellings) {
  for (const char *bad : {"", "q32", "ptr<", "ptr<>", "int", "I32", "f8"}) {
    Result<ArgType> type = tilec::parseArgType(bad);
    ASSERT_FALSE(type.ok()) << "'" << bad << "' was accepted";
    EXPECT_NE(
        type.message().find("unknown argument type '" + std::string(bad) + "'"),
        std::string::npos)
        << type.message();
  }
}

TEST(ArgPackTest, LaysArgumentsOutAtTheirNaturalAlignment) {
  ArgPack pack =
      makePack({arg("p", "ptr<f16>"), arg("a", "i32"), arg("h", "f16"),
                arg("b", "i64"), arg("c", "u8"), arg("d", "f64"),
                arg("e", "bf16"), arg("f", "u16"), arg("g", "f32")});
  const size_t expected[] = {0, 8, 12, 16, 24, 32, 40, 42, 44};
  ASSERT_EQ(pack.size(), 9u);
  const auto *base = static_cast<const unsigned char *>(pack.buffer());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 8, 0u);
  for (size_t i = 0; i < pack.size(); ++i) {
    EXPECT_EQ(pack.offset(i), expected[i]) << "argument " << i;
    EXPECT_EQ(pack.kernelParams()[i], base + expected[i]) << "argument " << i;
    size_t size = tilec::argTypeSize(pack.signature()[i].type);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pack.kernelParams()[i]) % size, 0u)
        << "argument " << i << " is misaligned";
  }
  EXPECT_EQ(pack.bufferSize(), 48u);
}

TEST(ArgPackTest, EmptySignature) {
  ArgPack pack = makePack({});
  EXPECT_EQ(pack.size(), 0u);
  EXPECT_TRUE(pack.complete());
  EXPECT_EQ(pack.bufferSize(), 0u);
  EXPECT_TRUE(pack.bind().ok());
}

TEST(ArgPackTest, StoresIntegersAtTheirWidth) {
  ArgPack pack = makePack({arg("a", "i8"), arg("b", "i16"), arg("c", "i32"),
                           arg("d", "i64"), arg("e", "u8"), arg("f", "u16"),
                           arg("g", "u32"), arg("h", "u64")});
  ASSERT_TRUE(pack.setInt(0, -128).ok());
  ASSERT_TRUE(pack.setInt(1, -32768).ok());
  ASSERT_TRUE(pack.setInt(2, -5).ok());
  ASSERT_TRUE(pack.setInt(3, INT64_MIN).ok());
  ASSERT_TRUE(pack.setUInt(4, 255).ok());
  ASSERT_TRUE(pack.setUInt(5, 65535).ok());
  ASSERT_TRUE(pack.setUInt(6, 4000000000u).ok());
  ASSERT_TRUE(pack.setUInt(7, UINT64_MAX).ok());
  EXPECT_EQ(readArg<int8_t>(pack, 0), -128);
  EXPECT_EQ(readArg<int16_t>(pack, 1), -32768);
  EXPECT_EQ(readArg<int32_t>(pack, 2), -5);
  EXPECT_EQ(readArg<int64_t>(pack, 3), INT64_MIN);
  EXPECT_EQ(readArg<uint8_t>(pack, 4), 255);
  EXPECT_EQ(readArg<uint16_t>(pack, 5), 65535);
  EXPECT_EQ(readArg<uint32_t>(pack, 6), 4000000000u);
  EXPECT_EQ(readArg<uint64_t>(pack, 7), UINT64_MAX);
  EXPECT_TRUE(pack.complete());
}

TEST(ArgPackTest, RejectsIntegersOutOfRange) {
  ArgPack pack = makePack({arg("n", "i32"), arg("m", "u8"), arg("k", "i64")});
  Status status = pack.setInt(0, 5000000000);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument 0 'n' (i32): 5000000000 is out of "
                              "range [-2147483648, 2147483647]");
  status = pack.setInt(1, -1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "argument 1 'm' (u8): -1 is out of range [0, 255]");
  status = pack.setUInt(2, UINT64_MAX);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("18446744073709551615 is out of range"),
            std::string::npos)
      << status.message();
  // A rejected value leaves the argument unset.
  EXPECT_FALSE(pack.isSet(0));
  EXPECT_FALSE(pack.complete());
}

TEST(ArgPackTest, ConvertsFloatingPointValues) {
  ArgPack pack = makePack(
      {arg("h", "f16"), arg("b", "bf16"), arg("f", "f32"), arg("d", "f64")});
  struct HalfCase {
    double value;
    uint16_t bits;
  };
  const HalfCase halves[] = {
      {1.0, 0x3C00},
      {-2.0, 0xC000},
      {65504.0, 0x7BFF},
      {65520.0, 0x7C00}, // rounds to infinity
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {1.0 / 3.0, 0x3555},
      {6.103515625e-05, 0x0400},        // smallest normal
      {5.960464477539063e-08, 0x0001},  // smallest subnormal
      {2.9802322387695312e-08, 0x0000}, // 2^-25 ties to even: zero
      {1.0009765625, 0x3C01},           // 1 + 2^-10 is exact
      {1.00048828125, 0x3C00},          // 1 + 2^-11 ties to even (down)
      {1.00146484375, 0x3C02},          // 1 + 3*2^-11 ties to even (up)
  };
  for (const HalfCase &c : halves) {
    ASSERT_TRUE(pack.setFloat(0, c.value).ok());
    EXPECT_EQ(readArg<uint16_t>(pack, 0), c.bits) << "f16 of " << c.value;
  }
  ASSERT_TRUE(pack.setFloat(0, std::numeric_limits<double>::infinity()).ok());
  EXPECT_EQ(readArg<uint16_t>(pack, 0), 0x7C00);
  ASSERT_TRUE(pack.setFloat(0, std::numeric_limits<double>::quiet_NaN()).ok());
  EXPECT_EQ(readArg<uint16_t>(pack, 0) & 0x7C00, 0x7C00);
  EXPECT_NE(readArg<uint16_t>(pack, 0) & 0x03FF, 0);

  struct BFloatCase {
    double value;
    uint16_t bits;
  };
  const BFloatCase bfloats[] = {
      {1.0, 0x3F80}, {-2.0, 0xC000}, {3.14159265, 0x4049}, {0.1, 0x3DCD}};
  for (const BFloatCase &c : bfloats) {
    ASSERT_TRUE(pack.setFloat(1, c.value).ok());
    EXPECT_EQ(readArg<uint16_t>(pack, 1), c.bits) << "bf16 of " << c.value;
  }

  ASSERT_TRUE(pack.setFloat(2, 0.1).ok());
  EXPECT_EQ(readArg<float>(pack, 2), 0.1f);
  ASSERT_TRUE(pack.setFloat(3, 0.1).ok());
  EXPECT_EQ(readArg<double>(pack, 3), 0.1);
}

TEST(ArgPackTest, RejectsValuesOfTheWrongKind) {
  ArgPack pack =
      makePack({arg("a", "ptr<f16>"), arg("n", "i32"), arg("alpha", "f32")});
  Status status = pack.setInt(0, 42);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument 0 'a' (ptr<f16>): expected a device "
                              "pointer, got an integer");
  status = pack.setPointer(1, DevicePtr{0x1000});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "argument 1 'n' (i32): expected an integer, got a device pointer");
  status = pack.setFloat(1, 1.5);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument 1 'n' (i32): expected an integer, got "
                              "a floating-point value");
  status = pack.setInt(2, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument 2 'alpha' (f32): expected a "
                              "floating-point value, got an integer");
  status = pack.setInt(3, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument index 3 is out of range: the kernel "
                              "takes 3 argument(s)");
}

// Anything with `DevicePtr ptr() const` binds as a pointer, like DeviceBuffer.
struct FakeBuffer {
  DevicePtr ptr() const { return DevicePtr{0xABCD00}; }
};

TEST(ArgPackTest, BindsAllArgumentsInOrder) {
  ArgPack pack = makePack({arg("a", "ptr<f32>"), arg("b", "ptr<f32>"),
                           arg("c", "ptr<f32>"), arg("n", "i32"),
                           arg("s", "f32"), arg("k", "u64")});
  EXPECT_FALSE(pack.complete());
  FakeBuffer buffer;
  Status status = pack.bind(DevicePtr{0x1000}, buffer, nullptr, 1024, 0.5, 7u);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(pack.complete());
  EXPECT_EQ(readArg<uint64_t>(pack, 0), 0x1000u);
  EXPECT_EQ(readArg<uint64_t>(pack, 1), 0xABCD00u);
  EXPECT_EQ(readArg<uint64_t>(pack, 2), 0u);
  EXPECT_EQ(readArg<int32_t>(pack, 3), 1024);
  EXPECT_EQ(readArg<float>(pack, 4), 0.5f);
  EXPECT_EQ(readArg<uint64_t>(pack, 5), 7u);
}

TEST(ArgPackTest, BindChecksArityAndStopsAtTheFirstError) {
  ArgPack pack = makePack({arg("a", "ptr<f32>"), arg("n", "i32")});
  Status status = pack.bind(DevicePtr{0x1000});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "kernel takes 2 argument(s) (a: ptr<f32>, n: i32), got 1");
  status = pack.bind(DevicePtr{0x1000}, 1, 2);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("got 3"), std::string::npos);
  status = pack.bind(7, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "argument 0 'a' (ptr<f32>): expected a device "
                              "pointer, got an integer");
  EXPECT_FALSE(pack.isSet(1)) << "arguments after the error must stay unset";
}

TEST(ArgPackTest, SettingArgumentsDoesNotAllocate) {
  ArgPack pack = makePack({arg("a", "ptr<f32>"), arg("n", "i32"),
                           arg("h", "f16"), arg("x", "f64")});
  FakeBuffer buffer;
  size_t before = allocationCount.load();
  for (int i = 0; i < 100; ++i) {
    Status status = pack.bind(buffer, i, 0.5, 2.0);
    ASSERT_TRUE(status.ok());
    ASSERT_TRUE(pack.setInt(1, -i).ok());
    ASSERT_TRUE(pack.kernelParams() != nullptr);
  }
  EXPECT_EQ(allocationCount.load() - before, 0u);
}

TEST(ArgPackTest, CopiesPointIntoTheirOwnStorage) {
  ArgPack original = makePack({arg("a", "ptr<f32>"), arg("n", "i32")});
  ASSERT_TRUE(original.bind(DevicePtr{0x2000}, 5).ok());
  ArgPack copy = original;
  EXPECT_NE(copy.kernelParams()[1], original.kernelParams()[1]);
  EXPECT_EQ(copy.kernelParams()[1],
            static_cast<const unsigned char *>(copy.buffer()) + copy.offset(1));
  EXPECT_EQ(readArg<int32_t>(copy, 1), 5);
  EXPECT_TRUE(copy.complete());
  ASSERT_TRUE(copy.setInt(1, 6).ok());
  EXPECT_EQ(readArg<int32_t>(original, 1), 5);

  const void *storage = copy.buffer();
  ArgPack moved = std::move(copy);
  EXPECT_EQ(moved.buffer(), storage);
  EXPECT_EQ(readArg<int32_t>(moved, 1), 6);
}

TEST(ArgPackTest, SignatureHashDistinguishesTypeSequences) {
  ArgPack a = makePack({arg("a", "ptr<f32>"), arg("n", "i32")});
  ArgPack b = makePack({arg("x", "ptr<f16>"), arg("m", "i32")});
  ArgPack c = makePack({arg("a", "ptr<f32>"), arg("n", "i64")});
  ArgPack d = makePack({arg("a", "ptr<f32>")});
  // Names and pointee types do not change the ABI; widths do.
  EXPECT_EQ(a.signatureHash(), b.signatureHash());
  EXPECT_NE(a.signatureHash(), c.signatureHash());
  EXPECT_NE(a.signatureHash(), d.signatureHash());
}

} // namespace

// A value that breaks the kernel's specialization would run code compiled for
// other values (wider vectors, folded masks, a constant 1): refused, with the
// argument and the reason.
TEST(ArgPackTest, RefusesValuesThatBreakTheSpecialization) {
  KernelArg pointer = arg("a", "ptr<f16>");
  pointer.divisibility = 16;
  KernelArg stride = arg("stride_am", "i32");
  stride.divisibility = 16;
  KernelArg one = arg("stride_k", "i64");
  one.equalToOne = true;
  ArgPack pack = makePack({pointer, stride, one});

  EXPECT_TRUE(pack.setPointer(0, DevicePtr{0x7f0000001000}).ok());
  EXPECT_TRUE(pack.setPointer(0, DevicePtr{0}).ok());
  Status misaligned = pack.setPointer(0, DevicePtr{0x7f0000001008});
  ASSERT_FALSE(misaligned.ok());
  EXPECT_EQ(misaligned.message(),
            "argument 0 'a' (ptr<f16>): address " +
                std::to_string(0x7f0000001008ull) +
                " is not a multiple of 16, which this kernel was specialized "
                "for; use a kernel compiled without that specialization");

  EXPECT_TRUE(pack.setInt(1, 4096).ok());
  EXPECT_TRUE(pack.setInt(1, -32).ok());
  EXPECT_TRUE(pack.setUInt(1, 0).ok());
  Status odd = pack.setInt(1, 100);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.message().find("argument 1 'stride_am' (i32): 100 is not a "
                               "multiple of 16"),
            std::string::npos)
      << odd.message();
  EXPECT_FALSE(pack.setInt(1, -33).ok());
  EXPECT_EQ(readArg<int32_t>(pack, 1), 0) << "a refused value is not stored";

  EXPECT_TRUE(pack.setInt(2, 1).ok());
  Status two = pack.setInt(2, 2);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.message().find("'stride_k' (i64): 2 is not 1"),
            std::string::npos)
      << two.message();
  EXPECT_FALSE(pack.setInt(2, -1).ok());
  EXPECT_TRUE(pack.bind(DevicePtr{0x1000}, 16, 1).ok());
  EXPECT_FALSE(pack.bind(DevicePtr{0x1000}, 16, 3).ok());
}
