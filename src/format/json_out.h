/*
 * JSON output primitives (see json_out.c). Each writes at p and returns the
 * new end; the caller guarantees room: 20 bytes for an integer, 21 for a
 * fixed-point number (20 digits and the point), 20 for a hex string,
 * 6 * n + 2 for a string of n bytes.
 */
#ifndef GPUFL_FORMAT_JSON_OUT_H
#define GPUFL_FORMAT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GFL_JSTR_BOUND(n) (6 * (size_t)(n) + 2)

static inline char *gpufl__jput_raw(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define GFL_JLIT(p, lit) gpufl__jput_raw((p), (lit), sizeof(lit) - 1)

char *gpufl__jput_u64(char *p, uint64_t v);
char *gpufl__jput_i64(char *p, int64_t v);
/* v / 10^decimals, e.g. (1234, 2) -> 12.34, (1200, 2) -> 12, (5, 4) -> 0.0005;
 * decimals <= 19 (10^decimals must fit in 64 bits) */
char *gpufl__jput_fixed(char *p, uint64_t v, unsigned decimals);
/* "0x..." as a JSON string: addresses exceed the 2^53 that JSON readers keep exact */
char *gpufl__jput_hex(char *p, uint64_t v);
/* A quoted JSON string; control characters escaped, bytes that are not
 * UTF-8 replaced by U+FFFD so every line is valid JSON. */
char *gpufl__jput_str(char *p, const char *s, size_t n);

#endif /* GPUFL_FORMAT_JSON_OUT_H */
