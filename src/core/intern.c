/*
 * The intern table (see intern.h for the design and its workload).
 *
 * Entries are immutable once published. Two structures point at them:
 *   - the hash table, for string -> id (slots are atomic entry pointers);
 *   - a chunked directory, for id -> string (chunks never move).
 * Both are written only under insert_lock and read without locks; every
 * publication is a release store and every read an acquire load.
 */
#include "core/intern.h"
#include "core/string_lookup.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    uint64_t hash;
    uint32_t id;
    uint32_t len;
    char str[];
} entry;

typedef struct table {
    uint64_t mask;
    struct table *retired_next; /* older tables, kept for late readers */
    _Atomic(entry *) slots[];
} table;

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define CHUNK_COUNT (GFL_INTERN_MAX_STRINGS / CHUNK_SIZE)
#define INITIAL_SLOTS 1024u

static pthread_mutex_t insert_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(table *) current;
static _Atomic(_Atomic(entry *) *) chunks[CHUNK_COUNT];
static _Atomic uint32_t count; /* ids handed out */
static size_t bytes_used;      /* under insert_lock */
static _Atomic uint64_t overflows;
static entry empty_entry = {0, GFL_INTERN_EMPTY, 0, {0}};

/* A multiply-fold hash over 8-byte words: a few ns for a typical name. */
static inline uint64_t fold(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = fold(h ^ w, 0xbf58476d1ce4e5b9ull);
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = fold(h ^ w, 0x94d049bb133111ebull);
    return h | 1; /* never 0: makes a zeroed slot unambiguous when debugging */
}

static entry *probe(const table *t, uint64_t h, const char *s, size_t n)
{
    /* Bounded: a table that could not grow may be full. */
    for (uint64_t i = h & t->mask, tries = 0; tries <= t->mask; i = (i + 1) & t->mask, tries++) {
        /* acquire: pairs with the release store that published the entry */
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->hash == h && e->len == n && memcmp(e->str, s, n) == 0)
            return e;
    }
    return NULL;
}

