/*
 * The JSON text of string ids, worked out once per id: the quoted, escaped
 * text of a name is made the first time the id is written and copied from
 * then on. The NDJSON writer writes the same few hundred kernel and scope
 * names millions of times, and escaping them byte by byte on every line,
 * through a lookup behind a function pointer, was a third of its time
 * (bench_writer).
 *
 * Caching by id is sound because neither table it serves ever changes an
 * id's string: the intern table's ids live as long as the process, a
 * reader's as long as the reader.
 *
 * One owner thread. Memory: 8 bytes per id up to the highest id written
 * (below GFL_JNAMES_MAX_IDS) and the text itself (up to
 * GFL_JNAMES_MAX_BYTES); an id past either limit, or met when memory runs
 * out, is escaped each time it is written instead: slower, the same bytes.
 */
#ifndef GPUFL_FORMAT_JSON_NAMES_H
#define GPUFL_FORMAT_JSON_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/string_lookup.h"
#include "format/json_out.h"

#define GFL_JNAMES_MAX_IDS (1u << 22)
#define GFL_JNAMES_MAX_BYTES (64u << 20)

typedef struct gpufl__jname {
    uint32_t off, len; /* of the text; len 0: not made yet (a made one has its quotes) */
} gpufl__jname;

typedef struct gpufl__jnames {
    const gpufl__string_lookup *names;
    gpufl__jname *ids;
    uint32_t nids;
    bool uncached; /* escape every time (gpufl__jnames_init_uncached) */
    char *text;
    size_t len, cap;
} gpufl__jnames;

/* Names from `names`, cached. Allocates nothing until the first name. */
void gpufl__jnames_init(gpufl__jnames *j, const gpufl__string_lookup *names);

/* Names from `names`, escaped every time they are written: for a caller
 * that formats a line or two and keeps no state between them. */
void gpufl__jnames_init_uncached(gpufl__jnames *j, const gpufl__string_lookup *names);

void gpufl__jnames_free(gpufl__jnames *j);

/* The slow path of gpufl__jnames_get: makes id's text. Returns it, or NULL
 * when it is not to be cached (limits, out of memory, uncached); the cache
 * is unchanged then. */
const gpufl__jname *gpufl__jnames_make(gpufl__jnames *j, uint32_t id);

/* id's text, made on first use; NULL: write it with gpufl__jput_str. */
static inline const gpufl__jname *gpufl__jnames_get(gpufl__jnames *j, uint32_t id)
{
    if (id < j->nids && j->ids[id].len)
        return &j->ids[id];
    return gpufl__jnames_make(j, id);
}

/* Bytes that are enough for id's JSON text: its length once made. */
static inline size_t gpufl__jnames_bound(gpufl__jnames *j, uint32_t id)
{
    const gpufl__jname *n = gpufl__jnames_get(j, id);
    if (n)
        return n->len;
    uint32_t len = 0;
    (void)gpufl__lookup(j->names, id, &len);
    return GFL_JSTR_BOUND(len);
}

/* Writes id's JSON text at p (gpufl__jnames_bound bytes of room) and
 * returns the new end. */
static inline char *gpufl__jnames_put(gpufl__jnames *j, char *p, uint32_t id)
{
    const gpufl__jname *n = gpufl__jnames_get(j, id);
    if (n) {
        memcpy(p, j->text + n->off, n->len);
        return p + n->len;
    }
    uint32_t len = 0;
    const char *s = gpufl__lookup(j->names, id, &len);
    return gpufl__jput_str(p, s, len);
}

#endif /* GPUFL_FORMAT_JSON_NAMES_H */
