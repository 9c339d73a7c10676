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

/* "00".."99": two digits per table read, half the divisions of one. */
extern const char gpufl__digit_pairs[200];
/* 10^0 .. 10^19 */
extern const uint64_t gpufl__pow10[20];

/* The digits of v > 0 (1 to 10): log2 from the highest bit, times
 * log10(2) ~ 1233 / 4096, corrected by one comparison. */
static inline unsigned gpufl__u32_digits(uint32_t v)
{
    unsigned t = ((32u - (unsigned)__builtin_clz(v | 1)) * 1233u) >> 12;
    return t + (v >= gpufl__pow10[t]);
}

/* The n digits of v < 10^n, written backwards from p + n. */
static inline void gpufl__jput_digits(char *p, uint32_t v, unsigned n)
{
    char *q = p + n;
    while (v >= 100) {
        q -= 2;
        memcpy(q, gpufl__digit_pairs + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(q - 2, gpufl__digit_pairs + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
}

/* Exactly 8 digits, leading zeros included: two independent halves, so
 * the divisions overlap instead of waiting on each other. */
static inline char *gpufl__jput_8digits(char *p, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    memcpy(p, gpufl__digit_pairs + 2 * (hi / 100), 2);
    memcpy(p + 2, gpufl__digit_pairs + 2 * (hi % 100), 2);
    memcpy(p + 4, gpufl__digit_pairs + 2 * (lo / 100), 2);
    memcpy(p + 6, gpufl__digit_pairs + 2 * (lo % 100), 2);
    return p + 8;
}

/* A 32-bit value, without leading zeros. */
static inline char *gpufl__jput_u32(char *p, uint32_t v)
{
    if (v < 10) {
        *p = (char)('0' + v);
        return p + 1;
    }
    unsigned n = gpufl__u32_digits(v);
    gpufl__jput_digits(p, v, n);
    return p + n;
}

/* Inline: the writer puts a dozen integers per line, most of them small
 * or nanosecond times of 13 to 19 digits, which go as blocks of 8 digits
 * in 32-bit arithmetic rather than a 64-bit division per digit pair. */
static inline char *gpufl__jput_u64(char *p, uint64_t v)
{
    if (v <= UINT32_MAX)
        return gpufl__jput_u32(p, (uint32_t)v);
    uint64_t hi = v / 100000000u;
    uint32_t lo = (uint32_t)(v % 100000000u);
    if (hi <= UINT32_MAX) {
        p = gpufl__jput_u32(p, (uint32_t)hi);
    } else {
        p = gpufl__jput_u32(p, (uint32_t)(hi / 100000000u));
        p = gpufl__jput_8digits(p, (uint32_t)(hi % 100000000u));
    }
    return gpufl__jput_8digits(p, lo);
}

static inline char *gpufl__jput_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return gpufl__jput_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return gpufl__jput_u64(p, (uint64_t)v);
}

/* v / 10^decimals, e.g. (1234, 2) -> 12.34, (1200, 2) -> 12, (5, 4) -> 0.0005;
 * decimals <= 19 (10^decimals must fit in 64 bits) */
char *gpufl__jput_fixed(char *p, uint64_t v, unsigned decimals);
/* "0x..." as a JSON string: addresses exceed the 2^53 that JSON readers keep exact */
char *gpufl__jput_hex(char *p, uint64_t v);
/* A quoted JSON string; control characters escaped, bytes that are not
 * UTF-8 replaced by U+FFFD so every line is valid JSON. */
char *gpufl__jput_str(char *p, const char *s, size_t n);

#endif /* GPUFL_FORMAT_JSON_OUT_H */
