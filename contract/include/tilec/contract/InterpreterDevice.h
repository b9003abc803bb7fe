//===- InterpreterDevice.h - The CPU device's names -------------*- C++ -*-===//
//
// Part of the kernel contract (libtilec_contract), shared by the compiler,
// the runtime and the interpreter device (tools/interpreter-device): a CUDA
// driver, built as build/lib/interpreter-device/libcuda.so.1, that runs the
// kernels' ttir on the host with the interpreter (docs/interpreter.md). A
// program that finds it first on LD_LIBRARY_PATH runs unchanged, every kernel
// on the CPU: the runtime sees a device of this name, compiles for the
// "interp" target (the ttir stage only) and loads images that begin with the
// magic line below, which the driver parses back into the kernel's module.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_CONTRACT_INTERPRETERDEVICE_H
#define TILEC_CONTRACT_INTERPRETERDEVICE_H

#include <string_view>

namespace tilec {

/// The name the interpreter device reports (cuDeviceGetName).
inline constexpr std::string_view kInterpreterDeviceName = "tilec interpreter";
/// The compile target of that device: the pipeline stops after ttir.
inline constexpr std::string_view kInterpreterTarget = "interp";
/// How an image for it begins (an MLIR comment, so that the text after it
/// parses as it is); the image is the specialized ttir and ends with a NUL.
inline constexpr std::string_view kInterpreterImageMagic =
    "// tilec interpreter image\n";

} // namespace tilec

#endif // TILEC_CONTRACT_INTERPRETERDEVICE_H