static void place(table *t, entry *e)
{
    uint64_t i = e->hash & t->mask;
    while (atomic_load_explicit(&t->slots[i], memory_order_relaxed))
        i = (i + 1) & t->mask;
    /* release: the entry's bytes are visible before its pointer */
    atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

static table *new_table(uint64_t slots)
{
    table *t = calloc(1, sizeof *t + slots * sizeof(t->slots[0]));
    if (t)
        t->mask = slots - 1;
    return t;
}

/* Under insert_lock. Returns false when memory ran out. */
static bool store_in_directory(entry *e)
{
    uint32_t c = e->id >> CHUNK_BITS;
    _Atomic(entry *) *chunk = atomic_load_explicit(&chunks[c], memory_order_relaxed);
    if (!chunk) {
        chunk = calloc(CHUNK_SIZE, sizeof *chunk);
        if (!chunk)
            return false;
        /* release: the zeroed chunk is visible before its pointer */
        atomic_store_explicit(&chunks[c], chunk, memory_order_release);
    }
    atomic_store_explicit(&chunk[e->id & (CHUNK_SIZE - 1)], e, memory_order_release);
    return true;
}

/* Under insert_lock: doubles the table once it is half full. A failed grow
 * leaves the old table in place; it still works, only fuller. */
static table *grow_if_needed(table *t, uint32_t n_entries)
{
    if ((uint64_t)n_entries * 2 <= t->mask + 1)
        return t;
    table *bigger = new_table((t->mask + 1) * 2);
    if (!bigger)
        return t;
    for (uint64_t i = 0; i <= t->mask; i++) {
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (e)
            place(bigger, e);
    }
    bigger->retired_next = t;
    /* release: readers that load the new table see all of its slots */
    atomic_store_explicit(&current, bigger, memory_order_release);
    return bigger;
}

/* Under insert_lock: the reserved ids 0 ("") and 1 (overflow). */
static bool ensure_started(void)
{
    if (atomic_load_explicit(&current, memory_order_relaxed))
        return true;
    static const char overflow_name[] = "(intern table full)";
    entry *ov = malloc(sizeof *ov + sizeof overflow_name);
    table *t = new_table(INITIAL_SLOTS);
    if (!ov || !t) {
        free(ov);
        free(t);
        return false;
    }
    ov->id = GFL_INTERN_OVERFLOW;
    ov->len = sizeof overflow_name - 1;
    memcpy(ov->str, overflow_name, sizeof overflow_name);
    ov->hash = hash_bytes(ov->str, ov->len);
    if (!store_in_directory(&empty_entry) || !store_in_directory(ov)) {
        free(ov);
        free(t);
        return false;
    }
    atomic_store_explicit(&count, 2, memory_order_release);
    atomic_store_explicit(&current, t, memory_order_release);
    return true;
}

static uint32_t overflowed(void)
{
    atomic_fetch_add_explicit(&overflows, 1, memory_order_relaxed);
    return GFL_INTERN_OVERFLOW;
}

static uint32_t insert_slow(const char *s, size_t n, uint64_t h)
{
    pthread_mutex_lock(&insert_lock);
    uint32_t id;
    if (!ensure_started()) {
        id = GFL_INTERN_OVERFLOW;
        goto out;
    }
    table *t = atomic_load_explicit(&current, memory_order_relaxed);
    entry *found = probe(t, h, s, n);
    if (found) {
        id = found->id;
        goto out;
    }
    uint32_t n_entries = atomic_load_explicit(&count, memory_order_relaxed);
    if (n_entries >= GFL_INTERN_MAX_STRINGS || bytes_used + n > GFL_INTERN_MAX_BYTES ||
        (uint64_t)n_entries + 1 > t->mask) {
        id = overflowed();
        goto out;
    }
    entry *e = malloc(sizeof *e + n + 1);
    if (!e) {
        id = overflowed();
        goto out;
    }
    e->hash = h;
    e->len = (uint32_t)n;
    e->id = n_entries;
    memcpy(e->str, s, n);
    e->str[n] = '\0';
    if (!store_in_directory(e)) {
        free(e);
        id = overflowed();
        goto out;
    }
    place(t, e);
    bytes_used += n;
    /* release: a reader that sees the count sees the directory entry */
    atomic_store_explicit(&count, n_entries + 1, memory_order_release);
    (void)grow_if_needed(t, n_entries + 1);
    id = e->id;
out:
    pthread_mutex_unlock(&insert_lock);
    return id;
}

uint32_t gpufl__intern_n(const char *s, size_t n)
{
    if (!s || n == 0)
        return GFL_INTERN_EMPTY;
    if (n > GFL_INTERN_MAX_LEN)
        n = GFL_INTERN_MAX_LEN;
    uint64_t h = hash_bytes(s, n);
    /* acquire: pairs with the release that published the table */
    table *t = atomic_load_explicit(&current, memory_order_acquire);
    if (__builtin_expect(t != NULL, 1)) {
        entry *e = probe(t, h, s, n);
        if (e)
            return e->id;
    }
    return insert_slow(s, n, h);
}

const char *gpufl__intern_str(uint32_t id, uint32_t *len)
{
    entry *e = NULL;
    if (id < GFL_INTERN_MAX_STRINGS) {
        _Atomic(entry *) *chunk = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
        if (chunk)
            e = atomic_load_explicit(&chunk[id & (CHUNK_SIZE - 1)], memory_order_acquire);
    }
    if (!e)
        e = &empty_entry;
    if (len)
        *len = e->len;
    return e->str;
}

static const char *intern_lookup_str(const void *ctx, uint32_t id, uint32_t *len)
{
    (void)ctx;
    return gpufl__intern_str(id, len);
}

const gpufl__string_lookup gpufl__intern_lookup = {intern_lookup_str, NULL};

uint32_t gpufl__intern_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

uint64_t gpufl__intern_overflows(void) { return atomic_load_explicit(&overflows, memory_order_relaxed); }

void gpufl__intern_fork_prepare(void) { pthread_mutex_lock(&insert_lock); }
void gpufl__intern_fork_parent(void) { pthread_mutex_unlock(&insert_lock); }
void gpufl__intern_fork_child(void) { pthread_mutex_unlock(&insert_lock); }
