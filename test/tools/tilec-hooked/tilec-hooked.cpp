//===- tilec-hooked.cpp - tilec with the stage cache's test hooks ---------===//
//
// The cache tests need a `tilec compile` that stops while it holds a
// stage's lease (SharedCacheToolTest: others start while it does) or dies
// between writing an entry and renaming it (lit's Tools/cache.test). The
// shipped tool has no such hooks; this test-only one runs the same command
// line after its own flags, which set StageCache::TestHooks:
//
//   tilec-hooked [--stop-with-lease=STAGE] [--crash-before-rename=STAGE]
//                <tilec arguments>
//
// --stop-with-lease stops the process (SIGSTOP) right after it took STAGE's
// lease on the shared tier; --crash-before-rename makes it _exit(86) after
// writing STAGE's temporary file, before the rename. Every process of a
// test that shares cache entries runs this binary: the stage keys name the
// compiler's binary, so tilec's entries are not this one's.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/runtime/StageCache.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

// STAGE when `argument` is `flag`STAGE.
bool takeFlag(std::string_view argument, std::string_view flag,
              std::string &stage) {
  if (argument.substr(0, flag.size()) != flag)
    return false;
  stage = std::string(argument.substr(flag.size()));
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string stopStage, crashStage;
  int first = 1;
  for (; first < argc; ++first)
    if (!takeFlag(argv[first], "--stop-with-lease=", stopStage) &&
        !takeFlag(argv[first], "--crash-before-rename=", crashStage))
      break;
  tilec::rt::StageCache::TestHooks hooks;
  if (!stopStage.empty())
    hooks.afterLease = [stopStage](std::string_view stage) {
      if (stage == stopStage)
        ::raise(SIGSTOP);
    };
  if (!crashStage.empty())
    hooks.beforeRename = [crashStage](std::string_view stage) {
      if (stage != crashStage)
        return;
      std::fprintf(stderr,
                   "tilec-hooked: exiting before the rename of a %s "
                   "entry\n",
                   crashStage.c_str());
      std::fflush(stderr);
      ::_exit(86);
    };
  tilec::rt::StageCache::setTestHooks(std::move(hooks));
  // tilec's own command line, its program name first.
  argv[first - 1] = argv[0];
  return tilec::tool::tilecMain(argc - first + 1, argv + first - 1);
}
