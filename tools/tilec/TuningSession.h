//===- TuningSession.h - The session tune and warmup run on -----*- C++ -*-===//

#ifndef TILEC_TOOLS_TILEC_TUNINGSESSION_H
#define TILEC_TOOLS_TILEC_TUNINGSESSION_H

#include "tilec/runtime/Session.h"

namespace tilec::tool {

/// The options of the session `tilec tune` and `tilec warmup` run on
/// (defined in TuneCommand.cpp): the environment's caches, pins and Redis
/// tier, the JIT, `device`, and the progress line --quiet and --progress ask
/// for. Not TILEC_BUNDLE: tuning makes what bundles are packed from, and a
/// deployed program's setting does not apply to it.
Result<rt::SessionOptions> tuningSessionOptions(int device, bool quiet,
                                                bool showProgress);

} // namespace tilec::tool

#endif // TILEC_TOOLS_TILEC_TUNINGSESSION_H
