/*
 * Kernel names come from CUPTI mangled ("_Z5emptyv", or a CUTLASS template
 * several kilobytes long); people read them demangled ("empty()"). The
 * plugin is C and must not link libstdc++, so the demangler is the C++
 * runtime's __cxa_demangle, found at run time in the process (a CUDA program
 * and libcupti already carry libstdc++), else loaded from libstdc++.so.6.
 *
 * gfl_name_cache makes that once per name per session: it maps the interned
 * id of a mangled name to the id of its demangled form. A training loop
 * launches the same few hundred kernels millions of times, so nearly every
 * lookup is a hit costing one probe of a small open-addressing table.
 *
 * Threads: gpufl__demangle() any thread. A gfl_name_cache belongs to one thread
 * (the plugin's worker) and has no locks.
 */
#ifndef GPUFL_BACKEND_CUPTI_DEMANGLE_H
#define GPUFL_BACKEND_CUPTI_DEMANGLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes the demangled form of name into buf, NUL-terminated, or name itself
 * when it is not a mangled C++ name (no "_Z" prefix), when the process has
 * no demangler, or when demangling fails. Text longer than len - 1 bytes is
 * cut there; *full_len (if not NULL) gets the whole length, so
 * *full_len >= len says it was cut.
 *
 * Returns 1 when buf holds a demangled name, 0 when it holds name unchanged,
 * or GPUFL_EINVAL (buf untouched) for a NULL name or buf or a len of 0.
 */
__attribute__((warn_unused_result)) int gpufl__demangle(const char *name, char *buf, size_t len, size_t *full_len);

/* The core's interning (gpufl_plugin_host.intern): the id of s[0..n). */
typedef uint32_t (*gfl_intern_fn)(const char *s, size_t n);

/* Entries kept at most; past it names are demangled on every lookup. */
#define GFL_NAME_CACHE_MAX_ENTRIES (64u * 1024u)

typedef struct gfl_name_cache {
    gfl_intern_fn intern;
    uint32_t *keys;   /* mangled ids, 0 = empty slot */
    uint32_t *values; /* demangled ids */
    uint32_t n_slots; /* power of two, or 0 before the first insert */
    uint32_t n_entries;
    uint32_t max_entries;
    uint64_t hits, misses;
    uint64_t uncached; /* misses not stored: full, no memory, or id 0 or 1 */
} gfl_name_cache;

/* Sets up an empty cache holding at most max_entries (0 or more than
 * GFL_NAME_CACHE_MAX_ENTRIES: GFL_NAME_CACHE_MAX_ENTRIES). Allocates nothing
 * yet, so it cannot fail. */
void gpufl__name_cache_init(gfl_name_cache *c, gfl_intern_fn intern, uint32_t max_entries);

/* Frees the table; the cache is empty and usable again. */
void gpufl__name_cache_free(gfl_name_cache *c);

/*
 * The id of the demangled form of `name`, whose id is name_id. A miss
 * demangles and interns (one intern() call, none when name is not mangled)
 * and remembers the pair; the table grows up to max_entries and a miss when
 * it cannot (full, out of memory) is answered without being stored. Ids 0
 * and 1 (no name; the intern table's overflow id, shared by many names) are
 * never stored. Never fails: a name that cannot be demangled is its own
 * demangled form, and gets name_id back.
 */
uint32_t gpufl__name_cache_demangled(gfl_name_cache *c, uint32_t name_id, const char *name);

#endif /* GPUFL_BACKEND_CUPTI_DEMANGLE_H */
