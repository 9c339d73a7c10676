/*
 * What each NVTX row is to PyTorch (analysis.h, "PyTorch ops"), as the
 * analyses build it over a nesting they already have, and the op each op
 * range's work counts for ("keys"), which the ops analysis and the
 * hotspots group by.
 *
 * Keys are numbered in order of (name text, module text, backward_only),
 * so that ordering by key index is ordering by text: the lists that tie on
 * time break ties by the index alone.
 *
 * Threads: any; each call builds its own result. Sizes: a few arrays per
 * NVTX row; the seq rules sort the rows that carry a seq (O(n log n)).
 */
#ifndef GPUFL_ANALYZE_ANA_OP_ROWS_H
#define GPUFL_ANALYZE_ANA_OP_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "read/rows.h"

/*
 * Fills out from a's NVTX table. parent: per row, the parent range's row
 * (NONE for none); order: the norder ranges, each parent before its
 * children (gpufl__ana_nvtx_parents() gives both; NULL parent: built here
 * when the session has op or module ranges). Returns 0, or GPUFL_ENOMEM
 * with out zeroed.
 */
int gpufl__ana_op_rows_build(const gpufl__rows *a, const uint32_t *parent, const uint32_t *order, size_t norder,
                             gpufl__ana_op_rows *out) __attribute__((warn_unused_result));

/* The op that the work of some op ranges counts for (gpufl__ana_op's key),
 * with the calls counted for it. */
typedef struct ana_op_key {
    uint32_t name, module; /* string ids: the op's name; the module range's name, 0 none */
    uint8_t backward_only;
    uint64_t calls, backward_calls;
} ana_op_key;

typedef struct ana_op_keys {
    uint32_t *of_row; /* per NVTX row that is an op range: its key; NONE for other rows
                         (NULL without op ranges) */
    ana_op_key *keys; /* in order of name text, module text, backward_only */
    size_t n;
} ana_op_keys;

/* The keys of r's op ranges (parent as for gpufl__ana_op_rows_build, not
 * NULL when r has op ranges). Returns 0, or GPUFL_ENOMEM with out zeroed. */
int gpufl__ana_op_keys_build(const gpufl__rows *a, const gpufl__ana_op_rows *r, const uint32_t *parent,
                             ana_op_keys *out) __attribute__((warn_unused_result));
void gpufl__ana_op_keys_free(ana_op_keys *k);

/* The key of the work given to op range `row` (GPUFL__ANA_NONE: none). */
static inline uint32_t ana_op_key_of(const ana_op_keys *k, uint32_t row)
{
    return row == GPUFL__ANA_NONE || !k->of_row ? GPUFL__ANA_NONE : k->of_row[row];
}

#endif /* GPUFL_ANALYZE_ANA_OP_ROWS_H */
