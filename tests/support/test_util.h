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

#include "fs_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ends a test's session: gpufl_shutdown() (nothing when none runs), then
 * removes the directory *log_path names, frees it and leaves it NULL
 * (nothing when it is NULL already). */
void tu_end_session(char **log_path);

/* The one session directory under log_path (malloc'd), or NULL if there is
 * not exactly one. */
char *tu_session_dir(const char *log_path);

/* Field `key` of a JSON object; fails the test when it is missing or of
 * another type. */
long long tu_int(json_t *obj, const char *key);
const char *tu_str(json_t *obj, const char *key);

/* <dir>/session.json parsed (free with json_decref); fails the test when it
 * cannot be read or parsed. */
json_t *tu_session_json(const char *dir);
/* The session.json of a session that crashed by sig: fails the test
 * (cmocka) unless its status is "crashed" and its crash has that signal.
 * The caller frees it (json_decref); *crash points into it. */
json_t *tu_crashed_session(const char *dir, int sig, json_t **crash);

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
/* Whether the session in dir logged (system channel) a line holding both a
 * and b. */
bool tu_logged(const char *dir, const char *a, const char *b);

/* Threads in this process (entries of /proc/self/task). */
int tu_thread_count(void);
/* Whether a mapped file's path in /proc/self/maps contains needle. */
bool tu_mapped(const char *needle);

/* Runs fn in a forked child and fails the test unless it returns 0; fn
 * returns __LINE__ of the check that failed. For code that must start from
 * a fresh process state (a clock never initialised, a table never filled).
 * Pass __FILE__ as file, for the message. */
void tu_expect_child_ok(int (*fn)(void), const char *file);

/* Runs argv[0] with argv (NULL-terminated) in a child process, stdout and
 * stderr captured into *out and *err (malloc'd, NUL-terminated; NULL to
 * drop them). Returns the exit status, or 128 + the signal that killed it. */
int tu_run(const char *const *argv, char **out, char **err);
/* tu_run() of "cli command ARGS..." (args NULL-terminated, at most 13). */
int tu_run_subcommand(const char *cli, const char *command, const char *const *args, char **out, char **err);

/* Runs this program again as "PROGRAM --child <name>" with the given
 * variables set (NAME=value) and unset (NULL-terminated lists, or NULL), and
 * fails the test unless it exits 0. For cases that need a fresh process
 * environment (a library found by name, variables read once). */
void tu_run_child(const char *name, const char *const *set, const char *const *unset);

/* setenv/unsetenv that abort on failure. */
void tu_setenv(const char *name, const char *value);
void tu_unsetenv(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_TEST_UTIL_H */
