//===- TtirMutator.h - Structural mutations of ttir -------------*- C++ -*-===//
//
// TtirFuzzer's custom mutator: a byte-level mutation of a kernel's ttir
// stops in the parser almost every time (a broken token, an undefined SSA
// name), so the verifiers and the passes behind them see few of the inputs.
// A structural mutation parses the module, changes it as IR (a constant's
// value, an operand replaced by another value of its type, an op dropped or
// cloned, an integer attribute changed) and prints it back, so that most
// mutants parse and reach the verifiers, the layout pass and the lowering
// with IR the kernels never build.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_FUZZ_TTIRMUTATOR_H
#define TILEC_TEST_FUZZ_TTIRMUTATOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace tilec::fuzz {

/// `text` parsed in `context`, mutated once (`seed` chooses which of the
/// five kinds above, and where) and printed, in the generic form where it
/// no longer verifies; nothing when the text does not parse or no mutation
/// of the chosen kind applies.
std::optional<std::string> mutateTtir(mlir::MLIRContext &context,
                                      std::string_view text, uint32_t seed);

} // namespace tilec::fuzz

#endif // TILEC_TEST_FUZZ_TTIRMUTATOR_H
