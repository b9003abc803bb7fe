//===- Runtime.h - Everything a program needs to launch kernels -*- C++ -*-===//
//
// Part of tilec_runtime, the launch library.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_RUNTIME_RUNTIME_H
#define TILEC_RUNTIME_RUNTIME_H

#include "tilec/contract/ArgType.h"
#include "tilec/contract/CompileMetadata.h"
#include "tilec/contract/Status.h"
#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Context.h"
#include "tilec/runtime/Device.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/DevicePool.h"
#include "tilec/runtime/DevicePtr.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/Event.h"
#include "tilec/runtime/KernelLoader.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"
#include "tilec/runtime/Stream.h"

#endif // TILEC_RUNTIME_RUNTIME_H
