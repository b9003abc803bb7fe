//===- ArgPackTest.cpp - Argument types, layout, conversions, errors ------===//

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Driver.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
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

using tilec::ArgType;
using tilec::KernelArg;
using tilec::Result;
using tilec::Status;
using tilec::TensorMapParam;
using tilec::rt::ArgPack;
using tilec::rt::DevicePtr;

KernelArg arg(const char *name, const char *spelling) {
  Result<ArgType> type = tilec::parseArgType(spelling);
  EXPECT_TRUE(type.ok()) << type.message();
  return KernelArg{name, spelling, type.ok() ? *type : ArgType::Ptr};
}

ArgPack makePack(std::vector<KernelArg> signature,
                 std::vector<TensorMapParam> tensorMaps = {}) {
  Result<ArgPack> pack =
      ArgPack::create(std::move(signature), std::move(tensorMaps));
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

namespace {

// A matmul's A and B through TMA: the arguments end at byte 38, so the maps
// sit at 64 and 192.
std::vector<KernelArg> tmaSignature() {
  return {arg("a", "ptr<f16>"), arg("b", "ptr<bf16>"), arg("M", "i32"),
          arg("N", "u32"),      arg("K", "i64"),       arg("stride_am", "i32"),
          arg("alpha", "f16")};
}

std::vector<TensorMapParam> tmaMaps() {
  return {{"a", "M", "K", "stride_am", "f16", 128, 64, 128},
          {"b", "K", "N", "N", "bf16", 64, 64, 128}};
}

const unsigned char *mapBytes(const ArgPack &pack, size_t map) {
  return static_cast<const unsigned char *>(
      pack.kernelParams()[pack.size() + map]);
}

bool allZero(const unsigned char *bytes, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (bytes[i] != 0)
      return false;
  return true;
}

TEST(ArgPackTest, LaysTensorMapsOutAfterTheArgumentsAt64Bytes) {
  ArgPack pack = makePack(tmaSignature(), tmaMaps());
  // The maps are hidden: the user's arguments are the signature's.
  ASSERT_EQ(pack.size(), 7u);
  ASSERT_EQ(pack.tensorMapCount(), 2u);
  EXPECT_TRUE(pack.hasTensorMaps());
  EXPECT_EQ(pack.offset(6), 36u);
  EXPECT_EQ(pack.tensorMapOffset(0), 64u);
  EXPECT_EQ(pack.tensorMapOffset(1), 192u);
  EXPECT_EQ(pack.bufferSize(), 320u);
  const auto *base = static_cast<const unsigned char *>(pack.buffer());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u)
      << "the parameter buffer must hold 64-byte aligned maps";
  for (size_t j = 0; j < pack.tensorMapCount(); ++j) {
    EXPECT_EQ(pack.kernelParams()[pack.size() + j],
              base + pack.tensorMapOffset(j))
        << "map " << j;
    EXPECT_TRUE(allZero(mapBytes(pack, j), 128)) << "map " << j;
  }
  EXPECT_EQ(pack.kernelParams()[pack.size() + 2], nullptr);

  EXPECT_FALSE(pack.complete());
  Status status =
      pack.bind(DevicePtr{0x1000}, DevicePtr{0x2000}, 100, 200u, 300, 320, 1.0);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(pack.complete());
  EXPECT_EQ(readArg<int32_t>(pack, 5), 320);
  status = pack.bind(DevicePtr{0x1000}, DevicePtr{0x2000}, 100, 200u, 300, 320,
                     1.0, DevicePtr{0x3000}, DevicePtr{0x4000});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().rfind("kernel takes 7 argument(s) (", 0), 0u)
      << status.message();
  EXPECT_FALSE(pack.setPointer(7, DevicePtr{0x3000}).ok())
      << "a map is no argument";

  // Without maps the layout is what it was.
  ArgPack plain = makePack(tmaSignature());
  EXPECT_EQ(plain.tensorMapCount(), 0u);
  EXPECT_FALSE(plain.hasTensorMaps());
  EXPECT_EQ(plain.bufferSize(), 38u);
  EXPECT_EQ(plain.kernelParams()[plain.size()], nullptr);
}

