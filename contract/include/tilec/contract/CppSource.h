//===- CppSource.h - Contract objects written as C++ that builds them -*- C++ -*-===//
//
// Part of the kernel contract. `tilec bundle emit-cpp` compiles a bundle into
// a program; with these, the kernel descriptions and compile jsons it holds
// go in as code that constructs the objects, so that a program's first call
// parses no json (docs/deploy.md). Each is the same object its json reads to:
// KernelDescription::toCpp builds what fromJson(toJson()) returns, and
// CompileMetadata::toCpp what parse(toJson()) returns (the embedded-bundle
// test checks both through the generated code).
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_CPPSOURCE_H
#define TILEC_CONTRACT_CPPSOURCE_H

#include <string>
#include <string_view>

namespace tilec {

/// `text` as a C/C++ string literal: quotes and backslashes escaped, control
/// and non-ASCII bytes as three-digit octal escapes (so that a following
/// digit is not absorbed), '?' escaped (no trigraphs), split into pieces of
/// about 100 columns.
std::string cppStringLiteral(std::string_view text);

} // namespace tilec

#endif // TILEC_CONTRACT_CPPSOURCE_H
