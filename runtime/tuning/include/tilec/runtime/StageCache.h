//===- StageCache.h - The on-disk cache of stage artifacts ------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// Every stage of a compile (ttir, ttgir, llir, ptx, cubin) stores its artifact
// under a key that hashes everything the artifact depends on (see
// docs/cache.md). The store has no LLVM in it, so that a program can load
// cached cubins with no compiler present.
//
// On disk, one file per artifact:
//
//   <dir>/<stage>/<key[0:2]>/<key>.<stage>
//
// holding one header line followed by two byte strings:
//
//   tilec-cache 1 <stage> <key> <meta-bytes> <payload-bytes> <meta-sha256>
//     <payload-sha256>\n          (one line)
//   <meta><payload>
//
// The checksums are hex SHA-256 digests. A reader accepts an entry only if
// the header parses, its stage and key match the file's name, the sizes add
// up to the file's size exactly and both checksums match; anything
// else is discarded (deleted) and counts as a miss, so a corrupt, truncated or
// misplaced file is never loaded. Names inside the cache are relative, so a
// copied or moved tree still hits.
//
// Writers go through writeFileAtomically (FileIO.h): <name>.tmp.<pid>.<random>
// in the entry's directory, created with O_EXCL, written, fsynced and renamed
// over <name>, then the directory fsynced: a reader sees the whole entry or
// none, and a stored entry survives a power loss.
// Concurrent writers of one key both rename complete, equal files; the last
// one stays. Temporary files left by killed writers are never read and are
// removed by verify() and prune().
//
// Hit, miss, corrupt and store counters, and the shared tier's, are kept per
// process and added to <dir>/stats (a CounterFile.h file) under an exclusive
// flock of <dir>/stats.lock by flushCounters() (and the destructor).
//
// Failing to write (read-only directory, full disk, no permission) never fails
// a compile: the first failure prints one warning and turns stores off for the
// rest of the process; lookups go on.
//
// With a shared tier (RemoteCache.h), a lookup that misses locally asks the
// tier for the same entry bytes under "<namespace>:1:<stage>:<key>", checks
// them with decodeEntry exactly as a local file, and only then writes them to
// the local directory; a store goes to both. A remote entry that fails the
// check is counted as rejected, reported and not used: the caller rebuilds
// the artifact and its store replaces the bad value. The tier's failures
// never fail a lookup or a store (RemoteCache.h says how it degrades).
//
// Builds of one key by several processes at once are deduplicated with a
// lease on the server. A compile looks its stages up with lookupOrLease():
// after a local and a remote miss it takes the key's lease,
//
//   SET <namespace>:1:lease:<stage>:<key> <host>:<pid>:<n> NX PX <leaseMs>
//
// and builds; its store() writes the entry to the server and only then
// releases the lease (deleteIfEqual: a lease that expired and was taken by
// another process stays that one's). A process that finds the lease held
// waits: every 25 ms it reads the entry (checked as any remote read) and
// uses it once it is there, or takes the lease itself when it is gone with
// no entry (its holder failed, or died and the lease expired). After twice
// leaseMs of waiting (a holder that died, then the one that took over), or
// on any failure of the tier, it builds without a lease. So a waiter never
// waits longer than that, and an entry is never taken unverified. A waiter that gets the entry counts a remote miss, a
// wait and a hit.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_STAGECACHE_H
#define TILEC_RUNTIME_STAGECACHE_H

#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/Sha256.h"
#include "tilec/contract/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

// The stages the cache knows, in pipeline order. They are the only
// directories that list(), verify(), prune() and clear() enter, so a cache
// directory pointed at by mistake at a directory with other files never loses
// them.
inline constexpr std::array<std::string_view, 5> kCacheStages = {
    "ttir", "ttgir", "llir", "ptx", "cubin"};

// Builds a cache key: the SHA-256 of the stage name and named fields, each
// written with its length so that no two field lists hash alike.
class CacheKey {
public:
  explicit CacheKey(std::string_view stage);
  CacheKey &add(std::string_view name, std::string_view value);
  CacheKey &add(std::string_view name, const char *value) {
    return add(name, std::string_view(value));
  }
  CacheKey &add(std::string_view name, const std::string &value) {
    return add(name, std::string_view(value));
  }
  // Integers (and bools) are written in decimal.
  CacheKey &add(std::string_view name, int64_t value);
  // 64 lowercase hex characters.
  std::string str() const;

private:
  Sha256 sha_;
};

