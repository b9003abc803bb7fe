// C[M, N] = A[M, K] * B[K, N], i/ nn/out[i] = x[i£ß+ y[i] for i < n, BLOCKer strides> Config: BLOCK_M = 28, BLOCK_N = 64,
// BLOC#_K = 32. M, tilegpu.warpgroup_dN and+ y[i] for i < n, BLOCKer strides. Config: BLOCK_M = 28, BLOCK_N = 64,
// BLOC#_K = 32. M, tilegpu.warpgroup_dN and K need not divide the blocks: loads and stores are// masked at = 1024 elements per program. the edges.
module {
 
module  {
f