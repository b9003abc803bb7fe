/*===- tilec.h - tilec's C API ---------------------------------*- C -*-===//
 *
 * One header, C linkage, opaque handles, status codes with a message getter,
 * so that Python (ctypes), Rust or any FFI binds without the C++ ABI. It is
 * the API of libtilec_c.so: the runtime with the JIT compiler linked in, and
 * the sparse convolution (docs/sparse-conv.md).
 *
 * Device pointers are CUdeviceptr values of the device's primary context
 * (the one PyTorch and the CUDA runtime use); streams are CUstream handles
 * (NULL: the legacy default stream). Nothing here synchronizes the stream
 * unless it says so.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TILEC_TILEC_H
#define TILEC_TILEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; these are its exports. */
#if defined(__GNUC__)
#define TILEC_API __attribute__((visibility("default")))
#else
#define TILEC_API
#endif

typedef enum tilec_status {
  TILEC_OK = 0,
  /* A wrong dtype, shape, size or pointer: the message says which. */
  TILEC_ERROR_INVALID_ARGUMENT = 1,
  /* The input itself is wrong (duplicate voxels, coordinates out of range). */
  TILEC_ERROR_INVALID_INPUT = 2,
  /* No GPU, or a CUDA driver call failed. */
  TILEC_ERROR_DEVICE = 3,
  /* Compiling a kernel failed, or no compiler is available for a miss. */
  TILEC_ERROR_COMPILE = 4,
  TILEC_ERROR_INTERNAL = 5,
} tilec_status;

typedef enum tilec_dtype {
  TILEC_F16 = 0,
  TILEC_BF16 = 1,
  TILEC_F32 = 2,
} tilec_dtype;

/* The message of the last error on this thread ("" after a success). */
TILEC_API const char *tilec_last_error(void);

/* The library's version, "MAJOR.MINOR.PATCH": the version of the CMake
 * package it was installed with (find_package(tilec) sets tilec_VERSION). A
 * program or binding checks it against its own before its first call, since
 * the API has no stable ABI yet. */
TILEC_API const char *tilec_version(void);

/*----------------------------------------------------------------------------
 * Runtime: one device's primary context (the one PyTorch and the CUDA runtime
 * use), the stage and autotune caches (TILEC_CACHE_DIR,
 * TILEC_AUTOTUNE_CACHE, TILEC_REDIS) and the JIT compiler. A process may
 * hold several runtimes, of one device or of several; each call makes its
 * runtime's context current on the calling thread, so any thread may call.
 *--------------------------------------------------------------------------*/

typedef struct tilec_runtime tilec_runtime;

/* Device 0, as the environment asks (TILEC_BUNDLE too). */
TILEC_API tilec_status tilec_runtime_create(tilec_runtime **runtime);

/* A runtime's options. Initialize the struct with tilec_runtime_options_init
 * before setting fields: it sets `size`, so that a program built against this
 * header keeps working with a later library whose struct has more fields
 * (they keep their defaults).
 *
 * device: the CUDA device ordinal, among those CUDA_VISIBLE_DEVICES leaves
 *   (as cuda:N in PyTorch); an ordinal the driver does not have is refused.
 * bundle_path, embedded_bundle: serve the kernels from a bundle (`tilec pack`,
 *   docs/deploy.md): a bundle file, or a table compiled into the program
 *   (`tilec bundle emit-cpp`; its type is in tilec/runtime/EmbeddedBundle.h).
 *   A bundle that is corrupt or for another GPU is refused here, before any
 *   kernel runs. With allow_jit 0 a call the bundle lacks is an error naming
 *   the kernel and key; with 1 it is tuned and compiled as without a bundle.
 *   Without either, $TILEC_BUNDLE (and $TILEC_BUNDLE_FALLBACK) apply. */
struct tilec_embedded_bundle;
typedef struct tilec_runtime_options {
  size_t size;
  int device;
  const char *bundle_path;
  const struct tilec_embedded_bundle *embedded_bundle;
  int allow_jit;
} tilec_runtime_options;
TILEC_API void tilec_runtime_options_init(tilec_runtime_options *options);
TILEC_API tilec_status tilec_runtime_create_with_options(
    const tilec_runtime_options *options, tilec_runtime **runtime);
