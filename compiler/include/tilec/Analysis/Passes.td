//===- Passes.td - analysis test passes --------------------*- tablegen -*-===//

#ifndef TILEC_ANALYSIS_PASSES_TD
#define TILEC_ANALYSIS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TestPrintAxisInfo : Pass<"tilec-test-print-axis-info", "mlir::ModuleOp"> {
  let summary = "Print the axis information of every integer and pointer value";
  let description = [{
    For lit tests of `ModuleAxisInfoAnalysis`: emits a remark
    `contiguity = [..], divisibility = [..], constancy = [..],
    constant_value = ..` at every op with an integer or pointer result
    (prefixed `result #i: ` when the op has several) and, for the block
    arguments of regions inside functions (loop induction variables and
    carried values), one `region arg #i: ` remark at the owning op.
  }];
}

#endif // TILEC_ANALYSIS_PASSES_TD
