//===- ReadFile.h - The file layer's read under its older name --*- C++ -*-===//
//
// KernelMetadata.cpp still reads through detail::readFile; everything else
// includes tilec/runtime/FileIO.h. This goes once that file does too.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_LIB_READFILE_H
#define TILEC_RUNTIME_LIB_READFILE_H

#include "tilec/runtime/FileIO.h"

namespace tilec::rt::detail {

using rt::readFile;

} // namespace tilec::rt::detail

#endif // TILEC_RUNTIME_LIB_READFILE_H