TEST(ArgPackTest, CopiesPointIntoTheirOwnTensorMapSlots) {
  ArgPack original = makePack(tmaSignature(), tmaMaps());
  ASSERT_TRUE(
      original
          .bind(DevicePtr{0x1000}, DevicePtr{0x2000}, 100, 200u, 300, 320, 1.0)
          .ok());
  // Stands in for an encoded map.
  std::memset(original.kernelParams()[original.size() + 1], 0xA5, 128);

  auto checkOwnSlots = [](const ArgPack &pack) {
    const auto *base = static_cast<const unsigned char *>(pack.buffer());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
    for (size_t j = 0; j < pack.tensorMapCount(); ++j)
      EXPECT_EQ(pack.kernelParams()[pack.size() + j],
                base + pack.tensorMapOffset(j));
  };
  ArgPack copy = original;
  checkOwnSlots(copy);
  EXPECT_NE(copy.buffer(), original.buffer());
  EXPECT_EQ(copy.tensorMapCount(), 2u);
  EXPECT_EQ(copy.tensorMaps()[1].base, "b");
  EXPECT_EQ(std::memcmp(mapBytes(copy, 1), mapBytes(original, 1), 128), 0);
  EXPECT_TRUE(allZero(mapBytes(copy, 0), 128));
  EXPECT_EQ(copy.signatureHash(), original.signatureHash());

  ArgPack assigned = makePack({arg("x", "i32")});
  assigned = original;
  checkOwnSlots(assigned);
  EXPECT_NE(assigned.buffer(), original.buffer());
  EXPECT_EQ(std::memcmp(mapBytes(assigned, 1), mapBytes(original, 1), 128), 0);
  EXPECT_TRUE(assigned.complete());

  const void *storage = copy.buffer();
  ArgPack moved = std::move(copy);
  EXPECT_EQ(moved.buffer(), storage);
  checkOwnSlots(moved);
}

// A loaded function may take its maps elsewhere than at multiples of 64
// (sm_90: 48 past one): the pack moves them there and keeps the arguments.
TEST(ArgPackTest, PlacesTensorMapsWhereTheFunctionTakesThem) {
  ArgPack pack = makePack(tmaSignature(), tmaMaps());
  ASSERT_TRUE(
      pack.bind(DevicePtr{0x1000}, DevicePtr{0x2000}, 100, 200u, 300, 320, 1.0)
          .ok());
  Status status = pack.placeTensorMaps({48, 176});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(pack.tensorMapOffset(0), 48u);
  EXPECT_EQ(pack.tensorMapOffset(1), 176u);
  EXPECT_EQ(pack.bufferSize(), 304u);
  const auto *base = static_cast<const unsigned char *>(pack.buffer());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  EXPECT_EQ(pack.kernelParams()[7], base + 48);
  EXPECT_EQ(pack.kernelParams()[8], base + 176);
  EXPECT_TRUE(allZero(mapBytes(pack, 0), 128));
  EXPECT_TRUE(pack.complete());
  EXPECT_EQ(readArg<uint64_t>(pack, 1), 0x2000u);
  EXPECT_EQ(readArg<int32_t>(pack, 5), 320);
  ArgPack copy = pack;
  EXPECT_EQ(copy.kernelParams()[8],
            static_cast<const unsigned char *>(copy.buffer()) + 176);

  // In any order, as long as they stay apart.
  ASSERT_TRUE(pack.placeTensorMaps({176, 48}).ok());
  EXPECT_EQ(pack.bufferSize(), 304u);
  EXPECT_EQ(pack.placeTensorMaps({48}).message(),
            "placing 2 tensor map(s) at 1 offset(s)");
  EXPECT_EQ(pack.placeTensorMaps({32, 176}).message(),
            "tensor map 0 (a: M x K, row stride stride_am) at offset 32 would "
            "overlap the arguments, which end at 38");
  EXPECT_EQ(pack.placeTensorMaps({48, 160}).message(),
            "tensor map 1 (b: K x N, row stride N) at offset 160 would overlap "
            "tensor map 0 at offset 48");
}

