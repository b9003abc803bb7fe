/*===- c_consumer.c - tilec::c from C ----------------------------------===//
 *
 * libtilec_c.so as a C program links it: the library is the version of the
 * package that found it (TILEC_PACKAGE_VERSION, tilec_VERSION), a scene
 * comes back in the library's memory, a bad call is a status with a
 * message, and creating a runtime works on a GPU or is TILEC_ERROR_DEVICE
 * with the reason where there is none.
 *
 *===----------------------------------------------------------------------===*/

#include "check.h"

#include "tilec/tilec.h"

#include <string.h>

int main(void) {
  CHECK(strcmp(tilec_version(), TILEC_PACKAGE_VERSION) == 0,
        "libtilec_c.so is %s, the package %s", tilec_version(),
        TILEC_PACKAGE_VERSION);

  int32_t *coords = NULL;
  int64_t n = 0;
  CHECK(tilec_scene_shell(64, 1, &coords, &n) == TILEC_OK, "%s",
        tilec_last_error());
  CHECK(n == 15192, "%lld voxels", (long long)n);
  tilec_free(coords);

  CHECK(tilec_runtime_create(NULL) == TILEC_ERROR_INVALID_ARGUMENT,
        "a NULL runtime accepted");
  CHECK(strstr(tilec_last_error(), "must not be NULL") != NULL, "%s",
        tilec_last_error());

  tilec_runtime_options options;
  tilec_runtime_options_init(&options);
  CHECK(options.size == sizeof(options) && options.device == 0 &&
            options.bundle_path == NULL && options.allow_jit == 0,
        "tilec_runtime_options_init left size %zu, device %d", options.size,
        options.device);

  tilec_runtime *runtime = NULL;
  tilec_status status = tilec_runtime_create(&runtime);
  if (status == TILEC_OK) {
    printf("runtime created on device 0\n");
    tilec_runtime_destroy(runtime);
  } else {
    CHECK(status == TILEC_ERROR_DEVICE, "status %d: %s", (int)status,
          tilec_last_error());
    CHECK(tilec_last_error()[0] != '\0',
          "TILEC_ERROR_DEVICE without a message");
    printf("no device: TILEC_ERROR_DEVICE: %s\n", tilec_last_error());
  }
  return 0;
}
