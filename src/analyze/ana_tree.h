/*
 * A tree of paths (gpufl__ana_scope_tree) from rows of scope instances:
 * every row becomes an instance of the node named by its path from the
 * root, the node of its parent row plus its own name (and NVTX domain).
 *
 * Used by ana_attr.c for both trees (gpufl scopes, NVTX ranges). Sizes: the
 * rows (up to millions), the nodes (distinct paths: hundreds); memory is a
 * few arrays per row, all freed before returning but row_node.
 */
#ifndef GPUFL_ANALYZE_ANA_TREE_H
#define GPUFL_ANALYZE_ANA_TREE_H

#include <stdint.h>

#include "analyze/analysis.h"

/*
 * Builds out from the rows of s: parent_row[i] is the row of row i's parent
 * instance (GPUFL__ANA_NONE for a root, or for a row that is not an
 * instance when skip[i] is 1: NVTX marks). A row that never ended counts
 * until the end the trace gave it (the session's last recorded time) and
 * in its node's `unended`. wall_ns is the session's, the divisor of the
 * roots' shares.
 * *row_node gets, per row, the index of its node in out->nodes (NONE for
 * skipped rows). Parent chains that loop (damaged input) are cut: the row
 * where the loop closes becomes a root.
 * Returns 0, or GPUFL_ENOMEM with *out zeroed and *row_node NULL.
 */
int gpufl__ana_tree_build(const gpufl_trace *t, uint8_t tree, const gpufl_trace_scopes *s, const uint32_t *parent_row,
                          const uint8_t *skip, uint64_t wall_ns, gpufl__ana_scope_tree *out, uint32_t **row_node)
    __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_TREE_H */
