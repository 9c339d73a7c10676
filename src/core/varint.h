/*
 * LEB128 varints and zigzag, the integer encoding of .gflt chunks
 * (docs/FORMAT.md): 7 bits per byte, low bits first, the high bit set on
 * every byte but the last; at most 10 bytes for 64 bits. Zigzag maps small
 * signed numbers to small unsigned ones (0, -1, 1, -2 -> 0, 1, 2, 3).
 *
 * Inline: the .gflt writer and reader call these for every field of every
 * event. Decoding never reads past its end.
 */
#ifndef GPUFL_CORE_VARINT_H
#define GPUFL_CORE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define GFL_VARINT_MAX 10

static inline uint64_t gpufl__zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t gpufl__unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

/* Writes v at p (room for GFL_VARINT_MAX bytes); returns the new end. */
static inline uint8_t *gpufl__put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads one varint from [*pp, end). Returns 0 with *out set and *pp moved
 * past it, or -1 (truncated, longer than 10 bytes, or more than 64 bits)
 * with *pp unchanged. */
static inline int gpufl__get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) { /* the common one-byte case */
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            *pp = p;
            return 0;
        }
    }
    return -1;
}

#endif /* GPUFL_CORE_VARINT_H */
