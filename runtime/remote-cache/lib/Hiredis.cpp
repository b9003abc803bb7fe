//===- Hiredis.cpp - The Redis client library, loaded at run time ---------===//

#include "Hiredis.h"

#include <dlfcn.h>

#include <type_traits>

namespace tilec::rt {

#define TILEC_RT_HIREDIS_STRINGIFY_EXPANDED(x) TILEC_RT_HIREDIS_STRINGIFY(x)
#define TILEC_RT_HIREDIS_STRINGIFY(x) #x

std::string hiredisLibraryName() {
  return "libhiredis.so." TILEC_RT_HIREDIS_STRINGIFY_EXPANDED(HIREDIS_SONAME);
}

Result<HiredisApi> loadHiredis(const std::string &library) {
  void *handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = ::dlerror();
    return Status::error("cannot load " + library + " (" +
                         (reason ? reason : "dlopen failed") + ")");
  }
  HiredisApi api;
  std::string missing;
  auto resolve = [&](auto &function, const char *name) {
    function = reinterpret_cast<std::decay_t<decltype(function)>>(
        ::dlsym(handle, name));
    if (!function)
      missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
  resolve(api.connectWithTimeout, "redisConnectWithTimeout");
  resolve(api.setTimeout, "redisSetTimeout");
  resolve(api.appendCommandArgv, "redisAppendCommandArgv");
  resolve(api.bufferWrite, "redisBufferWrite");
  resolve(api.bufferRead, "redisBufferRead");
  resolve(api.getReplyFromReader, "redisGetReplyFromReader");
  resolve(api.freeReplyObject, "freeReplyObject");
  resolve(api.free, "redisFree");
  if (!missing.empty())
    return Status::error(library + " lacks " + missing);
  return api;
}

} // namespace tilec::rt
