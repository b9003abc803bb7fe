//===- ReadFile.cpp - Whole-file reads for the runtime's loaders ----------===//

#include "ReadFile.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tilec::rt::detail {

Result<std::string> readFile(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return Status::error(path + ": cannot open: " + std::strerror(errno));
  std::string contents;
  char chunk[65536];
  size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    contents.append(chunk, read);
  bool failed = std::ferror(file) != 0;
  int error = errno;
  std::fclose(file);
  if (failed)
    return Status::error(path + ": cannot read: " + std::strerror(error));
  return contents;
}

bool fileExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

} // namespace tilec::rt::detail