TILEC_API void tilec_runtime_destroy(tilec_runtime *runtime);

/*----------------------------------------------------------------------------
 * Compiled kernels: a cubin and its compile json (`tilec compile --dump-dir`,
 * docs/runtime.md), launched through the runtime as C++ launches them: the
 * arguments checked against the kernel's signature and specialization, the
 * TMA tensor maps it takes (the json's tensor_maps) encoded from them.
 *--------------------------------------------------------------------------*/

typedef struct tilec_kernel tilec_kernel;

/* Loads `cubin` (cubin_size bytes) on the runtime's device with the compile
 * json `metadata` (NUL-terminated); refused if the json is malformed, names
 * no function of the cubin, or asks for more than the device has. The
 * kernel keeps the runtime's device: destroy it before the runtime. */
TILEC_API tilec_status tilec_kernel_load(tilec_runtime *runtime,
                                         const void *cubin, size_t cubin_size,
                                         const char *metadata,
                                         tilec_kernel **kernel);
TILEC_API void tilec_kernel_destroy(tilec_kernel *kernel);

/* Sets argument `index` of the signature. A value of the wrong kind (a
 * pointer for an integer argument), one that does not fit the declared
 * width, or one that breaks the kernel's specialization (a stride the
 * kernel was compiled to assume divisible by 16) is refused. Arguments keep
 * their values across launches. Not to be called on one kernel from two
 * threads at once, nor during another thread's launch of it. */
TILEC_API tilec_status tilec_kernel_set_pointer(tilec_kernel *kernel,
                                                size_t index,
                                                const void *value);
TILEC_API tilec_status tilec_kernel_set_int(tilec_kernel *kernel, size_t index,
                                            int64_t value);
TILEC_API tilec_status tilec_kernel_set_float(tilec_kernel *kernel,
                                              size_t index, double value);

/* Launches grid_x * grid_y * grid_z blocks on `stream` (a CUstream; NULL:
 * the legacy default stream) with the arguments set so far; refused if one
 * is not set or a tensor map cannot be encoded from them. */
TILEC_API tilec_status tilec_kernel_launch(tilec_kernel *kernel,
                                           uint32_t grid_x, uint32_t grid_y,
                                           uint32_t grid_z, void *stream);

/*----------------------------------------------------------------------------
 * Sparse tensors and submanifold convolution
 *
 * A runtime's sparse calls (its tensors, their maps, the convolutions and
 * their gradients, tilec_compile_layers_ahead, tilec_retire_predictions)
 * share its plans and caches: calls on one runtime must not overlap; make
 * them from one thread, or hold a lock around each (the Python package holds
 * its runtime's lock). Other runtimes' calls may run at the same time.
 *--------------------------------------------------------------------------*/

typedef struct tilec_sparse_tensor tilec_sparse_tensor;

/* `coords`: n voxels of int32 (batch, x, y, z) on the device, each voxel at
 * most once, 0 <= batch, x, y, z < 65536. The tensor keeps the pointer (the
 * caller keeps the memory alive) and caches the neighbour maps it builds,
 * per (kernel size, dilation, row block). */
TILEC_API tilec_status tilec_sparse_tensor_create(tilec_runtime *runtime,
                                                  const int32_t *coords,
                                                  int64_t n,
                                                  tilec_sparse_tensor **tensor);
/* Frees the tensor's maps without waiting for the device: on the legacy
 * default stream, after the work queued so far on every stream that built or
 * read them. Those streams must not have been destroyed yet. */
TILEC_API void tilec_sparse_tensor_destroy(tilec_sparse_tensor *tensor);

/* How the tensor's maps order the rows of the convolution's GEMM
 * (docs/sparse-conv.md): by the neighbour bitmask's key (the faster map
 * build), or then each row moved to the leanest group of rows that runs its
 * offsets (less GEMM work on surfaces and street scenes), or the latter only
 * where the convolution that first builds the maps has CI * CO >= 256 * 256
 * (the default: the round's map time pays back within a few such layers). */
