/*
 * UTF-8 checks for text that gpufl writes as JSON (session.json) or names
 * in messages. JSON text must be valid UTF-8, and names that come from
 * outside (an app name, a directory, a string read from a trace) need not
 * be; the NDJSON writer and session.json both put U+FFFD in place of each
 * byte that is not part of a valid sequence, so every file stays valid JSON.
 * Any thread; no state.
 */
#ifndef GPUFL_CORE_UTF8_H
#define GPUFL_CORE_UTF8_H

#include <jansson.h>
#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 sequence at s, which has n > 0
 * bytes left, or 0 when s[0] does not start one (overlong forms,
 * surrogates and code points above U+10FFFF are not valid). */
size_t gpufl__utf8_seq(const unsigned char *s, size_t n);

/* The offset of the first byte of s[0..n) that is not valid UTF-8, or n
 * when all of it is. */
size_t gpufl__utf8_invalid_at(const char *s, size_t n);

/* A malloc'd copy of the NUL-terminated s with U+FFFD in place of every
 * byte that is not valid UTF-8; NULL only when out of memory. */
char *gpufl__utf8_fix(const char *s);

/* A JSON string of s (NULL: ""), U+FFFD in place of bytes that are not
 * UTF-8, where json_string() would return NULL and take the whole document
 * down with it. NULL only when out of memory. */
json_t *gpufl__json_text(const char *s);

#endif /* GPUFL_CORE_UTF8_H */
