//===- jit_consumer.cpp - tilec::compiler ---------------------------------===//
//
// The JIT from the installed package: it describes a kernel of its registry
// (no GPU, no ptxas), names an unknown one in its error, and compiles
// vector_add to an sm_90 cubin where ptxas is found.
//
//===----------------------------------------------------------------------===//

#include "check.h"

#include "tilec/JIT/TilecJIT.h"
#include "tilec/Target/CubinAssembler.h"

#include "llvm/Support/Error.h"

#include <string>

int main() {
  tilec::jit::TilecJIT jit;
  auto description = jit.describe("vector_add");
  CHECK(description, "%s", description.message().c_str());
  CHECK(description->getSignature().size() == 4 &&
            description->getSignature()[3].name == "n_elements",
        "vector_add's signature");
  auto config = tilec::Config::parse("BLOCK=1024,num_warps=4");
  CHECK(config, "%s", config.message().c_str());
  tilec::Call call;
  call.sizes = {{"n_elements", 100003}};
  auto grid = description->evaluateGrid(*config, call);
  CHECK(grid && grid->x == 98, "grid of 100003 elements with BLOCK=1024");

  auto unknown = jit.compile("no_such_kernel", *config, "sm_90", {});
  CHECK(!unknown && unknown.message().find("unknown kernel 'no_such_kernel'") !=
                        std::string::npos,
        "%s", unknown ? "compiled" : unknown.message().c_str());

  auto ptxas = tilec::findPtxas();
  if (!ptxas) {
    std::printf("no ptxas (%s): vector_add not compiled\n",
                llvm::toString(ptxas.takeError()).c_str());
    return 0;
  }
  auto artifact = jit.compile("vector_add", *config, "sm_90", {});
  CHECK(artifact, "%s", artifact.message().c_str());
  CHECK(artifact->cubin.rfind("\177ELF", 0) == 0, "the cubin is no ELF file");
  CHECK(artifact->metadata.name == "vector_add", "%s",
        artifact->metadata.toJson().c_str());
  std::printf("vector_add %s for sm_90: %zu-byte cubin (ptxas %s)\n",
              config->str().c_str(), artifact->cubin.size(), ptxas->c_str());
  return 0;
}
