/*
 * The HTML report's output file and its escapes. The file is written to a
 * temporary beside its final name (`<name>.tmp.XXXXXX`) and renamed over
 * it only when complete, so a failed report leaves nothing under the name
 * asked for.
 *
 * Every string that comes from a trace (kernel names with <, > and &,
 * scope names, file names, host names) goes out through gpufl__hout_text()
 * (HTML text and attribute values) or gpufl__hout_json_str() (JSON inside
 * a <script> element): both replace bytes that are not valid UTF-8 with
 * U+FFFD, so the page is valid UTF-8 whatever the trace holds, and the
 * JSON form writes <, > and & as \u escapes, so no string can close the
 * script element ("</script>") or open a comment ("<!--").
 *
 * Errors are sticky: after the first failed write every later one is a
 * no-op and commit fails with that error. Single-threaded.
 */
#ifndef GPUFL_PRESENT_REPORT_HTML_OUT_H
#define GPUFL_PRESENT_REPORT_HTML_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct gpufl__hout {
    FILE *f;
    int err; /* errno of the first failure; 0 while all is well */
    char *path, *tmp;
} gpufl__hout;

/* Creates the temporary for path. Returns 0, or a negative gpufl_err with a
 * message naming path in err (nothing created, o zeroed). */
int gpufl__hout_open(gpufl__hout *o, const char *path, char *err, size_t err_len) __attribute__((warn_unused_result));

/* Raw text (the page's own markup, never a trace's string). */
void gpufl__hout_raw(gpufl__hout *o, const char *s);
void gpufl__hout_printf(gpufl__hout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped for HTML text and quoted attribute values. */
void gpufl__hout_text(gpufl__hout *o, const char *s);
/* s as a quoted JSON string, safe inside <script>. */
void gpufl__hout_json_str(gpufl__hout *o, const char *s);
void gpufl__hout_u64(gpufl__hout *o, uint64_t v);
void gpufl__hout_i64(gpufl__hout *o, int64_t v);

/* Flushes, closes and renames the temporary to the final name. Returns 0,
 * or a negative gpufl_err with a message naming the file in err and the
 * temporary removed. Either way o is released. */
int gpufl__hout_commit(gpufl__hout *o, char *err, size_t err_len) __attribute__((warn_unused_result));

/* Closes and removes the temporary; o is released. */
void gpufl__hout_abort(gpufl__hout *o);

/* Human-readable figures for the tables, into buf (always terminated):
 * durations as "812 ns", "3.20 us", "14.7 ms", "2.31 s"; sizes as "512 B",
 * "1.50 KiB", ... "2.00 GiB". Return buf. */
const char *gpufl__hfmt_ns(char *buf, size_t len, uint64_t ns);
const char *gpufl__hfmt_bytes(char *buf, size_t len, uint64_t bytes);

#endif /* GPUFL_PRESENT_REPORT_HTML_OUT_H */
