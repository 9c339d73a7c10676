/*
 * A growable byte buffer for building .gflt chunks and columns. Single
 * owner, any thread. Growth doubles, so appending n bytes is amortised O(n).
 */
#ifndef GPUFL_CORE_BYTEBUF_H
#define GPUFL_CORE_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/varint.h"
#include "gpufl/gpufl.h"

typedef struct gpufl__bytebuf {
    uint8_t *p;
    size_t len, cap;
} gpufl__bytebuf;

/* Room for n more bytes. Returns 0, or GPUFL_ENOMEM with b unchanged. */
static inline int gpufl__bytebuf_reserve(gpufl__bytebuf *b, size_t n)
{
    if (b->cap - b->len >= n)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return GPUFL_ENOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int gpufl__bytebuf_append(gpufl__bytebuf *b, const void *data, size_t n)
{
    if (gpufl__bytebuf_reserve(b, n) != 0)
        return GPUFL_ENOMEM;
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static inline int gpufl__bytebuf_varint(gpufl__bytebuf *b, uint64_t v)
{
    if (gpufl__bytebuf_reserve(b, GFL_VARINT_MAX) != 0)
        return GPUFL_ENOMEM;
    b->len = (size_t)(gpufl__put_varint(b->p + b->len, v) - b->p);
    return 0;
}

static inline void gpufl__bytebuf_free(gpufl__bytebuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

#endif /* GPUFL_CORE_BYTEBUF_H */
