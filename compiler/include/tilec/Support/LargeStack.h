//===- LargeStack.h - The tools' work on a thread with a large stack -*- C++
//-*-===//
//
// MLIR's parser and LLVM's pass-pipeline parser recurse once per level of
// nesting, some 800 bytes a level: a text nested 20,000 deep (types, regions,
// attribute arrays, `function(` in --llvm-passes) overflowed the main
// thread's 8 MiB stack and crashed the tool. The tools run their work on a
// thread with up to kToolStackBytes of stack instead: about a million
// levels, which then end in the parser's own error. It is address space
// reserved, not memory used: only the pages a deep input touches are
// committed. Where the address space is limited (ulimit -v), the stack is
// halved until a thread starts, down to the main thread's own.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SUPPORT_LARGESTACK_H
#define TILEC_SUPPORT_LARGESTACK_H

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace tilec {

inline constexpr size_t kToolStackBytes = size_t(1) << 30;

/// `body()` run on a thread with the largest stack up to kToolStackBytes
/// that can be had (else on the calling thread); its result.
inline int runOnLargeStack(const std::function<int()> &body) {
  struct Work {
    const std::function<int()> *body;
    int result = 0;
  } work{&body};
  auto run = [](void *argument) -> void * {
    auto *work = static_cast<Work *>(argument);
    work->result = (*work->body)();
    return nullptr;
  };
  for (size_t bytes = kToolStackBytes; bytes >= (size_t(16) << 20);
       bytes /= 2) {
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0)
      break;
    pthread_t thread;
    bool started = pthread_attr_setstacksize(&attributes, bytes) == 0 &&
                   pthread_create(&thread, &attributes, run, &work) == 0;
    pthread_attr_destroy(&attributes);
    if (started) {
      pthread_join(thread, nullptr);
      return work.result;
    }
  }
  return body();
}

} // namespace tilec

#endif // TILEC_SUPPORT_LARGESTACK_H