TEST(ArgPackTest, RefusesTensorMapsThatNameNoFittingArgument) {
  struct Case {
    TensorMapParam map;
    const char *message;
  };
  const Case cases[] = {
      {{"a", "Q", "K", "stride_am", "f16", 128, 64, 128},
       "tensor map 0 (a: Q x K, row stride stride_am): rows names 'Q', which "
       "is not an argument of the kernel"},
      {{"c", "M", "K", "stride_am", "f16", 128, 64, 128},
       "tensor map 0 (c: M x K, row stride stride_am): base names 'c', which "
       "is not an argument of the kernel"},
      {{"M", "M", "K", "stride_am", "f16", 128, 64, 128},
       "tensor map 0 (M: M x K, row stride stride_am): base names 'M' (i32), "
       "which is not a pointer argument"},
      {{"a", "M", "alpha", "stride_am", "f16", 128, 64, 128},
       "tensor map 0 (a: M x alpha, row stride stride_am): cols names 'alpha' "
       "(f16), which is not an integer argument"},
      {{"a", "M", "K", "stride_am", "i32", 128, 64, 128},
       "tensor map 0 (a: M x K, row stride stride_am): element must be "
       "\"f16\", \"bf16\" or \"f32\", got \"i32\""},
      {{"a", "M", "K", "stride_am", "f16", 0, 64, 128},
       "tensor map 0 (a: M x K, row stride stride_am): box_rows must be in "
       "[1, 256], got 0"},
      {{"a", "M", "K", "stride_am", "f16", 128, 64, 96},
       "tensor map 0 (a: M x K, row stride stride_am): swizzle must be 0, 32, "
       "64 or 128, got 96"},
  };
  for (const Case &c : cases) {
    Result<ArgPack> pack = ArgPack::create(tmaSignature(), {c.map});
    ASSERT_FALSE(pack.ok()) << c.message;
    EXPECT_EQ(pack.message(), c.message);
    EXPECT_EQ(pack.status().kind(), tilec::ErrorKind::InvalidArgument);
  }
  // The first map that does not resolve is named by its index.
  std::vector<TensorMapParam> maps = tmaMaps();
  maps[1].cols = "n";
  Result<ArgPack> pack = ArgPack::create(tmaSignature(), maps);
  ASSERT_FALSE(pack.ok());
  EXPECT_EQ(pack.message().rfind("tensor map 1 (b: K x n, row stride N): "
                                 "cols names 'n'",
                                 0),
            0u)
      << pack.message();
}

// A pack built without the kernel's maps, or with others, has another hash,
// so launch() refuses it rather than passing too few parameters.
TEST(ArgPackTest, SignatureHashCoversTheTensorMaps) {
  std::vector<KernelArg> signature = tmaSignature();
  uint64_t bare = ArgPack::hashSignature(signature);
  uint64_t withMaps = ArgPack::hashSignature(signature, tmaMaps());
  EXPECT_NE(bare, withMaps);
  EXPECT_EQ(ArgPack::hashSignature(signature, {}), bare);
  EXPECT_EQ(makePack(signature).signatureHash(), bare);
  EXPECT_EQ(makePack(signature, tmaMaps()).signatureHash(), withMaps);

  std::vector<TensorMapParam> oneMap = {tmaMaps()[0]};
  EXPECT_NE(ArgPack::hashSignature(signature, oneMap), withMaps);
  EXPECT_NE(ArgPack::hashSignature(signature, oneMap), bare);
  auto changed = [&](auto change) {
    std::vector<TensorMapParam> maps = tmaMaps();
    change(maps[0]);
    return ArgPack::hashSignature(signature, maps);
  };
  EXPECT_NE(changed([](TensorMapParam &m) { m.rows = "N"; }), withMaps);
  EXPECT_NE(changed([](TensorMapParam &m) { m.element = "bf16"; }), withMaps);
  EXPECT_NE(changed([](TensorMapParam &m) { m.boxRows = 64; }), withMaps);
  EXPECT_NE(changed([](TensorMapParam &m) { m.boxCols = 32; }), withMaps);
  EXPECT_NE(changed([](TensorMapParam &m) { m.swizzleBytes = 64; }), withMaps);
  // Names do not change the ABI, as for the arguments: positions do.
  std::vector<KernelArg> renamed = signature;
  renamed[0].name = "a_ptr";
  std::vector<TensorMapParam> maps = tmaMaps();
  maps[0].base = "a_ptr";
  EXPECT_EQ(ArgPack::hashSignature(renamed, maps), withMaps);
}

