/*
 * An unsigned integer field of 1, 2, 4 or 8 bytes at a byte address, read
 * zero-extended to 64 bits or written truncated from them: how the .gflt
 * codec and the NDJSON reader move values in and out of event structs
 * described by (offset, size) tables. Always inlined, so that a caller
 * whose size is a constant gets one load or store.
 */
#ifndef GPUFL_CORE_UINT_FIELD_H
#define GPUFL_CORE_UINT_FIELD_H

#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t gpufl__uint_get(const void *at, unsigned size)
{
    const uint8_t *p = (const uint8_t *)at;
    switch (size) {
    case 1: return *p;
    case 2: {
        uint16_t v;
        __builtin_memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        __builtin_memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        __builtin_memcpy(&v, p, 8);
        return v;
    }
    }
}

static inline __attribute__((always_inline)) void gpufl__uint_put(void *at, unsigned size, uint64_t v)
{
    uint8_t *p = (uint8_t *)at;
    switch (size) {
    case 1: *p = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        __builtin_memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        __builtin_memcpy(p, &x, 4);
        break;
    }
    default: __builtin_memcpy(p, &v, 8); break;
    }
}

#endif /* GPUFL_CORE_UINT_FIELD_H */