// What one stage stores: its artifact and a few facts about it that the next
// stages need and cannot recompute cheaply (e.g. the shared memory size, the
// ptxas resource usage), as a small JSON text.
struct CacheArtifact {
  std::string payload;
  std::string meta;
  // Hex SHA-256 of the payload, checked on read: the next stage's key hashes
  // the artifact, and need not hash it again.
  std::string payloadSha256;
  // Fetched from the shared tier by this lookup (and kept locally).
  bool fromRemote = false;
};

struct StageCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  // Entries found unreadable or invalid and discarded (each also a miss).
  uint64_t corrupt = 0;
  // Entries written to the directory: built here, or fetched from the
  // shared tier.
  uint64_t stores = 0;
  // The shared tier, asked after each local miss.
  RemoteCounters remote;

  StageCounters &operator+=(const StageCounters &other) {
    hits += other.hits;
    misses += other.misses;
    corrupt += other.corrupt;
    stores += other.stores;
    remote += other.remote;
    return *this;
  }
};

struct CacheEntryInfo {
  std::string stage;
  std::string key;
  // Relative to the cache directory.
  std::string path;
  uint64_t bytes = 0;
  // Last write or hit (hits refresh it; prune() removes the oldest first).
  int64_t mtimeSeconds = 0;
};

struct CacheStats {
  struct Stage {
    std::string name;
    uint64_t entries = 0;
    uint64_t bytes = 0;
    // Summed over every process that flushed its counters.
    StageCounters counters;
  };
  std::vector<Stage> stages;
  uint64_t tempFiles = 0;
  uint64_t tempBytes = 0;
};

struct CacheVerifyReport {
  std::map<std::string, uint64_t> validPerStage;
  uint64_t valid = 0;
  // "<relative path>: <reason>" for each invalid entry; each was removed.
  std::vector<std::string> corrupt;
  // Leftovers of killed writers, removed.
  uint64_t removedTempFiles = 0;
  // Temporary files of writers that may still be running, left alone.
  uint64_t liveTempFiles = 0;
  // Files in the stage directories that are no cache entries, left alone.
  std::vector<std::string> unknownFiles;
};

struct CachePruneReport {
  uint64_t removedEntries = 0;
  uint64_t removedBytes = 0;
  uint64_t keptEntries = 0;
  uint64_t keptBytes = 0;
  uint64_t removedTempFiles = 0;
};

class StageCache {
public:
  using WarningHandler = CacheWarningHandler;

  // A cache rooted at `directory`, created on the first store, reading
  // through `remote` when it is given (RemoteCache::fromEnvironment() is
  // TILEC_REDIS's). Construction does not touch the disk or the network.
  // The default handler prints "warning: <message>" on stderr.
  explicit StageCache(std::string directory,
                      std::shared_ptr<RemoteCache> remote = nullptr,
                      WarningHandler warning = {});
  // Releases the leases still held and flushes the counters.
  ~StageCache();
  StageCache(const StageCache &) = delete;
  StageCache &operator=(const StageCache &) = delete;

  // Where a test stops a process to check what others see: every stage
  // cache of the process calls them (test/unit/Cache; its hooked tilec
  // sets them before running a command). A shipped program sets none. Set
  // them before the first cache is used.
  struct TestHooks {
    // After writing an entry's temporary file, before the rename.
    std::function<void(std::string_view stage)> beforeRename;
    // Right after taking the shared tier's lease of a stage's entry.
    std::function<void(std::string_view stage)> afterLease;
  };
  static void setTestHooks(TestHooks hooks);

  const std::string &directory() const { return directory_; }
  RemoteCache *remote() const { return remote_.get(); }

