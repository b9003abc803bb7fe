//===- Sha256Test.cpp - The runtime's SHA-256 -----------------------------===//

#include "tilec/runtime/Sha256.h"

#include <gtest/gtest.h>

#include <string>

using tilec::rt::Sha256;

namespace {

// FIPS 180-2, appendix B, and the empty message.
TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(Sha256::hashHex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::hashHex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hashHex(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hashHex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Messages whose padding needs one or two extra blocks.
TEST(Sha256, PaddingBoundaries) {
  EXPECT_EQ(Sha256::hashHex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Sha256::hashHex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Sha256::hashHex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

// Feeding a message in pieces of any size gives the one-shot digest.
TEST(Sha256, StreamingMatchesOneShot) {
  std::string message;
  for (int i = 0; i < 1000; ++i)
    message += char(i * 7 + 3);
  Sha256::Digest expected = Sha256::hash(message);
  for (size_t piece : {1u, 3u, 63u, 64u, 65u, 127u, 999u}) {
    Sha256 sha;
    for (size_t offset = 0; offset < message.size(); offset += piece)
      sha.update(message.substr(offset, piece));
    EXPECT_EQ(sha.finish(), expected) << "pieces of " << piece;
  }
  // finish() resets.
  Sha256 sha;
  sha.update("junk");
  (void)sha.finish();
  sha.update("abc");
  EXPECT_EQ(tilec::rt::toHex(sha.finish()), Sha256::hashHex("abc"));
}

} // namespace
