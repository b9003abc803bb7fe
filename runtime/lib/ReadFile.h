//===- ReadFile.h - Whole-file reads for the runtime's loaders --*- C++ -*-===//

#ifndef TILEC_RUNTIME_LIB_READFILE_H
#define TILEC_RUNTIME_LIB_READFILE_H

#include "tilec/contract/Status.h"

#include <string>

namespace tilec::rt::detail {

// The file's bytes; errors name the path and the OS reason.
Result<std::string> readFile(const std::string &path);

bool fileExists(const std::string &path);

} // namespace tilec::rt::detail

#endif // TILEC_RUNTIME_LIB_READFILE_H