typedef enum tilec_row_order {
  TILEC_ROW_ORDER_KEY = 0,
  TILEC_ROW_ORDER_LEAN_GROUPS = 1,
  TILEC_ROW_ORDER_AUTO = 2,
} tilec_row_order;

/* Sets the row order of the maps `tensor` builds, before its first maps are
 * built: another order after them, or a value that is no tilec_row_order,
 * is TILEC_ERROR_INVALID_ARGUMENT. */
TILEC_API tilec_status tilec_sparse_tensor_set_row_order(
    tilec_sparse_tensor *tensor, tilec_row_order order);

/* Builds (or finds cached) the maps of a kernel_size^3 window (odd) with
 * `dilation` for every row block the convolution may use, on `stream`, and
 * synchronizes it. Duplicate voxels are TILEC_ERROR_INVALID_INPUT. Optional:
 * the convolution builds what it needs. */
TILEC_API tilec_status
tilec_sparse_tensor_build_maps(tilec_sparse_tensor *tensor, int32_t kernel_size,
                               int32_t dilation, void *stream);

/* As tilec_sparse_tensor_build_maps, for the row blocks of `block_rows` rows
 * alone: what a convolution whose tuned winner runs them builds (one of the
 * sizes it tunes over: 64, and 128 above 4,096 voxels; another size is
 * TILEC_ERROR_INVALID_ARGUMENT). */
TILEC_API tilec_status tilec_sparse_tensor_build_maps_rows(
    tilec_sparse_tensor *tensor, int32_t kernel_size, int32_t dilation,
    int32_t block_rows, void *stream);

/* The number of (voxel, offset) pairs with a neighbour, from built maps:
 * useful FLOPs of a convolution = 2 * pairs * ci * co. */
TILEC_API tilec_status tilec_sparse_tensor_active_pairs(
    tilec_sparse_tensor *tensor, int32_t kernel_size, int32_t dilation,
    int64_t *pairs);

/* y[n, co] = bias[co] + sum over offsets v with a neighbour j of voxel i:
 * sum_c x[j, c] * weight[co, v, c]. x: [n, ci], weight: [co, k, k, k, ci],
 * bias: [co] or NULL, y: [n, co], all contiguous, of `dtype`, on the device;
 * f32 may use tf32 tensor cores when allow_tf32 is nonzero. The first call
 * of a shape tunes the kernel (and persists the winner) unless the autotune
 * cache has it. Runs on `stream`; does not synchronize it, but the first
 * call over maps not built yet waits for their build (the convolution is
 * queued first) and fails for a duplicate voxel or a coordinate out of
 * range: y is then not to be read (the kernel may have written it). */
TILEC_API tilec_status tilec_submanifold_conv3d(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *bias, void *y, int32_t ci, int32_t co, int32_t kernel_size,
    int32_t dilation, tilec_dtype dtype, int32_t allow_tf32, void *stream);

/* The gradients of tilec_submanifold_conv3d(tensor, x, weight, bias, y, ci,
 * co, kernel_size, dilation, dtype, allow_tf32) for dy = dL/dy [n, co]: each
 * one computed where its pointer is not NULL, overwriting it: dx [n, ci] of
 * `dtype`; dw [co, k, k, k, ci] and db [co] of `dtype`, or f32 when
 * weight_grad_f32 is nonzero (fp16 weight gradients overflow in
 * mixed-precision training). weight is read for dx, x for dw. Every sum
 * runs in an order fixed by the call: the same inputs give the same bits in
 * every process. Uses (or builds) the tensor's maps; the first call of a
 * shape tunes its kernels unless the autotune cache has them. Runs on
 * `stream`; does not synchronize it. */
TILEC_API tilec_status tilec_submanifold_conv3d_backward(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *dy, void *dx, void *dw, void *db, int32_t ci, int32_t co,
    int32_t kernel_size, int32_t dilation, tilec_dtype dtype,
    int32_t allow_tf32, int32_t weight_grad_f32, void *stream);

