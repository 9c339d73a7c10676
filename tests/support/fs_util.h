/*
 * File helpers shared by the tests and the benchmarks: temporary
 * directories, rm -rf, whole-file reads and writes. Failures to create
 * what a test needs abort with a message.
 */
#ifndef GPUFL_FS_UTIL_H
#define GPUFL_FS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A fresh directory <base>/gpufl-<tag>-XXXXXX (malloc'd path); base NULL or
 * "" means /tmp. */
char *tu_mkdtemp_in(const char *base, const char *tag);
/* The same under /tmp. */
char *tu_mkdtemp(const char *tag);
/* rm -rf. */
void tu_rm_rf(const char *path);
/* The whole file, NUL-terminated (malloc'd), or NULL; *len if non-NULL. */
char *tu_read_file(const char *path, size_t *len);
/* Writes text to path; aborts on failure. */
void tu_write_file(const char *path, const char *text);
bool tu_exists(const char *path);

/* Defines `static char *var` and the cmocka fixtures setup() and teardown():
 * each test runs with var a fresh temporary directory (tag in its name),
 * removed with all it holds after the test. */
#define TU_TEMP_DIR_FIXTURES(var, tag)                                                                                 \
    static char *var;                                                                                                  \
    static int setup(void **state)                                                                                     \
    {                                                                                                                  \
        (void)state;                                                                                                   \
        var = tu_mkdtemp(tag);                                                                                         \
        return 0;                                                                                                      \
    }                                                                                                                  \
    static int teardown(void **state)                                                                                  \
    {                                                                                                                  \
        (void)state;                                                                                                   \
        tu_rm_rf(var);                                                                                                 \
        free(var);                                                                                                     \
        return 0;                                                                                                      \
    }

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_FS_UTIL_H */
