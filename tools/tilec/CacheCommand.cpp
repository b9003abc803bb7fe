//===- CacheCommand.cpp - tilec cache -------------------------------------===//
//
// tilec cache ls | stats | verify | prune --max-size=<size> | clear: looks
// after the stage cache that `tilec compile` fills (docs/cache.md). stats
// also shows what the processes did with the shared tier
// (docs/shared-cache.md); the actions never touch the tier itself.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tilec/runtime/AutotuneCache.h"
#include "tilec/runtime/Environment.h"
#include "tilec/runtime/FileIO.h"
#include "tilec/runtime/RemoteCache.h"
#include "tilec/runtime/StageCache.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <ctime>

namespace cl = llvm::cl;

namespace tilec::tool {

cl::SubCommand
    cacheCommand("cache",
                 "Inspect and maintain the stage cache: ls, stats, verify, "
                 "prune --max-size=<size>, clear");

static cl::OptionCategory category("tilec cache options");
static cl::opt<std::string> action(cl::Positional,
                                   cl::desc("<ls|stats|verify|prune|clear>"),
                                   cl::init(""), cl::sub(cacheCommand),
                                   cl::cat(category));
static cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("The cache directory (default: $TILEC_CACHE_DIR, else "
                      "~/.tilec/cache)"),
             cl::init(""), cl::sub(cacheCommand), cl::cat(category));
static cl::opt<std::string>
    maxSize("max-size",
            cl::desc("prune: the size to shrink the entries to, in bytes or "
                     "with a K, M, G suffix (e.g. 100M, 1G)"),
            cl::init(""), cl::sub(cacheCommand), cl::cat(category));
static cl::opt<std::string>
    jsonPath("json",
             cl::desc("stats: also write the table as JSON to this file"),
             cl::init(""), cl::sub(cacheCommand), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tilec cache: error: " << message << "\n";
  return 1;
}

