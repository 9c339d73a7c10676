/*
 * A small pretty-printing JSON writer for reports: a document built in a
 * growing buffer (reports are tens of KB), two-space indentation, keys in
 * the order written, strings escaped and made valid UTF-8 by
 * format/json_out.h, and numbers with a fixed number of decimals so the same
 * results give the same bytes on every machine.
 *
 * Errors are sticky: after an allocation fails every call does nothing and
 * gpufl__jw_finish() reports GPUFL_ENOMEM. Threads: one writer per thread.
 */
#ifndef GPUFL_PRESENT_REPORT_JWRITER_H
#define GPUFL_PRESENT_REPORT_JWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct jw {
    char *buf;
    size_t n, cap;
    int depth;
    bool first[JW_MAX_DEPTH]; /* no member written yet at this depth */
    bool failed;
} jw;

void gpufl__jw_init(jw *w);
/* Frees the buffer; *w is left empty. */
void gpufl__jw_free(jw *w);

/* key is the member name inside an object, NULL inside an array (or for
 * the document itself). */
void gpufl__jw_obj(jw *w, const char *key);
void gpufl__jw_obj_end(jw *w);
void gpufl__jw_arr(jw *w, const char *key);
void gpufl__jw_arr_end(jw *w);

void gpufl__jw_u64(jw *w, const char *key, uint64_t v);
void gpufl__jw_i64(jw *w, const char *key, int64_t v);
/* v rounded to `decimals` digits after the point (at most 9), trailing
 * zeros dropped; a value that is not finite is written as 0. */
void gpufl__jw_real(jw *w, const char *key, double v, unsigned decimals);
void gpufl__jw_bool(jw *w, const char *key, bool v);
void gpufl__jw_null(jw *w, const char *key);
/* s NULL is written as null. */
void gpufl__jw_str(jw *w, const char *key, const char *s);

/* Ends the document with a newline. Returns 0 with the text in w->buf
 * (w->n bytes, NUL-terminated), GPUFL_ENOMEM, or GPUFL_EINVAL when a
 * container was left open. */
int gpufl__jw_finish(jw *w) __attribute__((warn_unused_result));

/* Finishes the document, writes it to out and flushes, then frees w.
 * 0, gpufl__jw_finish's errors, or GPUFL_EIO when out refused it. */
int gpufl__jw_write(jw *w, FILE *out) __attribute__((warn_unused_result));

#endif /* GPUFL_PRESENT_REPORT_JWRITER_H */
