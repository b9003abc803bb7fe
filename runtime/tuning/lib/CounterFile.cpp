//===- CounterFile.cpp - Counts that many processes add to ----------------===//

#include "tilec/runtime/CounterFile.h"

#include "tilec/runtime/FileIO.h"

#include <cinttypes>
#include <cstdio>

namespace tilec::rt {

bool parseDecimalCount(std::string_view text, uint64_t &value) {
  if (text.empty() || text.size() > 19)
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + uint64_t(c - '0');
  }
  return true;
}

namespace {

void addCounts(std::vector<uint64_t> &row,
               const std::vector<uint64_t> &counts) {
  if (row.size() < counts.size())
    row.resize(counts.size());
  for (size_t i = 0; i < counts.size(); ++i)
    row[i] += counts[i];
}

// Adds the row "<name> <count>..." to `rows`; any other line adds nothing.
void addLine(std::string_view line, CounterRows &rows) {
  size_t space = line.find(' ');
  if (space == 0 || space == std::string_view::npos)
    return;
  std::vector<uint64_t> counts;
  for (std::string_view rest = line.substr(space + 1);;) {
    size_t next = rest.find(' ');
    uint64_t count = 0;
    if (!parseDecimalCount(rest.substr(0, next), count))
      return;
    counts.push_back(count);
    if (next == std::string_view::npos)
      break;
    rest.remove_prefix(next + 1);
  }
  addCounts(rows[std::string(line.substr(0, space))], counts);
}

std::string formatRows(std::string_view format, const CounterRows &rows) {
  std::string text = std::string(format) + "\n";
  for (const auto &[name, counts] : rows) {
    text += name;
    for (uint64_t count : counts) {
      char number[24];
      std::snprintf(number, sizeof(number), " %" PRIu64, count);
      text += number;
    }
    text += '\n';
  }
  return text;
}

} // namespace

CounterRows readCounterFile(const std::string &path, std::string_view format) {
  CounterRows rows;
  Result<std::string> text = readFile(path);
  if (!text)
    return rows;
  std::string_view rest = *text;
  size_t newline = rest.find('\n');
  if (rest.substr(0, newline) != format)
    return rows;
  while (newline != std::string_view::npos) {
    rest.remove_prefix(newline + 1);
    newline = rest.find('\n');
    addLine(rest.substr(0, newline), rows);
  }
  return rows;
}

Status addToCounterFile(const std::string &path, const std::string &lockPath,
                        std::string_view format, const CounterRows &rows) {
  Result<FileLock> lock = FileLock::acquire(lockPath);
  if (!lock)
    return lock.status();
  CounterRows total = readCounterFile(path, format);
  for (const auto &[name, counts] : rows)
    addCounts(total[name], counts);
  AtomicWriteOptions options;
  options.durable = false;
  return writeFileAtomically(path, formatRows(format, total), options);
}

} // namespace tilec::rt