static std::string formatTime(int64_t seconds) {
  std::time_t time = std::time_t(seconds);
  std::tm local;
  localtime_r(&time, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

static int listEntries(rt::StageCache &cache) {
  auto entries = cache.list();
  if (!entries)
    return fail(entries.message());
  for (const rt::CacheEntryInfo &entry : *entries)
    llvm::outs() << llvm::format("%-6s %7s  %s  ", entry.stage.c_str(),
                                 rt::formatByteSize(entry.bytes).c_str(),
                                 formatTime(entry.mtimeSeconds).c_str())
                 << entry.key << "\n";
  return 0;
}

// The shared tier's counters, per stage and for the autotune cache
// (TILEC_AUTOTUNE_CACHE), when TILEC_REDIS is set or some process used it.
static void printRemoteStats(const rt::CacheStats &stats) {
  rt::AutotuneCache autotune(rt::readEnvironment().autotuneCachePath());
  rt::RemoteCounters autotuneCounters = autotune.remoteStats();
  bool used = !autotuneCounters.empty();
  for (const rt::CacheStats::Stage &stage : stats.stages)
    used = used || !stage.counters.remote.empty();
  auto configured =
      rt::RemoteCacheOptions::fromEnvironment(rt::readEnvironment());
  if (configured && !*configured && !used)
    return;
  llvm::outs() << "shared cache: ";
  if (!configured)
    llvm::outs() << configured.message() << "\n";
  else if (!*configured)
    llvm::outs() << "none now (TILEC_REDIS is unset)\n";
  else
    llvm::outs() << (*configured)->url() << ", namespace "
                 << (*configured)->keyNamespace << "\n";
  llvm::outs()
      << "remote      hits   misses  rejects   stores   errors    waits\n";
  auto printRow = [](const rt::RemoteCounters &counters, llvm::StringRef name) {
    llvm::outs() << llvm::format(
        "%-8s %8llu %8llu %8llu %8llu %8llu %8llu\n", name.str().c_str(),
        (unsigned long long)counters.hits, (unsigned long long)counters.misses,
        (unsigned long long)counters.rejects,
        (unsigned long long)counters.stores,
        (unsigned long long)counters.errors,
        (unsigned long long)counters.waits);
  };
  rt::RemoteCounters total;
  for (const rt::CacheStats::Stage &stage : stats.stages) {
    printRow(stage.counters.remote, stage.name);
    total += stage.counters.remote;
  }
  printRow(total, "total");
  printRow(autotuneCounters, "autotune");
}

// stats --json: each stage's row, its shared-tier counters with it.
static int writeStatsJson(const rt::StageCache &cache,
                          const rt::CacheStats &stats) {
  auto remote = [](const rt::RemoteCounters &counters) {
    return nlohmann::ordered_json{
        {"hits", counters.hits},       {"misses", counters.misses},
        {"rejects", counters.rejects}, {"stores", counters.stores},
        {"errors", counters.errors},   {"waits", counters.waits}};
  };
  nlohmann::ordered_json json;
  json["cache"] = cache.directory();
  json["stages"] = nlohmann::ordered_json::array();
  for (const rt::CacheStats::Stage &stage : stats.stages)
    json["stages"].push_back({{"stage", stage.name},
                              {"entries", stage.entries},
                              {"bytes", stage.bytes},
                              {"hits", stage.counters.hits},
                              {"misses", stage.counters.misses},
                              {"corrupt", stage.counters.corrupt},
                              {"stores", stage.counters.stores},
                              {"remote", remote(stage.counters.remote)}});
  json["temp_files"] = stats.tempFiles;
  json["temp_bytes"] = stats.tempBytes;
  json["autotune_remote"] =
      remote(rt::AutotuneCache(rt::readEnvironment().autotuneCachePath())
                 .remoteStats());
  if (Status status =
          rt::writeFileAtomically(jsonPath.getValue(), json.dump(2) + "\n");
      !status.ok())
    return fail(status.message());
  return 0;
}

static int printStats(rt::StageCache &cache) {
  auto stats = cache.stats();
  if (!stats)
    return fail(stats.message());
  if (!jsonPath.empty())
    if (int failed = writeStatsJson(cache, *stats))
      return failed;
  llvm::outs() << "cache: " << cache.directory() << "\n";
  llvm::outs() << "stage   entries     size     hits   misses  corrupt   "
                  "stores\n";
  rt::CacheStats::Stage total;
  auto printRow = [](const rt::CacheStats::Stage &stage, const char *name) {
    llvm::outs() << llvm::format("%-6s %8llu %8s %8llu %8llu %8llu %8llu\n",
                                 name, (unsigned long long)stage.entries,
                                 rt::formatByteSize(stage.bytes).c_str(),
                                 (unsigned long long)stage.counters.hits,
                                 (unsigned long long)stage.counters.misses,
                                 (unsigned long long)stage.counters.corrupt,
                                 (unsigned long long)stage.counters.stores);
  };
  for (const rt::CacheStats::Stage &stage : stats->stages) {
    printRow(stage, stage.name.c_str());
    total.entries += stage.entries;
    total.bytes += stage.bytes;
    total.counters += stage.counters;
  }
  printRow(total, "total");
  if (stats->tempFiles)
    llvm::outs() << stats->tempFiles << " temporary file(s), "
                 << rt::formatByteSize(stats->tempBytes)
                 << " (in-flight writes, or leftovers that verify and prune "
                    "remove)\n";
  printRemoteStats(*stats);
  return 0;
}

static int verifyEntries(rt::StageCache &cache) {
  auto report = cache.verify();
  if (!report)
    return fail(report.message());
  for (const std::string &corrupt : report->corrupt)
    llvm::outs() << "invalid entry removed: " << corrupt << "\n";
  llvm::outs() << "verified " << cache.directory() << ": " << report->valid
               << " valid entries (";
  bool first = true;
  for (std::string_view stage : rt::kCacheStages) {
    auto it = report->validPerStage.find(std::string(stage));
    llvm::outs() << (first ? "" : ", ") << stage << " "
                 << (it == report->validPerStage.end() ? 0 : it->second);
    first = false;
  }
  llvm::outs() << "), " << report->corrupt.size() << " invalid\n";
  if (report->removedTempFiles)
    llvm::outs() << "removed " << report->removedTempFiles
                 << " temporary file(s) of writers that are gone\n";
  if (report->liveTempFiles)
    llvm::outs() << report->liveTempFiles
                 << " temporary file(s) of running writers left alone\n";
  for (const std::string &unknown : report->unknownFiles)
    llvm::outs() << "not a cache file, left alone: " << unknown << "\n";
  return report->corrupt.empty() ? 0 : 1;
}

static int pruneEntries(rt::StageCache &cache) {
  if (maxSize.empty())
    return fail("prune needs --max-size=<size> (e.g. --max-size=1G)");
  auto limit = rt::parseByteSize(maxSize);
  if (!limit)
    return fail("--max-size: " + limit.message());
  auto report = cache.prune(*limit);
  if (!report)
    return fail(report.message());
  llvm::outs() << "pruned " << cache.directory() << " to "
               << rt::formatByteSize(*limit) << ": removed "
               << report->removedEntries << " entries ("
               << rt::formatByteSize(report->removedBytes) << "), kept "
               << report->keptEntries << " ("
               << rt::formatByteSize(report->keptBytes) << ")";
  if (report->removedTempFiles)
    llvm::outs() << ", removed " << report->removedTempFiles
                 << " leftover temporary file(s)";
  llvm::outs() << "\n";
  return 0;
}

int runCache() {
  std::string directory =
      cacheDir.empty() ? rt::readEnvironment().stageCacheDirectory() : cacheDir;
  rt::StageCache cache(directory, nullptr, [](const std::string &message) {
    llvm::errs() << "tilec cache: warning: " << message << "\n";
  });
  if (action == "ls")
    return listEntries(cache);
  if (action == "stats")
    return printStats(cache);
  if (action == "verify")
    return verifyEntries(cache);
  if (action == "prune")
    return pruneEntries(cache);
  if (action == "clear") {
    if (tilec::Status cleared = cache.clear(); !cleared.ok())
      return fail(cleared.message());
    llvm::outs() << "cleared " << directory << "\n";
    return 0;
  }
  if (action.empty())
    return fail("an action is required: ls, stats, verify, prune or clear");
  return fail("unknown action '" + action +
              "' (expected ls, stats, verify, prune or clear)");
}

} // namespace tilec::tool
