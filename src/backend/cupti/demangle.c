/*
 * Demangling through the C++ runtime found at run time, and the per-session
 * cache of demangled ids (see demangle.h).
 */
#include "backend/cupti/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/intern.h"
#include "gpufl/gpufl.h"

/* The Itanium C++ ABI's demangler: returns a malloc'd string (buf NULL) and
 * sets *status to 0 on success. */
typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

/* Runs once per process (pthread_once also publishes `demangler` to every
 * later caller). libstdc++ is opened only when the process has no C++ runtime
 * in its global scope, and is never closed: the pointer is kept for the life
 * of the process and the library may be in use by others. */
static void find_demangler(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
        void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            sym = dlsym(lib, "__cxa_demangle");
    }
    *(void **)&demangler = sym;
}

/* Copies text[0..n) into buf, cut to len - 1 bytes. memmove: name may be buf. */
static void put(const char *text, size_t n, char *buf, size_t len, size_t *full_len)
{
    size_t m = n < len - 1 ? n : len - 1;
    memmove(buf, text, m);
    buf[m] = '\0';
    if (full_len)
        *full_len = n;
}

static bool is_mangled(const char *name) { return name[0] == '_' && name[1] == 'Z'; }

int gpufl__demangle(const char *name, char *buf, size_t len, size_t *full_len)
{
    if (!name || !buf || len == 0)
        return GPUFL_EINVAL;
    if (is_mangled(name)) {
        pthread_once(&demangler_once, find_demangler);
        int status = -1;
        char *text = demangler ? demangler(name, NULL, NULL, &status) : NULL;
        if (text && status == 0) {
            put(text, strlen(text), buf, len, full_len);
            free(text);
            return 1;
        }
        free(text);
    }
    put(name, strlen(name), buf, len, full_len);
    return 0;
}

/* ---- the cache ---------------------------------------------------------- */

#define FIRST_SLOTS 1024u

void gpufl__name_cache_init(gfl_name_cache *c, gfl_intern_fn intern, uint32_t max_entries)
{
    if (max_entries == 0 || max_entries > GFL_NAME_CACHE_MAX_ENTRIES)
        max_entries = GFL_NAME_CACHE_MAX_ENTRIES;
    *c = (gfl_name_cache){.intern = intern, .max_entries = max_entries};
}

void gpufl__name_cache_free(gfl_name_cache *c)
{
    free(c->keys);
    free(c->values);
    gpufl__name_cache_init(c, c->intern, c->max_entries);
}

/* Interned ids are dense small integers: a multiplicative hash spreads them. */
static uint32_t slot_of(uint32_t id, uint32_t n_slots)
{
    uint32_t h = id * 0x9E3779B1u;
    return (h ^ (h >> 15)) & (n_slots - 1);
}

/* The slot holding id, or the empty slot where it would go. The table is
 * never more than half full, so the probe ends. */
static uint32_t probe(const uint32_t *keys, uint32_t n_slots, uint32_t id)
{
    uint32_t i = slot_of(id, n_slots);
    while (keys[i] != 0 && keys[i] != id)
        i = (i + 1) & (n_slots - 1);
    return i;
}

/* Doubles the table (or makes the first one). Returns false, table
 * unchanged, when out of memory. */
static bool grow(gfl_name_cache *c)
{
    uint32_t n = c->n_slots ? c->n_slots * 2 : FIRST_SLOTS;
    uint32_t *keys = calloc(n, sizeof *keys);
    uint32_t *values = calloc(n, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (uint32_t i = 0; i < c->n_slots; i++) {
        if (c->keys[i] == 0)
            continue;
        uint32_t j = probe(keys, n, c->keys[i]);
        keys[j] = c->keys[i];
        values[j] = c->values[i];
    }
    free(c->keys);
    free(c->values);
    c->keys = keys;
    c->values = values;
    c->n_slots = n;
    return true;
}

/* Stores id -> value unless full (max_entries, or no memory to grow). */
static void remember(gfl_name_cache *c, uint32_t id, uint32_t value)
{
    if (c->n_entries >= c->max_entries || ((c->n_entries + 1) * 2 > c->n_slots && !grow(c))) {
        c->uncached++;
        return;
    }
    uint32_t i = probe(c->keys, c->n_slots, id);
    c->keys[i] = id;
    c->values[i] = value;
    c->n_entries++;
}

uint32_t gpufl__name_cache_demangled(gfl_name_cache *c, uint32_t name_id, const char *name)
{
    if (!name || !is_mangled(name) || !c->intern)
        return name_id;
    bool cacheable = name_id != GFL_INTERN_EMPTY && name_id != GFL_INTERN_OVERFLOW;
    if (cacheable && c->n_slots) {
        uint32_t i = probe(c->keys, c->n_slots, name_id);
        if (c->keys[i] == name_id) {
            c->hits++;
            return c->values[i];
        }
    }
    c->misses++;

    /* Names past GFL_INTERN_MAX_LEN are cut by interning anyway. */
    char buf[GFL_INTERN_MAX_LEN + 1];
    size_t full = 0;
    uint32_t id = name_id;
    if (gpufl__demangle(name, buf, sizeof buf, &full) == 1) {
        id = c->intern(buf, full < sizeof buf ? full : sizeof buf - 1);
        /* A full intern table gives the shared overflow id: the mangled
         * name's own id says more. */
        if (id == GFL_INTERN_EMPTY || id == GFL_INTERN_OVERFLOW)
            id = name_id;
    }
    if (cacheable)
        remember(c, name_id, id);
    else
        c->uncached++;
    return id;
}
