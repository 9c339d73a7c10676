/*
 * Helpers shared by the tests: temporary directories, reading back what a
 * session wrote, and looking at the process (threads, mapped libraries).
 * Tests only; failures abort the test with a message.
 */
#ifndef GPUFL_TEST_UTIL_H
#define GPUFL_TEST_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A fresh directory under /tmp (malloc'd path). */
char *tu_mkdtemp(const char *tag);
/* rm -rf. */
void tu_rm_rf(const char *path);
/* The whole file, NUL-terminated (malloc'd), or NULL; *len if non-NULL. */
char *tu_read_file(const char *path, size_t *len);
/* Writes text to path; aborts on failure. */
void tu_write_file(const char *path, const char *text);
bool tu_exists(const char *path);

/* The one session directory under log_path (malloc'd), or NULL if there is
 * not exactly one. */
char *tu_session_dir(const char *log_path);

/* An NDJSON file read back: every newline-terminated line parsed. */
typedef struct tu_ndjson {
    json_t **lines;
    size_t n, cap;
    size_t tail_bytes; /* bytes after the last newline (a torn final write) */
} tu_ndjson;

/* Loads path. Returns 0, or -1 after printing which line failed to parse. */
int tu_ndjson_load(const char *path, tu_ndjson *out);
/* Loads <dir>/<channel>.log and its rotated parts (<channel>.N.log first,
 * in order), as one sequence. */
int tu_ndjson_load_channel(const char *dir, const char *channel, tu_ndjson *out);
void tu_ndjson_free(tu_ndjson *f);
size_t tu_count_type(const tu_ndjson *f, const char *type);
/* The i-th line of the given type, or NULL. */
json_t *tu_nth_type(const tu_ndjson *f, const char *type, size_t i);
/* Sums an integer field over lines of a type (e.g. "dropped", "count"). */
long long tu_sum_field(const tu_ndjson *f, const char *type, const char *field);

/* Threads in this process (entries of /proc/self/task). */
int tu_thread_count(void);
/* Whether a mapped file's path in /proc/self/maps contains needle. */
bool tu_mapped(const char *needle);

/* setenv/unsetenv that abort on failure. */
void tu_setenv(const char *name, const char *value);
void tu_unsetenv(const char *name);

#endif /* GPUFL_TEST_UTIL_H */
