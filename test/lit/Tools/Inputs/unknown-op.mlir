func.func @f() {
  %0 = tile.frobnicate : i32
  return
}
