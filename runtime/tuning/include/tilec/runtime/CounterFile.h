//===- CounterFile.h - Counts that many processes add to --------*- C++ -*-===//
//
// Part of tilec_tuning, the tuning library (on top of tilec_runtime).
//
// The caches' statistics. Each process counts in memory and adds its counts
// to one file when it is done, under an exclusive flock of a lock file, so
// that concurrent processes lose none; the file is replaced through
// writeFileAtomically (FileIO.h), so a reader that takes no lock still sees a
// whole file. The format:
//
//   <format line>\n
//   <row name> <count> <count> ...\n      (one line per row)
//
// Rows add up element by element. A row that a reader does not know (a newer
// writer's) is carried along as it is.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_COUNTERFILE_H
#define TILEC_RUNTIME_COUNTERFILE_H

#include "tilec/contract/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::rt {

using CounterRows = std::map<std::string, std::vector<uint64_t>, std::less<>>;

// Parses a decimal count of up to 19 digits (no sign, no spaces); the stage
// cache's entry headers use it for their sizes too.
bool parseDecimalCount(std::string_view text, uint64_t &value);

// The rows of `path`. A missing file, one of another format, and lines that
// are not rows, count nothing.
CounterRows readCounterFile(const std::string &path, std::string_view format);

// Adds `rows` to `path` under an exclusive flock of `lockPath`, creating the
// file when it is missing. Not fsynced: losing an update loses counts only.
// The error names the file that could not be locked or written.
Status addToCounterFile(const std::string &path, const std::string &lockPath,
                        std::string_view format, const CounterRows &rows);

} // namespace tilec::rt

#endif // TILEC_RUNTIME_COUNTERFILE_H
