//===- RemoteCache.h - The shared cache tier on a Redis server --*- C++ -*-===//
//
// tilec_remote_cache, a small library under tilec_tuning: no LLVM, no CUDA,
// and hiredis loaded at run time (runtime/lib/Hiredis.h says why).
//
// The stage cache and the autotune cache read through their local files from
// a Redis server that a team or a fleet shares, and write what they store to
// it too (docs/shared-cache.md). This class is the connection: it moves keys
// and values and knows no entry format. Each cache stores remotely the same
// checked bytes it keeps locally and verifies what it fetches exactly as it
// verifies a local read, so a corrupt remote value is never used.
//
// Keys are "<namespace>:1:<kind>:<name>" (key()): the namespace separates
// teams or projects on one server, "1" is the layout of this tier, and the
// name is the cache's own key, which already holds everything the entry was
// built from (a stage key hashes the compiler id, so a rebuilt compiler never
// reads another build's entries).
//
// Failure policy: connecting (on the first request, not at construction) and
// each request's wait for its reply are bounded by the timeout. The first
// failure of any kind (no hiredis, no server, a refused AUTH, no reply in
// time, an error reply) prints one warning and turns the tier off for the
// rest of the process: later requests fail at once without touching the
// network, and the caches go on with their local files. Nothing is retried:
// a tool runs for seconds or minutes, and retrying a server that just failed
// would risk a timeout on every lookup for little gain.
//
// Thread-safe: one connection, one request at a time (a round trip takes
// well under a millisecond on a LAN, a compile tens to hundreds of them). A
// child after fork() opens its own connection rather than share its
// parent's socket.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_REMOTECACHE_H
#define TILEC_RUNTIME_REMOTECACHE_H

#include "tilec/contract/Status.h"
#include "tilec/runtime/Environment.h"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

struct redisContext;

namespace tilec::rt {

struct HiredisApi;

// Receives the warnings of a cache (no newline at the end).
using CacheWarningHandler = std::function<void(const std::string &)>;
// The caches' default handler: "warning: <message>" on stderr.
void printCacheWarning(const std::string &message);

struct RemoteCacheOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int database = 0;
  // Sent with AUTH when the password is set: a password alone, or an ACL
  // user and its password.
  std::string user;
  std::string password;
  std::string keyNamespace = "tilec";
  // Bounds connecting, and each request's wait for its reply.
  int timeoutMs = 150;
  // How long a build lease lives on the server (StageCache.h): longer than
  // the slowest stage takes, since a holder that overruns it lets another
  // process build the same key. A holder that died leaves its lease until it
  // expires, so a waiter waits for twice this at most.
  int leaseMs = 30000;
  // The hiredis to load; empty: hiredisLibraryName(), the one this build's
  // header describes (another version's ABI differs).
  std::string hiredisLibrary;

  // "redis://[[user]:password@]host[:port][/db]", the scheme optional
  // ("host:port"); an IPv6 address in brackets. Port 6379 and database 0 by
  // default. Errors quote the address with its password left out.
  static Result<RemoteCacheOptions> parseAddress(std::string_view address);
  // TILEC_REDIS (an address as above), TILEC_REDIS_NAMESPACE (default
  // "tilec"), TILEC_REDIS_TIMEOUT_MS (1 to 60000, default 150) and
  // TILEC_REDIS_LEASE_MS (1 to 600000, default 30000) of `environment`;
  // nothing when TILEC_REDIS is unset or empty. Errors name the variable.
  static Result<std::optional<RemoteCacheOptions>>
  fromEnvironment(const Environment &environment);

  // "redis://host:port/db" (with "user@" when there is one, never the
  // password), for messages.
  std::string url() const;
};