  // The artifact stored under `key`, or nothing. A present but invalid entry
  // is removed and counted as corrupt. A hit refreshes the entry's mtime. A
  // local miss asks the shared tier, and a valid remote entry is stored
  // locally before it is returned.
  std::optional<CacheArtifact> lookup(std::string_view stage,
                                      std::string_view key);
  // lookup() for a caller that builds the artifact when it gets nothing, and
  // stores it: with a shared tier, nothing means that this process holds the
  // key's lease (or builds without one), and another process's build of the
  // key is waited for (see the top of this file). The caller must store(),
  // or releaseLease() when its build fails.
  std::optional<CacheArtifact> lookupOrLease(std::string_view stage,
                                             std::string_view key);
  // Gives up the lease that lookupOrLease() took, if any, so that a waiter
  // builds at once rather than after the lease expires.
  void releaseLease(std::string_view stage, std::string_view key);
  // Stores an artifact atomically, and in the shared tier, then releases the
  // key's lease. False if it was not stored locally: stores are off, or this
  // write failed (then a warning, once, and stores go off).
  bool store(std::string_view stage, std::string_view key,
             std::string_view payload, std::string_view meta = {});
  // False once a store failed: the process compiles without storing.
  bool storesEnabled() const;

  // This process's counters for `stage` since construction.
  StageCounters counters(std::string_view stage) const;
  // Adds the counters not yet flushed to <dir>/stats. Best effort: a
  // read-only cache keeps no statistics.
  void flushCounters();

  // Maintenance (tilec cache). Errors name the path that failed.
  Result<std::vector<CacheEntryInfo>> list() const;
  Result<CacheStats> stats() const;
  // Reads and checks every entry, removes the invalid ones and the temporary
  // files of writers that are gone.
  Result<CacheVerifyReport> verify();
  // Removes least recently used entries (oldest mtime first) until the
  // entries take at most `maxBytes`, and the temporary files of writers that
  // are gone.
  Result<CachePruneReport> prune(uint64_t maxBytes);
  // Removes every entry, temporary file and counter; keeps the directory.
  Status clear();

  // The entry format, exposed for tests and tools.
  // "<stage>/<key[0:2]>/<key>.<stage>".
  static std::string entryPath(std::string_view stage, std::string_view key);
  static std::string encodeEntry(std::string_view stage, std::string_view key,
                                 std::string_view payload,
                                 std::string_view meta);
  // Checks `bytes` (a whole entry file) against `stage` and `key`; the error
  // says what did not match.
  static Result<CacheArtifact> decodeEntry(std::string_view bytes,
                                           std::string_view stage,
                                           std::string_view key);
  static bool isValidKey(std::string_view key);
  static bool isKnownStage(std::string_view stage);

private:
  void warnOnce(const std::string &message);
  void count(std::string_view stage, const StageCounters &delta);
  Status writeEntry(std::string_view stage, std::string_view key,
                    const std::string &contents);
  // Writes an encoded entry to the directory; false when stores are off or
  // the write failed (which turns them off).
  bool storeLocally(std::string_view stage, std::string_view key,
                    const std::string &entry);
  std::optional<CacheArtifact> lookupImpl(std::string_view stage,
                                          std::string_view key, bool lease);
  std::optional<CacheArtifact>
  lookupRemotely(std::string_view stage, std::string_view key, bool lease);
  // Checks an entry read from the tier; a valid one is counted as a hit and
  // kept locally.
  std::optional<CacheArtifact> useRemoteEntry(std::string_view stage,
                                              std::string_view key,
                                              const std::string &name,
                                              const std::string &bytes);
  // After a remote miss: takes the lease, or waits for its holder's entry.
  std::optional<CacheArtifact> leaseOrWait(std::string_view stage,
                                           std::string_view key,
                                           const std::string &name);
  // Records the lease just taken, and gives it back when the entry came
  // meanwhile.
  std::optional<CacheArtifact> holdLease(std::string_view stage,
                                         std::string_view key,
                                         const std::string &name,
                                         const std::string &lease,
                                         const std::string &owner);
  std::string leaseName(std::string_view stage, std::string_view key) const;

  std::string directory_;
  WarningHandler warning_;
  std::shared_ptr<RemoteCache> remote_;

  mutable std::mutex mutex_;
  bool warned_ = false;
  bool storesEnabled_ = true;
  std::map<std::string, StageCounters, std::less<>> counters_;
  std::map<std::string, StageCounters, std::less<>> unflushed_;
  // The leases this process holds: their names and owner values.
  std::map<std::string, std::string, std::less<>> leases_;
};

// Parses a size such as "1048576", "100K", "100M", "1G", "2T" (binary
// units; a trailing "B"/"iB" is accepted).
Result<uint64_t> parseByteSize(std::string_view text);
// "1.5M", "812K", "12B".
std::string formatByteSize(uint64_t bytes);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_STAGECACHE_H