// The toolkit's stub libcuda: enough to reach encodeTensorMaps' own checks,
// which come before the driver's call; the call itself fails on the stub.
std::unique_ptr<tilec::rt::Driver> stubDriver() {
  std::string stub = TILEC_TEST_CUDA_STUB_LIBRARY;
  if (stub.empty() || access(stub.c_str(), R_OK) != 0)
    return nullptr;
  Result<std::unique_ptr<tilec::rt::Driver>> driver =
      tilec::rt::Driver::load(stub);
  EXPECT_TRUE(driver.ok()) << driver.message();
  return driver.ok() ? std::move(*driver) : nullptr;
}

TEST(ArgPackTest, EncodingRefusesValuesNoTensorMapCanTake) {
  std::unique_ptr<tilec::rt::Driver> driver = stubDriver();
  if (!driver)
    GTEST_SKIP() << "the CUDA toolkit's stub libcuda.so is not here";
  ArgPack pack = makePack(tmaSignature(), tmaMaps());
  const std::string a = "tensor map 0 (a: M x K, row stride stride_am): ";
  auto refusal = [&] {
    Status status = pack.encodeTensorMaps(*driver);
    EXPECT_FALSE(status.ok());
    return status.message();
  };
  ASSERT_TRUE(pack.setPointer(0, DevicePtr{0x7f0000000000}).ok());
  EXPECT_EQ(refusal(), a + "rows 'M' is not set");
  ASSERT_TRUE(pack.bind(DevicePtr{0x7f0000000000}, DevicePtr{0x7f0000100000}, 0,
                        256u, 64, 64, 1.0)
                  .ok());
  EXPECT_EQ(refusal(), a + "rows 'M' is 0: a tensor map's array needs at "
                           "least one row and one column (skip the launch of "
                           "an empty problem)");
  ASSERT_TRUE(pack.setInt(2, -5).ok());
  EXPECT_EQ(refusal().rfind(a + "rows 'M' is -5: ", 0), 0u);
  ASSERT_TRUE(pack.setInt(2, 1000).ok());
  ASSERT_TRUE(pack.setInt(4, -64).ok());
  EXPECT_EQ(refusal().rfind(a + "cols 'K' is -64: ", 0), 0u);
  ASSERT_TRUE(pack.setInt(4, 64).ok());
  ASSERT_TRUE(pack.setInt(5, -64).ok());
  EXPECT_EQ(refusal(), a + "row_stride 'stride_am' is -64: a tensor map's "
                           "rows must be at increasing addresses");
  // checkTiledArray2D's rules, in elements turned into bytes.
  ASSERT_TRUE(pack.setInt(5, 60).ok());
  EXPECT_EQ(refusal(), a + "row stride of 120 bytes is not a multiple of 16");
  ASSERT_TRUE(pack.setInt(5, 64).ok());
  ASSERT_TRUE(pack.setPointer(0, DevicePtr{0x7f0000000008}).ok());
  EXPECT_EQ(refusal(), a + "base address " + std::to_string(0x7f0000000008ull) +
                           " is not a multiple of 16 bytes");
  ASSERT_TRUE(pack.setPointer(0, DevicePtr{0x7f0000000000}).ok());

  // Map 0's values pass every rule: the stub's cuTensorMapEncodeTiled
  // fails, said with the map, and the slot stays zero.
  std::string message = refusal();
  EXPECT_EQ(message.rfind(a + "cuTensorMapEncodeTiled failed: ", 0), 0u)
      << message;
  EXPECT_TRUE(allZero(mapBytes(pack, 0), 128));
  EXPECT_TRUE(allZero(mapBytes(pack, 1), 128));
  // A failure is not cached: the same values are tried again.
  EXPECT_EQ(refusal(), message);

  // A row stride whose bytes could overflow is refused before multiplying.
  ArgPack wide =
      makePack({arg("a", "ptr<f32>"), arg("M", "i32"), arg("stride", "i64")},
               {{"a", "M", "M", "stride", "f32", 8, 8, 0}});
  ASSERT_TRUE(wide.bind(DevicePtr{0x7f0000000000}, 8, int64_t(1) << 62).ok());
  Status status = wide.encodeTensorMaps(*driver);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "tensor map 0 (a: M x M, row stride stride): row_stride 'stride' "
            "of 4611686018427387904 elements is more than the driver's limit "
            "of 2^40 bytes");
}

} // namespace
