/*
 * The dependency graph of a session (issue 18): what had to happen before
 * what, as the recorder saw it, so that a step's critical path can be read
 * off it (ana_critpath.c) and the session re-scheduled with a change
 * (ana_whatif.c).
 *
 * Nodes are GPU work (kernels, copies, memsets), the host calls that
 * launched it (one per correlation id: a CUDA graph's kernels share their
 * graph launch's), the host's syncs, and the begin and end of scopes and
 * NVTX ranges (marks, where a step starts and stops). Edges:
 *
 *   host    the previous host node of the same thread (launch calls, syncs,
 *           marks in recorded order); the gap between them is the host's
 *           own work
 *   launch  a launch call to its work (work starts no earlier than its call
 *           began plus the device's shortest recorded launch latency)
 *   stream  the previous work on the same device and stream
 *   sync    work a sync waited for: a stream sync the last work issued on
 *           its stream before it, a context sync the last of every stream
 *           of its device
 *   block   a synchronous copy (its call returned after the copy ended) to
 *           the host node after its call: the host waited for it
 *   engine  the previous copy of the same direction on the device, when the
 *           recording shows that direction's copies never overlapped there
 *           (one copy engine per direction)
 *   wait    inferred: a stream-wait-event (an event sync's is a `sync`
 *           edge marked inferred)
 *   graph   inferred: a CUDA graph's node after another of its launch
 *   host    inferred: a thread's node after another thread's node it
 *           waited for (ana_graph.c, wake_edges)
 *
 * What the recorder does not capture is inferred from timing and marked
 * (`inferred`): which cudaEventRecord a cudaStreamWaitEvent or
 * cudaEventSynchronize waited on (a sync row has CUPTI's event id, but no
 * record of where the event was recorded), and the edges inside a CUDA
 * graph (its topology is not recorded). The source taken is the work on
 * another stream of the device, issued before the wait, that ended last
 * before the waiting work started (an event sync: that ended last while
 * the host waited): the constraint the recording can show, never one it
 * contradicts. Waits of one thread for another outside CUDA (a condition
 * variable, a queue, a thread's start) are not recorded either: they are
 * inferred when a thread's first node, or its node after a gap, follows
 * soon after another thread's node (ana_graph.c says how soon).
 *
 * Sizes: a node per kernel, copy, memset, launch call, sync and mark;
 * a few edges per node. Threads: any; the graph is built once and read.
 */
#ifndef GPUFL_ANALYZE_ANA_GRAPH_H
#define GPUFL_ANALYZE_ANA_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"

#define GPUFL__GNONE UINT32_MAX

enum {
    GPUFL__GN_KERNEL = 0,
    GPUFL__GN_COPY,
    GPUFL__GN_MEMSET,
    GPUFL__GN_CALL, /* a launch call (kernel, copy, memset, graph launch) */
    GPUFL__GN_SYNC,
    GPUFL__GN_MARK, /* a scope's or NVTX range's begin or end */
    GPUFL__GN_KIND_COUNT
};

enum {
    GPUFL__GE_HOST = 0,
    GPUFL__GE_LAUNCH,
    GPUFL__GE_STREAM,
    GPUFL__GE_SYNC,
    GPUFL__GE_BLOCK,
    GPUFL__GE_ENGINE,
    GPUFL__GE_WAIT,
    GPUFL__GE_GRAPH,
    GPUFL__GE_DATA, /* only in a what-if: a moved copy and the kernel it feeds or drains */
    GPUFL__GE_KIND_COUNT
};

typedef struct gpufl__gnode {
    uint64_t start, end; /* recorded; a mark: start == end */
    uint32_t device, stream;
    uint32_t tid;      /* host nodes: the thread; work: its call's (0 unknown) */
    uint32_t name;     /* kernels: string id of the name; marks: of the scope or range */
    uint32_t row;      /* row of its table (kernels, copies, memsets, syncs, scopes or NVTX) */
    uint32_t call;     /* work: its launch call node, GPUFL__GNONE none */
    uint32_t block_op; /* a call: the copy it waited for (synchronous), GPUFL__GNONE none */
    uint32_t correlation, graph_id, cuda_event;
    uint8_t kind;  /* GPUFL__GN_* */
    uint8_t sub;   /* copies: gfl_copy_kind; syncs: gfl_sync_kind; marks: 0 begin, 1 end */
    uint8_t nccl;  /* kernels: an NCCL kernel (ana_nccl.h) */
    uint8_t range; /* marks: 0 a gpufl scope, 1 an NVTX range */
} gpufl__gnode;

typedef struct gpufl__gedge {
    uint32_t from, to;
    uint8_t kind;     /* GPUFL__GE_* */
    uint8_t inferred; /* from timing, not recorded */
} gpufl__gedge;

typedef struct gpufl__graph {
    const gpufl_trace *t;
    gpufl__gnode *nodes;
    size_t n;
    gpufl__gedge *edges; /* by `to`, then `from` */
    size_t nedges, ncap;
    size_t *in; /* edges into node i: edges[in[i] .. in[i + 1]) */
    size_t inferred;
    size_t syncs;         /* the session's sync rows: ids 0 .. syncs - 1 */
    uint32_t *sync_node;  /* per sync row: its node */
    uint64_t lmin[2];     /* shortest launch latency seen: kernels, other work (ns) */
    uint64_t first, last; /* earliest start and latest end of any node */
} gpufl__graph;

/* Builds the graph of t into *g. Returns 0, GPUFL_EINVAL (t or g NULL) or
 * GPUFL_ENOMEM; *g is zeroed on failure (safe to free). */
int gpufl__graph_build(const gpufl_trace *t, gpufl__graph *g) __attribute__((warn_unused_result));
/* The same for the nodes that meet [from, to] only (work, syncs and ranges
 * that meet it; the calls of that work): what a window's critical path
 * needs, in memory of its size. A sync outside has sync_node GPUFL__GNONE. */
int gpufl__graph_build_window(const gpufl_trace *t, uint64_t from, uint64_t to, gpufl__graph *g)
    __attribute__((warn_unused_result));
void gpufl__graph_free(gpufl__graph *g);

/* Appends an edge (edges are sorted and indexed by gpufl__graph_index).
 * Returns 0 or GPUFL_ENOMEM. */
int gpufl__graph_add_edge(gpufl__graph *g, uint32_t from, uint32_t to, unsigned kind, bool inferred)
    __attribute__((warn_unused_result));
/* Sorts the edges by (to, from, kind), drops duplicates and builds `in`.
 * Returns 0 or GPUFL_ENOMEM. */
int gpufl__graph_index(gpufl__graph *g) __attribute__((warn_unused_result));

/* The inferred edges (ana_graph_infer.c): event waits, event syncs and
 * CUDA graphs' insides. Called by gpufl__graph_build. */
int gpufl__graph_infer(gpufl__graph *g) __attribute__((warn_unused_result));

/* Names for the outputs: "kernel", "copy", ...; "host", "launch", ... */
const char *gpufl__gnode_kind_name(unsigned kind);
const char *gpufl__gedge_kind_name(unsigned kind);

/* Whether node i is GPU work (kernel, copy or memset), or a host node. */
static inline bool gpufl__gnode_is_work(const gpufl__gnode *n) { return n->kind <= GPUFL__GN_MEMSET; }

#endif /* GPUFL_ANALYZE_ANA_GRAPH_H */