/* tilec_submanifold_conv3d and its backward for any window: kernel[0..2]
 * odd extents from 1 to 7 (weight [co, kernel[0], kernel[1], kernel[2],
 * ci]) and dilation[0..2] per axis (x, y, z); the other arguments as
 * theirs. Cubic windows give the same results as the calls above. */
TILEC_API tilec_status tilec_submanifold_conv3d_window(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *bias, void *y, int32_t ci, int32_t co, const int32_t kernel[3],
    const int32_t dilation[3], tilec_dtype dtype, int32_t allow_tf32,
    void *stream);
TILEC_API tilec_status tilec_submanifold_conv3d_window_backward(
    tilec_sparse_tensor *tensor, const void *x, const void *weight,
    const void *dy, void *dx, void *dw, void *db, int32_t ci, int32_t co,
    const int32_t kernel[3], const int32_t dilation[3], tilec_dtype dtype,
    int32_t allow_tf32, int32_t weight_grad_f32, void *stream);

/*----------------------------------------------------------------------------
 * Strided and inverse sparse convolutions (spconv's SparseConv3d and
 * SparseInverseConv3d; docs/sparse-conv.md)
 *--------------------------------------------------------------------------*/

/* A convolution's geometry per axis (x, y, z): output voxel o reads, at
 * kernel offset k of an axis, the input voxel o * stride - padding +
 * k * dilation (spconv's and PyTorch's indexing). kernel 1 to 7, stride and
 * dilation at least 1, padding at least 0. */
typedef struct tilec_conv_geometry {
  int32_t kernel[3], stride[3], padding[3], dilation[3];
} tilec_conv_geometry;

/* Builds (or finds cached) the strided convolution `geometry` over
 * `tensor`'s voxels on a grid of spatial_shape[0..2] voxels per axis
 * holding `batches` batches, on `stream` (synchronizing it), and returns
 * its output voxels' count in *outputs and the output grid in
 * output_shape[0..2] (either may be NULL). The outputs are in ascending
 * (batch, x, y, z) order: the same in every process. A voxel outside the
 * grid is TILEC_ERROR_INVALID_INPUT; a geometry with no output grid
 * TILEC_ERROR_INVALID_ARGUMENT. */
TILEC_API tilec_status tilec_sparse_tensor_strided(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, void *stream,
    int64_t *outputs, int64_t output_shape[3]);

/* Copies the output voxels of that strided convolution (built as above if
 * it is not) into coords: outputs x (batch, x, y, z) int32 on the device,
 * queued on `stream`. */
TILEC_API tilec_status tilec_sparse_tensor_strided_coords(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, int32_t *coords,
    void *stream);

/* y = the strided convolution of x over `tensor`'s voxels: x [n, ci], y
 * [outputs, co]; with `inverse` nonzero the inverse convolution over the
 * same maps: x [outputs, ci], y [n, co]. weight [co, kx, ky, kz, ci], bias
 * [co] or NULL, all contiguous, of `dtype`, on the device; f32 may use tf32
 * tensor cores when allow_tf32 is nonzero. Builds the maps as
 * tilec_sparse_tensor_strided on first use; the first call of a shape tunes
 * the kernel unless the autotune cache has it. Runs on `stream`. */
TILEC_API tilec_status tilec_sparse_conv3d(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, int32_t inverse,
    const void *x, const void *weight, const void *bias, void *y, int32_t ci,
    int32_t co, tilec_dtype dtype, int32_t allow_tf32, void *stream);

/* The gradients of tilec_sparse_conv3d with the same arguments for dy =
 * dL/dy (y's rows, co): each one computed where its pointer is not NULL,
 * overwriting it, as tilec_submanifold_conv3d_backward's: dx (x's rows, ci)
 * of `dtype`; dw [co, kx, ky, kz, ci] and db [co] of `dtype`, or f32 with
 * weight_grad_f32. weight is read for dx, x for dw. The same inputs give
 * the same bits in every process. Runs on `stream`. */
