//===- runtime_consumer.cpp - tilec::runtime alone ------------------------===//
//
// Links tilec::runtime only (the launch library and the kernel contract), as
// a program that runs precompiled kernels does, with no LLVM: the contract
// derives a launch grid, the file layer writes and reads back, and the
// driver opens device 0 or says why it cannot.
//
//===----------------------------------------------------------------------===//

#include "check.h"

#include "tilec/contract/Config.h"
#include "tilec/contract/KernelDescription.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/FileIO.h"

#include <string>

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: %s <scratch directory>", argv[0]);

  auto config = tilec::Config::parse("num_warps=8,BLOCK=256");
  CHECK(config, "%s", config.message().c_str());
  tilec::KernelDescription description("scale", "scale.cpp", 1);
  description.param(tilec::MetaParameter("BLOCK").powerOfTwo())
      .arg(tilec::pointer("x", "f32"))
      .arg(tilec::scalar("n", "i32"))
      .grid({"cdiv(n, BLOCK)"});
  tilec::Call call;
  call.sizes = {{"n", 1000}};
  auto grid = description.evaluateGrid(*config, call);
  CHECK(grid, "%s", grid.message().c_str());
  CHECK(grid->x == 4 && grid->y == 1 && grid->z == 1, "grid %u %u %u", grid->x,
        grid->y, grid->z);
  auto parsed = tilec::KernelDescription::fromJson(description.toJson());
  CHECK(parsed, "%s", parsed.message().c_str());
  CHECK(parsed->toJson() == description.toJson(), "%s",
        parsed->toJson().c_str());

  std::string directory = std::string(argv[1]) + "/runtime_consumer";
  tilec::Status made = tilec::rt::makeDirectories(directory);
  CHECK(made.ok(), "%s", made.message().c_str());
  std::string path = directory + "/file";
  tilec::Status written = tilec::rt::writeFileAtomically(path, "tilec");
  CHECK(written.ok(), "%s", written.message().c_str());
  auto read = tilec::rt::readFile(path);
  CHECK(read && *read == "tilec", "%s",
        read ? read->c_str() : read.message().c_str());

  auto context = tilec::rt::Context::create(0);
  if (context) {
    std::printf("device 0: %s (%s)\n", context->properties().name.c_str(),
                context->properties().smName().c_str());
  } else {
    CHECK(!context.message().empty(), "a failed Context::create says why");
    std::printf("no device: %s\n", context.message().c_str());
  }
  return 0;
}
