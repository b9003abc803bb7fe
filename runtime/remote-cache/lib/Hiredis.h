//===- Hiredis.h - The Redis client library, loaded at run time -*- C++ -*-===//
//
// Part of tilec_remote_cache (RemoteCache.h), private to it.
//
// hiredis is opened with dlopen instead of being linked, as libcuda is
// (Driver.h): the shared tier is optional at run time, so a program linked
// with tilec_tuning (the tools, the C API's library, an application built
// with the deployment helper, the static tools carried to a GPU machine)
// keeps its link line and still starts on a machine without libhiredis;
// there, setting TILEC_REDIS costs one warning and the caches stay local.
// The price is ABI care: hiredis changed the layout of redisReply between
// 0.14 and 1.0 without renaming anything, so the library loaded is the
// soname of the header this file is compiled against (HIREDIS_SONAME),
// never another version.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_HIREDIS_H
#define TILEC_RUNTIME_HIREDIS_H

#include "tilec/contract/Status.h"

#include <hiredis/hiredis.h>

#include <string>

namespace tilec::rt {

// The hiredis calls the remote cache makes, with the prototypes of the
// header this build uses.
struct HiredisApi {
  decltype(&::redisConnectWithTimeout) connectWithTimeout = nullptr;
  decltype(&::redisSetTimeout) setTimeout = nullptr;
  decltype(&::redisAppendCommandArgv) appendCommandArgv = nullptr;
  decltype(&::redisBufferWrite) bufferWrite = nullptr;
  decltype(&::redisBufferRead) bufferRead = nullptr;
  decltype(&::redisGetReplyFromReader) getReplyFromReader = nullptr;
  decltype(&::freeReplyObject) freeReplyObject = nullptr;
  decltype(&::redisFree) free = nullptr;
};

// "libhiredis.so.<HIREDIS_SONAME>": the library whose ABI the header
// describes.
std::string hiredisLibraryName();

// Opens `library` and resolves the calls; the error names the library and
// what dlopen or dlsym said. The library is never closed: it is small, and
// opening it again only takes another reference.
Result<HiredisApi> loadHiredis(const std::string &library);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_HIREDIS_H