TILEC_API tilec_status tilec_sparse_conv3d_backward(
    tilec_sparse_tensor *tensor, const tilec_conv_geometry *geometry,
    const int64_t spatial_shape[3], int64_t batches, int32_t inverse,
    const void *x, const void *weight, const void *dy, void *dx, void *dw,
    void *db, int32_t ci, int32_t co, tilec_dtype dtype, int32_t allow_tf32,
    int32_t weight_grad_f32, void *stream);

/*----------------------------------------------------------------------------
 * A network's convolutions compiled ahead (docs/sparse-conv.md, "A network's
 * first pass")
 *--------------------------------------------------------------------------*/

/* A convolution layer a network will run, as far as it is known before it
 * runs: its channels, kernel extents (x, y, z) and dilations, dtype, bias,
 * tf32; `voxels` the count its first call is expected to see (the tunings'
 * size bucket); `strided` nonzero for tilec_sparse_conv3d's layers (strided
 * or inverse; extents may be even there); which gradients training will ask
 * of it; for a strided layer that builds its maps (not an inverse one), its
 * stride and padding per axis, so that its build's kernels compile ahead
 * too (zeros: not given; 0 to 65536). */
typedef struct tilec_conv_layer_plan {
  int64_t voxels;
  int32_t ci, co;
  int32_t kernel[3], dilation[3];
  tilec_dtype dtype;
  int32_t has_bias, allow_tf32, strided;
  int32_t input_gradient, weight_gradient;
  int32_t stride[3], padding[3];
} tilec_conv_layer_plan;

/* Queues on the runtime's compile workers the compiles of every kernel
 * candidate that the first calls of layers[0..count) would tune (none where
 * an autotune cache entry, a bundle or a pin answers the call), in the
 * layers' order, and returns without waiting: the tunings of a network's
 * first pass then take their candidates compiled on every core while the
 * layers before them tune. Where no call of the first layer would be tuned
 * (a network tuned before), nothing is queued. *queued (may be NULL): the
 * compiles queued. A layer out of range is TILEC_ERROR_INVALID_ARGUMENT
 * naming it ("layer plan 2: ..."), checked before the runtime; nothing is
 * queued then. */
TILEC_API tilec_status tilec_compile_layers_ahead(
    tilec_runtime *runtime, const tilec_conv_layer_plan *layers, size_t count,
    size_t *queued);

/* Under TILEC_FIRST_USE=predict, a key's first call runs the kernel's
 * predicted config, compiled alone and not benchmarked (docs/autotune.md,
 * "A first call without tuning"). This ends that: every prediction is
 * dropped, its other candidates are queued on the compile workers, and from
 * here on each key, predicted before or new, is tuned on its next call, as
 * under TILEC_FIRST_USE=tune. *retired (may be NULL): the predictions
 * dropped. */
TILEC_API tilec_status tilec_retire_predictions(tilec_runtime *runtime,
                                                size_t *retired);

/*----------------------------------------------------------------------------
 * Voxel scenes for tests and benchmarks (host memory; free with tilec_free)
 *--------------------------------------------------------------------------*/

/* A thin spherical shell in a res^3 grid (15,192 voxels at res 64), res
 * from 1 to 4096. A scene holds at most 2^28 voxels (what a sparse tensor
 * holds): larger ones are refused before any work. */
TILEC_API tilec_status tilec_scene_shell(int32_t res, int32_t batch,
                                         int32_t **coords, int64_t *n);
/* `count` distinct voxels drawn uniformly from a res^3 grid per batch (all
 * of it when count is larger), at most 2^28 in all. */
TILEC_API tilec_status tilec_scene_uniform(int64_t count, int32_t res,
                                           int32_t batch, uint64_t seed,
                                           int32_t **coords, int64_t *n);
/* A LiDAR-like street scene voxelized at 0.1 m (about 107k voxels). */
TILEC_API tilec_status tilec_scene_lidar(uint64_t seed, int32_t **coords,
                                         int64_t *n);
TILEC_API void tilec_free(void *memory);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_TILEC_H */
