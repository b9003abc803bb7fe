//===- PreparedConv.h - A convolution call ready to launch ------*- C++ -*-===//
//
// Private to tilec_sparse: what submanifoldConv3d keeps per (tensor, call
// shape) so that a repeated call sets four pointers and launches.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_SPARSE_LIB_PREPAREDCONV_H
#define TILEC_SPARSE_LIB_PREPAREDCONV_H

#include "tilec/runtime/ArgPack.h"
#include "tilec/runtime/Launch.h"
#include "tilec/runtime/Module.h"

#include <memory>

namespace tilec::sparse {

struct PreparedConv {
  std::shared_ptr<const rt::Kernel> kernel;
  rt::Dim3 grid;
  rt::ArgPack pack;
  // Where x, weight, bias and y go in the pack.
  size_t x = 0, weight = 0, bias = 0, y = 0;
  bool hasBias = false;
};

} // namespace tilec::sparse

#endif // TILEC_SPARSE_LIB_PREPAREDCONV_H
