//===- Progress.h - The autotuner's status line -----------------*- C++ -*-===//
//
// Private to tilec_tuning: the line `tilec tune` and `warmup` show on stderr
// while a kernel tunes (AutotuneOptions::progress says when).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_TUNING_PROGRESS_H
#define TILEC_RUNTIME_TUNING_PROGRESS_H

#include "tilec/runtime/Autotuner.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>

namespace tilec::rt::tuning {

// One status line on stderr. On a terminal it is rewritten in place; when
// forced onto a pipe or file every update is its own line.
class Progress {
public:
  Progress(ProgressMode mode, std::string title) : title_(std::move(title)) {
    terminal_ = ::isatty(STDERR_FILENO) != 0;
    enabled_ = mode == ProgressMode::Always ||
               (mode == ProgressMode::Auto && terminal_);
  }
  ~Progress() { finish(); }

  void update(const std::string &status) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::string line = title_ + ": " + status;
    if (terminal_)
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    else
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    open_ = terminal_;
  }
  // A line of its own (a failure), kept on the screen.
  void note(const std::string &message) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "%s%s: %s\n", open_ ? "\r\033[K" : "", title_.c_str(),
                 message.c_str());
    open_ = false;
  }
  void finish() {
    if (enabled_ && open_) {
      std::fprintf(stderr, "\n");
      open_ = false;
    }
  }

private:
  std::string title_;
  bool terminal_ = false;
  bool enabled_ = false;
  bool open_ = false;
  std::mutex mutex_;
};

// The progress line of one tuning run.
struct TuneProgress {
  TuneProgress(ProgressMode mode, const std::string &title, size_t total)
      : line(mode, title), total(total) {}
  void report(size_t compiled) {
    line.update("compiled " + std::to_string(compiled) + "/" +
                std::to_string(total) + ", benchmarked " +
                std::to_string(benchmarked) + ", best " + best);
  }

  Progress line;
  size_t total;
  int benchmarked = 0;
  std::string best = "-";
};

} // namespace tilec::rt::tuning

#endif // TILEC_RUNTIME_TUNING_PROGRESS_H