// What one process did with the tier, per cache kind.
struct RemoteCounters {
  // Found, verified and written to the local cache.
  uint64_t hits = 0;
  // Not on the server.
  uint64_t misses = 0;
  // Found but failed verification: ignored, rebuilt and stored again.
  uint64_t rejects = 0;
  uint64_t stores = 0;
  // Requests that failed; the first one turned the tier off.
  uint64_t errors = 0;
  // Misses that found another process building the entry and waited for it
  // (each also a hit when the entry came, StageCache.h).
  uint64_t waits = 0;

  RemoteCounters &operator+=(const RemoteCounters &other) {
    hits += other.hits;
    misses += other.misses;
    rejects += other.rejects;
    stores += other.stores;
    errors += other.errors;
    waits += other.waits;
    return *this;
  }
  bool empty() const {
    return hits == 0 && misses == 0 && rejects == 0 && stores == 0 &&
           errors == 0 && waits == 0;
  }
};

class RemoteCache {
public:
  // Nothing is loaded or connected until the first request. The default
  // handler is printCacheWarning.
  explicit RemoteCache(RemoteCacheOptions options,
                       CacheWarningHandler warning = {});
  ~RemoteCache();
  RemoteCache(const RemoteCache &) = delete;
  RemoteCache &operator=(const RemoteCache &) = delete;

  // The process's tier for `environment`'s TILEC_REDIS* settings, made on
  // the first call for those settings and shared by every cache and
  // session opened with them (one connection, one warning); null when
  // TILEC_REDIS is unset. A malformed setting prints one warning and gives
  // null: the caches stay local.
  static std::shared_ptr<RemoteCache> shared(const Environment &environment);
  // shared(readEnvironment()).
  static std::shared_ptr<RemoteCache> fromEnvironment();

  const RemoteCacheOptions &options() const { return options_; }
  // "<namespace>:1:<kind>:<name>".
  std::string key(std::string_view kind, std::string_view name) const;
  // False once a request failed.
  bool enabled() const { return !off_.load(); }
  // Reports a problem with something fetched from the tier (a cache's
  // rejected entry) through the tier's handler.
  void warn(const std::string &message) const { warning_(message); }

  // The value of a string key, or nothing when it is absent.
  Result<std::optional<std::string>> get(std::string_view key);
  Status set(std::string_view key, std::string_view value);
  // SET key value NX PX ttlMs: true when this call created the key, false
  // when it was there already.
  Result<bool> setIfAbsent(std::string_view key, std::string_view value,
                           int ttlMs);
  // Deletes `key` only while it still holds `value`, in one server-side
  // script: a lease that expired and was taken by another process is not
  // released by its first holder.
  Status deleteIfEqual(std::string_view key, std::string_view value);
  // One field of a hash (HGET, HSET): each field is written alone, so
  // writers of different fields never overwrite each other.
  Result<std::optional<std::string>> hashGet(std::string_view key,
                                             std::string_view field);
  Status hashSet(std::string_view key, std::string_view field,
                 std::string_view value);
  // Some field of a hash and its value (HRANDFIELD, Redis 6.2 or later), or
  // nothing when the hash is empty or absent.
  Result<std::optional<std::pair<std::string, std::string>>>
  hashAnyField(std::string_view key);

private:
  struct Reply;
  // Sends one command and checks that the reply is of a type in
  // `expectedTypes` (a mask of 1 << REDIS_REPLY_*). Any failure turns the
  // tier off, with the warning.
  Result<Reply> request(std::initializer_list<std::string_view> arguments,
                        unsigned expectedTypes);
  Status connectLocked();
  Result<Reply> sendLocked(std::initializer_list<std::string_view> arguments);
  void disconnectLocked();

  RemoteCacheOptions options_;
  CacheWarningHandler warning_;
  std::atomic<bool> off_{false};

  std::mutex mutex_;
  std::unique_ptr<HiredisApi> api_;
  redisContext *context_ = nullptr;
  // The process that connected: a forked child does not use the socket.
  pid_t contextPid_ = 0;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_REMOTECACHE_H
