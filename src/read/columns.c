/*
 * The column store (see columns.h), and the sort behind it: an LSD radix
 * sort of (key, row) pairs on the key's bytes, skipping the bytes that are
 * the same in every key (a session spans minutes: its nanosecond times
 * differ in 5 of their 8 bytes), after a linear check that finds the common
 * case, already sorted, for free.
 */
#include "read/columns.h"

#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "gpufl/gpufl.h"

#define MIN_ROWS 1024
#define PAGE 4096u
#define HUGE_PAGE (2u << 20)

/* ---- column memory ----------------------------------------------------------- */

static size_t map_length(size_t bytes) { return (bytes + PAGE - 1) / PAGE * PAGE + (bytes ? 0 : PAGE); }

static void prefer_huge(uint8_t *p, size_t len)
{
    if (len >= 2 * HUGE_PAGE)
        (void)madvise(p, len, MADV_HUGEPAGE); /* a hint: without THP it does nothing */
}

/* bytes of zeroed memory, its mapped length in *len; NULL when out of memory. */
static uint8_t *map_new(size_t bytes, size_t *len)
{
    *len = map_length(bytes);
    void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    prefer_huge(p, *len);
    return p;
}

/* ThreadSanitizer does not intercept mremap: the pages a column moves to
 * keep the access history of whatever mapping held those addresses before
 * (another thread's column), which it reports as races. Under it, columns
 * move by copying. */
#if defined(__SANITIZE_THREAD__)
#define MOVE_BY_COPY 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MOVE_BY_COPY 1
#endif
#endif

/* The mapping at p resized to hold bytes (new bytes zero). Returns the new
 * address, or NULL with p untouched. */
static uint8_t *map_resize(uint8_t *p, size_t *len, size_t bytes)
{
    size_t want = map_length(bytes);
    if (want == *len)
        return p;
#ifdef MOVE_BY_COPY
    size_t new_len;
    uint8_t *copy = map_new(bytes, &new_len);
    if (!copy)
        return NULL;
    memcpy(copy, p, *len < new_len ? *len : new_len);
    munmap(p, *len);
    *len = new_len;
    return copy;
#else
    void *q = mremap(p, *len, want, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    *len = want;
    prefer_huge(q, want);
    return q;
#endif
}

static void map_free(uint8_t *p, size_t len)
{
    if (p)
        munmap(p, len);
}

int gpufl__col_alloc(gpufl__table *t, gpufl__col *c)
{
    c->data = map_new((t->cap ? t->cap : 1) * c->size, &c->len);
    return c->data ? 0 : GPUFL_ENOMEM;
}

int gpufl__table_add_row(gpufl__table *t, size_t *row)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : MIN_ROWS;
        if (cap > UINT32_MAX)
            return GPUFL_ENOMEM; /* rows are indexed by 32-bit numbers when sorting */
        for (unsigned i = 0; i < t->ncols; i++) {
            gpufl__col *c = &t->cols[i];
            if (!c->data)
                continue;
            uint8_t *d = map_resize(c->data, &c->len, cap * c->size);
            if (!d)
                return GPUFL_ENOMEM; /* columns grown so far keep their rows: harmless */
            c->data = d;
        }
        t->cap = cap;
    }
    *row = t->n++;
    return 0;
}

/* ---- sorting ------------------------------------------------------------- */

typedef struct pair {
    uint64_t key;
    uint32_t row;
} pair;

int gpufl__sort_order(const uint64_t *keys, size_t n, uint32_t **perm)
{
    *perm = NULL;
    size_t i = 1;
    while (i < n && keys[i - 1] <= keys[i])
        i++;
    if (i >= n)
        return 0;
    size_t alen, blen;
    pair *a = (pair *)(void *)map_new(n * sizeof *a, &alen), *b = (pair *)(void *)map_new(n * sizeof *b, &blen);
    size_t(*count)[256] = calloc(8, sizeof *count);
    uint32_t *out = malloc(n * sizeof *out);
    if (!a || !b || !count || !out) {
        map_free((uint8_t *)a, alen);
        map_free((uint8_t *)b, blen);
        free(count);
        free(out);
        return GPUFL_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        a[i] = (pair){keys[i], (uint32_t)i};
        for (unsigned d = 0; d < 8; d++)
            count[d][(keys[i] >> (8 * d)) & 0xff]++;
    }
    for (unsigned d = 0; d < 8; d++) {
        if (count[d][(keys[0] >> (8 * d)) & 0xff] == n)
            continue; /* this byte is the same in every key */
        size_t at = 0;
        for (unsigned v = 0; v < 256; v++) {
            size_t c = count[d][v];
            count[d][v] = at;
            at += c;
        }
        for (i = 0; i < n; i++)
            b[count[d][(a[i].key >> (8 * d)) & 0xff]++] = a[i];
        pair *t = a;
        a = b;
        b = t;
        size_t tl = alen;
        alen = blen;
        blen = tl;
    }
    for (i = 0; i < n; i++)
        out[i] = a[i].row;
    map_free((uint8_t *)a, alen);
    map_free((uint8_t *)b, blen);
    free(count);
    *perm = out;
    return 0;
}

