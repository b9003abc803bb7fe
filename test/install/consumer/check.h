/*===- check.h - The consumer programs' one assertion -----------*- C -*-===//
 *
 * Each consumer program is a ctest test of the consumer project: CHECK
 * prints what failed, where, and exits non-zero. C and C++ alike, so that the
 * C API's consumer uses it too.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TILEC_CONSUMER_CHECK_H
#define TILEC_CONSUMER_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(condition, ...)                                                  \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__,         \
              #condition);                                                     \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#endif /* TILEC_CONSUMER_CHECK_H */
