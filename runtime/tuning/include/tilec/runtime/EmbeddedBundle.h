/*===- EmbeddedBundle.h - A kernel bundle compiled into a program -*- C -*-===//
 *
 * Part of tilec_tuning. `tilec bundle emit-cpp` writes a source file that
 * defines one tilec_embedded_bundle: the same content as a bundle file
 * (Bundle.h), as constant data the linker places in the program, so that
 * nothing is read from disk or parsed at start-up. The types are plain C so
 * that the generated file compiles anywhere and the table can be handed
 * across a C API; KernelBundle::fromEmbedded turns it into a bundle.
 *
 * Every string is NUL-terminated; `data` of a cubin holds `bytes` bytes whose
 * CRC-32C is `crc32c` (checked before the cubin is first loaded).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TILEC_RUNTIME_EMBEDDEDBUNDLE_H
#define TILEC_RUNTIME_EMBEDDEDBUNDLE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of these structs; a generated file records the version it was
 * written for, and a runtime refuses another. */
#define TILEC_EMBEDDED_BUNDLE_VERSION 2

typedef struct tilec_embedded_kernel {
  const char *name;
  /* KernelDescription::toJson() of the kernel. */
  const char *description_json;
  /* The same description compiled in: returns a `const
   * tilec::KernelDescription *` built on its first call (the generated C++
   * constructs it, so no json is parsed), or is null, and the json is parsed.
   * The generated file and the runtime must come from one tilec version. */
  const void *(*description)(void);
} tilec_embedded_kernel;

typedef struct tilec_embedded_cubin {
  const char *kernel;
  /* Canonical config and specialization texts (Config::str,
   * Specialization::str). */
  const char *config;
  const char *specialization;
  /* "sm_90", "sm_90a". */
  const char *target;
  /* The stage cache's key of the cubin (provenance; not needed to load). */
  const char *cubin_key;
  /* The compile json, and the same compiled in (a `const
   * tilec::CompileMetadata *`, or null: parse the json). */
  const char *metadata_json;
  const void *(*metadata)(void);
  const unsigned char *data;
  unsigned long long bytes;
  unsigned int crc32c;
} tilec_embedded_cubin;

typedef struct tilec_embedded_selection {
  /* The device the winner was tuned on ("NVIDIA H200") and its target. */
  const char *device;
  const char *target;
  const char *kernel;
  /* The autotune key with its specialization, as in the autotune cache. */
  const char *key;
  /* Index into the bundle's cubins. */
  unsigned int cubin;
  /* The winner's median when tuned; 0 when it was not benchmarked. */
  double median_us;
} tilec_embedded_selection;

typedef struct tilec_embedded_bundle {
  unsigned int layout_version;
  /* The name given to `tilec bundle emit-cpp` (a C identifier). */
  const char *name;
  const char *created_at;
  const char *packed_by;
  const tilec_embedded_kernel *kernels;
  unsigned int kernel_count;
  const tilec_embedded_cubin *cubins;
  unsigned int cubin_count;
  const tilec_embedded_selection *selections;
  unsigned int selection_count;
} tilec_embedded_bundle;

#ifdef __cplusplus
}
#endif

#endif /* TILEC_RUNTIME_EMBEDDEDBUNDLE_H */