/* Column c reordered by perm into dst (room for n values, len bytes
 * mapped); dst becomes the column, and the column's old memory is handed
 * back in *dst / *len for the next one. */
static void permute(gpufl__col *c, const uint32_t *perm, size_t n, uint8_t **dst, size_t *len)
{
    uint8_t *d = *dst;
    switch (c->size) {
    case 8:
        for (size_t i = 0; i < n; i++)
            memcpy(d + 8 * i, c->data + 8 * (size_t)perm[i], 8);
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            memcpy(d + 4 * i, c->data + 4 * (size_t)perm[i], 4);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            memcpy(d + c->size * i, c->data + c->size * (size_t)perm[i], c->size);
        break;
    }
    uint8_t *old = c->data;
    size_t old_len = c->len;
    c->data = d;
    c->len = *len;
    *dst = old;
    *len = old_len;
}

/* Reorders every column by perm. The widest columns go first, each into
 * the memory the previous one left (it had room for at least n values of
 * that width), so the whole sort needs one spare column, not a copy of the
 * table: little fresh memory, few page faults. */
static int permute_all(gpufl__table *t, const uint32_t *perm)
{
    size_t widest = 0, len;
    for (unsigned i = 0; i < t->ncols; i++)
        if (t->cols[i].data && t->cols[i].size > widest)
            widest = t->cols[i].size;
    uint8_t *spare = map_new(t->n * widest, &len);
    if (!spare)
        return GPUFL_ENOMEM;
    for (size_t size = widest; size > 0; size--)
        for (unsigned i = 0; i < t->ncols; i++)
            if (t->cols[i].data && t->cols[i].size == size)
                permute(&t->cols[i], perm, t->n, &spare, &len);
    map_free(spare, len);
    return 0;
}

int gpufl__col_alloc_rows(gpufl__col *c, size_t n)
{
    c->data = map_new(n * c->size, &c->len);
    return c->data ? 0 : GPUFL_ENOMEM;
}

int gpufl__table_finish(gpufl__table *t, uint32_t **perm_out)
{
    uint32_t *perm = NULL;
    if (perm_out)
        *perm_out = NULL;
    const gpufl__col *key = &t->cols[t->key];
    if (key->data && gpufl__sort_order((const uint64_t *)(const void *)key->data, t->n, &perm) != 0)
        return GPUFL_ENOMEM;
    bool sorted_here = perm != NULL;
    if (perm) {
        int rc = permute_all(t, perm);
        if (rc != 0) {
            free(perm);
            return rc;
        }
        if (perm_out)
            *perm_out = perm;
        else
            free(perm);
    }
    /* trim: columns sit in buffers of their capacity, or (sorted here) of
     * a wider column's */
    for (unsigned i = 0; i < t->ncols; i++) {
        gpufl__col *c = &t->cols[i];
        if (c->data && (t->n < t->cap || sorted_here)) {
            uint8_t *d = map_resize(c->data, &c->len, t->n * c->size);
            if (d)
                c->data = d;
        }
    }
    t->cap = t->n;
    return 0;
}

void gpufl__col_free(gpufl__col *c)
{
    map_free(c->data, c->len);
    c->data = NULL;
    c->len = 0;
}

size_t gpufl__table_memory(const gpufl__table *t)
{
    size_t bytes = 0;
    for (unsigned i = 0; i < t->ncols; i++)
        if (t->cols[i].data)
            bytes += t->cols[i].len;
    return bytes;
}

void gpufl__table_free(gpufl__table *t)
{
    for (unsigned i = 0; i < t->ncols; i++) {
        map_free(t->cols[i].data, t->cols[i].len);
        t->cols[i].data = NULL;
    }
    t->n = t->cap = 0;
}
