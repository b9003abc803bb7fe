// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu=target=sm_90 -convert-tilegpu-to-llvm | FileCheck %s
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu=target=sm_90a -convert-tilegpu-to-llvm | FileCheck %s
// RUN: tilec-opt %s -split-input-file -convert-tile-to-tilegpu=target=sm_80 -convert-tilegpu-to-llvm | FileCheck %s --check-prefix=SM80

// From sm_90 on, every kernel begins by letting the grids that depend on it
// launch and then waiting for the grids it depends on (griddepcontrol): a
// graph may launch it behind a programmatic edge. sm_80 has no griddepcontrol.
// CHECK-LABEL: llvm.func @kernel
// CHECK-NEXT: nvvm.griddepcontrol launch_dependents
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: llvm.return
// SM80-LABEL: llvm.func @kernel
// SM80-NOT: nvvm.griddepcontrol
func.func @kernel(%p: !tile.ptr<f32>) attributes {tile.kernel} {
  %v = arith.constant 1.0 : f32
  tile.store %p, %v : !tile.ptr<f32>
  return
}

// -----

// A function that is not a kernel gets none.
// CHECK-LABEL: llvm.func @helper
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: llvm.return
// SM80-LABEL: llvm.func @helper
func.func @helper(%x: i32) -> i32 {
  return %x : i32
}
