/*
 * The column store behind a gpufl_trace: a table is a row count and a set of
 * columns of fixed-size values, grown together while a trace is built, then
 * sorted by one 64-bit key column and cut to size.
 *
 * A column is allocated only when its first nonzero value arrives, so a
 * field the session never recorded (NVTX ranges in a program without NVTX,
 * stacks when enable_stack_trace is off) costs no memory while building and
 * none after: at the end such a column points into one shared read-only
 * zero mapping (columns_finish). Column memory comes straight from mmap:
 * a growing column moves without being copied (mremap), and large ones are
 * backed by transparent huge pages where the kernel allows, which spares a
 * ten-million-row table most of its page faults.
 *
 * Single-threaded while building; read-only after.
 */
#ifndef GPUFL_READ_COLUMNS_H
#define GPUFL_READ_COLUMNS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct gpufl__col {
    uint8_t *data; /* NULL while every value so far is 0 */
    size_t len;    /* bytes mapped at data */
    uint8_t size;  /* bytes per value */
} gpufl__col;

typedef struct gpufl__table {
    size_t n, cap;
    gpufl__col *cols;
    unsigned ncols;
    unsigned key; /* the column rows are sorted by (a uint64_t column) */
} gpufl__table;

/* Adds a row. The caller then sets every column of it with gpufl__col_put
 * (zeros included: a column allocated earlier holds garbage in a new row
 * until set). Returns 0 or GPUFL_ENOMEM with the table unchanged. */
int gpufl__table_add_row(gpufl__table *t, size_t *row) __attribute__((warn_unused_result));

/* Allocates column c for t's capacity (all zero). 0 or GPUFL_ENOMEM. */
int gpufl__col_alloc(gpufl__table *t, gpufl__col *c) __attribute__((warn_unused_result));

/* Sets row's value of c (size bytes at v; size is c->size, a constant at
 * the call so the store compiles to one move). Returns 0, or -1 when the
 * column had to be allocated and could not. */
static inline __attribute__((always_inline)) int gpufl__col_put(gpufl__table *t, gpufl__col *c, size_t row,
                                                                const void *v, size_t size)
{
    if (__builtin_expect(c->data != NULL, 1)) {
        memcpy(c->data + row * size, v, size);
        return 0;
    }
    const uint8_t *b = (const uint8_t *)v;
    size_t i = 0;
    while (i < size && !b[i])
        i++;
    if (i == size)
        return 0; /* still all zero: nothing to store */
    if (gpufl__col_alloc(t, c) != 0)
        return -1;
    memcpy(c->data + row * size, v, size);
    return 0;
}

/* Sorts the rows by the key column (stable: equal keys keep their order)
 * and cuts every column to n values. With perm non-NULL, hands over the
 * order applied (*perm[new row] = old row, malloc'd; NULL when the rows were
 * in order already). 0 or GPUFL_ENOMEM (nothing moved). */
int gpufl__table_finish(gpufl__table *t, uint32_t **perm) __attribute__((warn_unused_result));

/* Column c allocated for exactly n values (all zero), for a table filled
 * by copying rather than row by row. 0 or GPUFL_ENOMEM. */
int gpufl__col_alloc_rows(gpufl__col *c, size_t n) __attribute__((warn_unused_result));

/* The values of column c: its data, or `zero` (at least n * size zero
 * bytes) when it was never allocated. */
static inline const void *gpufl__col_values(const gpufl__col *c, const void *zero) { return c->data ? c->data : zero; }

/* Frees column c's values (it reads as all zero after). */
void gpufl__col_free(gpufl__col *c);

size_t gpufl__table_memory(const gpufl__table *t);
void gpufl__table_free(gpufl__table *t);

/* A permutation that sorts keys[0..n) stably, in *perm (malloc'd), or *perm
 * NULL when they are sorted already. 0 or GPUFL_ENOMEM. */
int gpufl__sort_order(const uint64_t *keys, size_t n, uint32_t **perm) __attribute__((warn_unused_result));

#endif /* GPUFL_READ_COLUMNS_H */
