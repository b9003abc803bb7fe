//===- AutotuneCache.h - Persistent autotuning results ----------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The winners of autotuning and every candidate's timing, in one JSON file
// shared by all processes of a user:
//
//   $TILEC_AUTOTUNE_CACHE, default ~/.tilec/autotune_cache.json
//   { "<device name>": { "<kernel>": { "<key>": { "config": "...",
//                                                 "timings": [...], ... } } } }
//
// The key is the kernel's autotune key evaluated for a call
// ("M=4096,N=4096,K=4096,DTYPE=f16,ALLOW_TF32=0"). Besides the winner and the
// timings an entry carries what a process without a compiler needs to run
// the winner: the stage-cache key of its cubin, its compile json, and the
// kernel's description (key derivations, grid, arguments), so that a new call
// can be keyed and launched from the file alone.
//
// Writes merge: store() takes an exclusive flock on <path>.lock, re-reads the
// file, replaces only its own entry (other entries stay byte for byte what
// their writers wrote, including fields this version does not know) and
// writes the file back with writeFileAtomically (FileIO.h: a temporary file
// created with O_EXCL, fsynced, renamed over <path>, the directory fsynced).
// Readers take no lock: a rename is atomic, so they see the old or the new
// file, never half of one. Two processes tuning different keys at once both
// keep their entries.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_AUTOTUNECACHE_H
#define TILEC_RUNTIME_AUTOTUNECACHE_H

#include "tilec/runtime/KernelCompiler.h"
#include "tilec/contract/Status.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilec::rt {

// One candidate of one tuning run.
struct ConfigTiming {
  // Canonical config text.
  std::string config;
  // "ok" (benchmarked), "pruned" (cannot run on the device) or "failed"
  // (compile, load or launch error); `reason` says why for the last two.
  std::string status = "ok";
  std::string reason;
  // Kernel time over the repetitions (L2 flushed before each), microseconds.
  double medianUs = 0;
  double p20Us = 0;
  double p80Us = 0;
  double minUs = 0;
  int repetitions = 0;
  // From the ptxas report; -1 when unknown (compile failed).
  int registers = -1;
  int64_t sharedBytes = -1;
  int64_t spillBytes = 0;
  // Wall time of this candidate's compile (a stage-cache hit is fast).
  double compileMs = 0;
};

struct AutotuneEntry {
  // The winner, canonical text.
  std::string config;
  std::vector<ConfigTiming> timings;
  // How to load the winner without compiling: the target it was compiled
  // for, the stage-cache key of its cubin (empty when it was compiled without
  // a cache) and its compile json.
  std::string target;
  std::string cubinKey;
  std::string metadataJson;
  // The kernel's description (tilec/contract/KernelDescription.h): how a
  // process without a compiler derives keys, configs, arguments and grids.
  std::optional<KernelDescription> description;
  // Provenance: UTC time of tuning ("2026-11-29T12:00:00Z"), the compiler
  // identity from the compile json, the per-config time budget.
  std::string tunedAt;
  std::string compilerId;
  double budgetMs = 0;

  // The winner's measured median in microseconds; 0 when it was not
  // benchmarked (a kernel with a single candidate).
  double winnerMedianUs() const;
};

class AutotuneCache {
public:
  // A cache backed by `path`; nothing is read until load().
  explicit AutotuneCache(std::string path);

  // $TILEC_AUTOTUNE_CACHE, or ~/.tilec/autotune_cache.json when unset or
  // empty.
  static std::string defaultPath();

  const std::string &path() const { return path_; }

  // Reads the file. A missing file is an empty cache. A file that is not
  // JSON, or not an object of objects, is an error naming the path and the
  // problem; entries that do not parse are skipped and listed in warnings().
  Status load();

  // The entry for (device, kernel, key), or null.
  const AutotuneEntry *find(const std::string &device,
                            const std::string &kernel,
                            const std::string &key) const;
  // The description stored with any entry of `kernel` on `device`, or null:
  // how a process without a compiler computes keys.
  const KernelDescription *findDescription(const std::string &device,
                                           const std::string &kernel) const;

  // Merges `entry` into the file under the lock (see above) and into memory.
  // The parent directory is created if needed. A file that does not parse is
  // moved aside to <path>.corrupt (with a warning) rather than overwritten
  // in place.
  Status store(const std::string &device, const std::string &kernel,
               const std::string &key, const AutotuneEntry &entry);

  using KeyMap = std::map<std::string, AutotuneEntry>;
  using KernelMap = std::map<std::string, KeyMap>;
  // device -> kernel -> key -> entry, as last loaded or stored.
  const std::map<std::string, KernelMap> &entries() const { return entries_; }
  const std::vector<std::string> &warnings() const { return warnings_; }

  // The JSON of an entry, and back; exposed for tools and tests.
  static std::string encodeEntry(const AutotuneEntry &entry);
  static Result<AutotuneEntry> decodeEntry(const std::string &json);

private:
  std::string path_;
  std::map<std::string, KernelMap> entries_;
  std::vector<std::string> warnings_;
};

} // namespace tilec::rt

#endif // TILEC_RUNTIME_AUTOTUNECACHE_H
