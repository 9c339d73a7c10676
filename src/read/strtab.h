/*
 * A reader's string table: ids 0.. for the names of one trace (id 0 is ""),
 * independent of the process-wide intern table so that loading traces into
 * a long-running program does not grow that table.
 *
 * The NDJSON reader interns every name it reads (gpufl__strtab_intern: a
 * hash lookup per name, a copy only when new); the .gflt reader appends the
 * file's strings in file-id order (gpufl__strtab_append, no lookup). Texts
 * are stored back to back, NUL-terminated, so a trace of a few hundred
 * distinct names costs a few kilobytes however many events refer to them.
 *
 * One owner thread while it grows; read-only use from any thread after.
 */
#ifndef GPUFL_READ_STRTAB_H
#define GPUFL_READ_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/string_lookup.h"

typedef struct gpufl__strtab {
    char *bytes; /* texts, each followed by a NUL */
    size_t len, cap;
    size_t *start; /* id -> offset in bytes; start[n] = len */
    uint32_t n, cap_ids;
    uint32_t *slots; /* hash slots: id + 1, 0 = empty (built on first intern) */
    uint32_t mask;
} gpufl__strtab;

/* An empty table holding only id 0 (""). 0 or GPUFL_ENOMEM. */
int gpufl__strtab_init(gpufl__strtab *t) __attribute__((warn_unused_result));
void gpufl__strtab_free(gpufl__strtab *t);

/* The id of s[0..n), added if new. 0 or GPUFL_ENOMEM (table unchanged). */
int gpufl__strtab_intern(gpufl__strtab *t, const char *s, size_t n, uint32_t *id) __attribute__((warn_unused_result));

/* Adds s[0..n) as the next id, without looking for an equal string.
 * 0 or GPUFL_ENOMEM. */
int gpufl__strtab_append(gpufl__strtab *t, const char *s, size_t n) __attribute__((warn_unused_result));

/* The text of id and its length; "" for an id the table does not have. */
static inline const char *gpufl__strtab_str(const gpufl__strtab *t, uint32_t id, uint32_t *len)
{
    if (id >= t->n) {
        if (len)
            *len = 0;
        return "";
    }
    if (len)
        *len = (uint32_t)(t->start[id + 1] - t->start[id] - 1);
    return t->bytes + t->start[id];
}

/* The table as a gpufl__string_lookup (valid while t lives). */
gpufl__string_lookup gpufl__strtab_lookup(const gpufl__strtab *t);

/* The table behind l when l is one made by gpufl__strtab_lookup, else
 * NULL (both readers' sources hand out their table this way). */
const gpufl__strtab *gpufl__strtab_of(const gpufl__string_lookup *l);

/* Bytes of memory the table holds. */
size_t gpufl__strtab_memory(const gpufl__strtab *t);

#endif /* GPUFL_READ_STRTAB_H */
