//===- LiveCount.cpp - Programs past a map kernel's live count ------------===//

#include "LiveCount.h"

namespace tilec::kernel {

Tensor liveTrips(KernelBuilder &kb, Tensor first, Tensor count, int64_t perTrip,
                 int64_t trips) {
  // cdiv of a count at or below `first` is at most 0 (i32 division rounds
  // towards zero).
  return kb.let(
      "live_trips",
      kb.minimum(kb.maximum(kb.cdiv(count - first, perTrip), 0), trips));
}

void ifRowLive(KernelBuilder &kb, Tensor first, Tensor count,
               llvm::function_ref<void()> body) {
  kb.ifThen(first < count, body);
}

} // namespace tilec::kernel
