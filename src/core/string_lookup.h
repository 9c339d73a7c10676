/*
 * How a writer turns the string ids of events back into text. Events carry
 * 32-bit ids; whose ids they are depends on where the events come from: the
 * process-wide intern table for a live session (gpufl__intern_lookup), or
 * a reader's own table for events read from a file (gpufl convert). The
 * NDJSON formatter and the .gflt writer take one of these.
 *
 * Whoever supplies one says which threads may call it; the intern table's
 * may be called from any thread.
 */
#ifndef GPUFL_CORE_STRING_LOOKUP_H
#define GPUFL_CORE_STRING_LOOKUP_H

#include <stdint.h>

typedef struct gpufl__string_lookup {
    /* The NUL-terminated text of id and its length in *len; "" (length 0)
     * for an unknown id. Never NULL. */
    const char *(*str)(const void *ctx, uint32_t id, uint32_t *len);
    const void *ctx;
} gpufl__string_lookup;

static inline const char *gpufl__lookup(const gpufl__string_lookup *l, uint32_t id, uint32_t *len)
{
    return l->str(l->ctx, id, len);
}

/* The process-wide intern table (core/intern.h). */
extern const gpufl__string_lookup gpufl__intern_lookup;

#endif /* GPUFL_CORE_STRING_LOOKUP_H */
