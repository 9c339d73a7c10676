/*
 * Analyses of a recorded session: pure functions from a gpufl_trace
 * (include/gpufl/trace.h) to the plain result structs below (DESIGN §7).
 * Renderers (text, JSON, HTML), `gpufl diff` and the CLI read only these
 * structs and the trace's string table; nothing here prints.
 *
 * Threads: any; an analysis only reads the trace, which may be shared.
 * Sizes: built for 10 M-event sessions: every analysis is O(n log n) at most
 * in the rows it reads, allocates per table or per distinct name, never per
 * event, and copies no column (it sorts 32-bit row indices where it must).
 *
 * Conventions, for every struct below:
 *  - Times are ns of the session timebase, durations ns, sizes bytes.
 *  - Names are string ids of the trace (gpufl_trace_string()), valid as
 *    long as the trace is open; 0 is "no name".
 *  - A "dist" (gpufl__ana_dist) summarizes a set of values; percentiles are
 *    nearest-rank (gpufl__ana_dist below), so they are always values of the
 *    set, and the same set gives the same numbers on every machine.
 *  - Orders are total: every sort breaks ties, last by name text and then by
 *    id, so two runs on the same trace give byte-identical results.
 *  - Results own their memory. Each gpufl__analyze_X() returns 0, or
 *    GPUFL_ENOMEM (or GPUFL_EINVAL for a NULL argument) with *out zeroed;
 *    each gpufl__ana_X_free() frees what it filled and zeroes it (a zeroed
 *    or already freed result is fine).
 *  - A table the session did not record gives an empty result, not an
 *    error: zero counts, NULL arrays with n 0.
 *
 * This header is a contract shared with the renderers: fields are only ever
 * appended (at the end of a struct), never renamed, retyped or removed.
 */
#ifndef GPUFL_ANALYZE_ANALYSIS_H
#define GPUFL_ANALYZE_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GPUFL__ANA_NONE UINT32_MAX /* "no index" (a root's parent, ...) */

/* ---- common -------------------------------------------------------------- */

/*
 * A distribution of n integer values (ns unless said otherwise).
 *
 * Percentiles are nearest-rank: with the values sorted ascending as
 * v[1] <= ... <= v[n], the p-th percentile is v[ceil(p * n / 100)] (and
 * v[1] when that rank is 0). So p50 of {1,2,3,4} is 2, p95 of 20 values is
 * the 19th, p95 of fewer than 20 values is the maximum.
 * All fields are 0 when n is 0.
 */
typedef struct gpufl__ana_dist {
    uint64_t n;    /* values */
    int64_t total; /* their sum */
    int64_t min, max;
    int64_t p50, p95;
    double mean; /* total / n */
} gpufl__ana_dist;

/* What the analyses may be told; gpufl__ana_options_default() fills it. A
 * 0 in a field means its default. */
typedef struct gpufl__ana_options {
    uint32_t top_kernels;     /* hotspots: kernels listed (20) */
    uint32_t top_scopes;      /* hotspots: scopes listed per kernel and tree (3) */
    uint32_t top_stacks;      /* hotspots: CPU stacks listed per kernel (3) */
    uint32_t max_allocations; /* memory: allocations listed live at the peak, and never
                                  freed, per device (20) */
} gpufl__ana_options;

void gpufl__ana_options_default(gpufl__ana_options *o);

/* ---- executive summary ---------------------------------------------------- */

/* One GPU: every device index that has a device_info line, GPU work or
 * NVML samples. */
typedef struct gpufl__ana_device_summary {
    uint32_t device; /* device index */
    uint32_t name;   /* string id ("NVIDIA H200"); 0 without device_info */
    /* GPU work: kernels, copies and memsets that ran on this device. */
    uint64_t busy_ns;            /* length of the union of their [start, end) intervals: time
                                  when at least one ran; concurrent work counts once */
    double busy_pct;             /* busy_ns / the session's wall_ns * 100 (0 when wall_ns is 0) */
    uint64_t kernels, kernel_ns; /* count, sum of durations */
    uint64_t copies, copy_bytes, copy_ns;
    uint64_t memsets, memset_bytes, memset_ns;
    uint64_t first_ns, last_ns; /* first start and last end of its work; 0 without work */
    /* NVML samples of this device (FORMAT.md `device_metrics`). */
    uint64_t samples;
    uint64_t util_samples;        /* samples with gpu_util_pct */
    double util_mean_pct;         /* mean of gpu_util_pct over those samples */
    uint32_t util_peak_pct;       /* their maximum */
    uint64_t mem_samples;         /* samples with mem_used_bytes */
    uint64_t mem_used_peak_bytes; /* maximum of mem_used_bytes (whole device, all processes) */
    uint64_t mem_used_peak_ns;    /* time of the first sample at that maximum */
    uint64_t mem_total_bytes;     /* device memory (device_info, else the samples); 0 unknown */
    uint64_t proc_mem_samples;    /* samples with proc_mem_bytes */
    uint64_t proc_mem_peak_bytes; /* maximum of proc_mem_bytes (this process) */
} gpufl__ana_device_summary;

typedef struct gpufl__ana_summary {
    uint64_t start_ns;           /* session start */
    uint64_t end_ns;             /* session end; for a session that did not end (crash, or
                                   still running), the latest time of any row in the trace */
    uint64_t wall_ns;            /* end_ns - start_ns */
    bool ended;                  /* the session recorded its end */
    uint64_t kernels, kernel_ns; /* all devices: count, sum of durations */
    uint64_t copies, copy_bytes, copy_ns;
    uint64_t memsets, memset_bytes, memset_ns;
    uint64_t syncs, sync_ns; /* host waits: count, sum of durations */
    uint64_t scopes, nvtx_ranges, nvtx_marks;
    uint64_t allocations, frees;
    uint64_t dropped_total;                                /* events lost, all reasons (info.dropped summed) */
    uint64_t dropped[16];                                  /* by reason, gfl_drop_reason numbering (FORMAT.md) */
    uint64_t skipped_bytes, skipped_lines, skipped_chunks; /* what the reader skipped */
    uint32_t ndevices;
    gpufl__ana_device_summary *devices; /* by device index */
    uint64_t failed_allocations;        /* allocations that failed for lack of memory (in none of the above) */
} gpufl__ana_summary;

int gpufl__analyze_summary(const gpufl_trace *t, gpufl__ana_summary *out) __attribute__((warn_unused_result));
void gpufl__ana_summary_free(gpufl__ana_summary *s);

/* ---- scopes --------------------------------------------------------------- */

/*
 * Two trees of paths: gpufl scopes (gpufl_scope_begin / GFL_SCOPE) and NVTX
 * push/pop and start/end ranges (what PyTorch and libraries annotate with).
 * A node is a path: every instance of "step/forward" on any thread is one
 * node, child of "step". gpufl scopes nest by their recorded parent id; NVTX
 * ranges by time on their thread (a range's parent is the innermost range
 * of the same thread that began no later and ends no earlier; ranges of
 * different threads never nest). NVTX marks are instants, not in the tree.
 *
 * Wall time of an instance: end - begin. An instance that never ended (the
 * session crashed or was still running) counts until the session's last
 * recorded time, the end the trace gives it (gpufl_trace_scopes.unended),
 * and is counted in `unended`.
 *
 * GPU time inside a node: the sum of the durations (end - start) of the
 * kernels, copies and memsets whose launching API call was made while an
 * instance of this node, or of a node below it, was the innermost one open
 * on the calling thread:
 *  - gpufl scopes: the work's recorded scope id (the innermost gpufl scope
 *    of the launching thread at the call) names the instance directly;
 *  - NVTX: the instance is the innermost range of the launching thread
 *    (tid) open at the call's start (api_start, begin <= t < end); kernels
 *    record the name of that range, and a kernel whose recorded name is not
 *    the found range's is given to the nearest enclosing range of that name
 *    (else to none). Work with no API call time, no thread, or recorded with
 *    no range open is given to no range.
 * It is a sum of device time, not wall time: work on several streams at once
 * can make it larger than the node's wall time; work launched in a scope runs
 * later, possibly after it ended. Work given to no instance is counted in the
 * tree's `unattributed_*`.
 */
enum {
    GPUFL__ANA_TREE_SCOPES = 0, /* gpufl scopes */
    GPUFL__ANA_TREE_NVTX = 1,   /* NVTX ranges */
    GPUFL__ANA_TREE_COUNT
};

typedef struct gpufl__ana_scope_node {
    uint8_t tree;           /* GPUFL__ANA_TREE_SCOPES or _NVTX: which kind of node */
    uint32_t name;          /* string id of the last path element */
    uint32_t domain;        /* NVTX domain string id (0: default domain; always 0 for scopes) */
    uint32_t parent;        /* index in nodes[], GPUFL__ANA_NONE for a root */
    uint32_t depth;         /* 0 for roots */
    uint32_t children;      /* direct children (they follow, in pre-order) */
    uint64_t count;         /* instances */
    uint64_t unended;       /* instances with no end (counted until the session's last
                                recorded time) */
    uint32_t threads;       /* distinct threads the instances ran on */
    gpufl__ana_dist wall;   /* wall time per instance: total, mean, min, max, p50, p95 */
    double share_of_parent; /* wall.total / the parent's wall.total; for a root, / the
                                session's wall_ns (0 when the divisor is 0) */
    uint64_t gpu_ns;        /* GPU time inside: this node and every node below it */
    uint64_t gpu_self_ns;   /* GPU time given to this node's own instances */
    uint64_t gpu_ops;       /* kernels, copies and memsets inside (this node and below) */
    uint64_t gpu_self_ops;
} gpufl__ana_scope_node;

typedef struct gpufl__ana_scope_tree {
    uint8_t tree; /* GPUFL__ANA_TREE_* */
    uint32_t n;
    gpufl__ana_scope_node *nodes;               /* pre-order: a node, then its subtrees; siblings (and
                                     roots) by wall.total descending, then name text,
                                     then domain text */
    uint32_t roots;                             /* nodes with no parent */
    uint64_t instances;                         /* rows of the trace that made the tree */
    uint64_t attributed_ns, attributed_ops;     /* GPU work given to some node */
    uint64_t unattributed_ns, unattributed_ops; /* GPU work given to none */
} gpufl__ana_scope_tree;

typedef struct gpufl__ana_scopes {
    gpufl__ana_scope_tree trees[GPUFL__ANA_TREE_COUNT]; /* [GPUFL__ANA_TREE_SCOPES], [_NVTX] */
    uint64_t nvtx_marks;                                /* NVTX marks (instants, not in the tree) */
} gpufl__ana_scopes;

int gpufl__analyze_scopes(const gpufl_trace *t, gpufl__ana_scopes *out) __attribute__((warn_unused_result));
void gpufl__ana_scopes_free(gpufl__ana_scopes *s);

/* The path of nodes[i] of a tree ("step/forward/attn"), names joined by
 * sep, into buf (always NUL-terminated, cut to len - 1 bytes). Returns the
 * length the whole path has (like snprintf). */
size_t gpufl__ana_scope_path(const gpufl_trace *t, const gpufl__ana_scope_tree *tree, uint32_t i, const char *sep,
                             char *buf, size_t len);

/* ---- hotspots ------------------------------------------------------------- */

/* A kernel launch configuration as the trace records it (FORMAT.md `kernel`). */
typedef struct gpufl__ana_launch_config {
    uint32_t grid[3];                   /* blocks, x y z */
    uint16_t block[3];                  /* threads per block */
    uint16_t registers;                 /* per thread */
    uint32_t static_smem, dynamic_smem; /* shared memory per block, bytes */
    uint32_t local_mem;                 /* local memory per thread, bytes */
    uint16_t occupancy_x10000;          /* theoretical occupancy x 10000; 0 unknown */
    uint8_t limiter;                    /* 0 unknown, 1 warps, 2 registers, 3 shared memory, 4 blocks */
} gpufl__ana_launch_config;

/* A scope (node of gpufl__ana_scopes) that a hot kernel ran in. */
typedef struct gpufl__ana_hot_scope {
    uint32_t node; /* index in the nodes[] of the tree this list is for; the same trace
                        gives the same indices in gpufl__analyze_scopes() */
    uint32_t name; /* the node's name (string id), for renderers without the tree */
    uint64_t launches;
    uint64_t gpu_ns; /* this kernel's GPU time given to the node itself (not below it) */
    double share;    /* gpu_ns / the kernel's total GPU time */
} gpufl__ana_hot_scope;

/* A PyTorch op (gpufl__ana_op's key: name, module, backward_only) that
 * launched a hot kernel. */
typedef struct gpufl__ana_hot_op {
    uint32_t name;      /* the op's name: its forward op's for backward work */
    uint32_t module;    /* the module range's name ("nn.Module: Net.fc"), 0 none */
    bool backward_only; /* backward work whose forward op was not found */
    uint64_t launches;
    uint64_t gpu_ns; /* this kernel's GPU time given to the op, forward and backward */
    double share;    /* gpu_ns / the kernel's total GPU time */
} gpufl__ana_hot_op;

/* A CPU stack that launched a hot kernel. */
typedef struct gpufl__ana_hot_stack {
    uint32_t stack; /* stack id (FORMAT.md `stack`); frames: `gpufl stacks SESSION` */
    uint64_t launches;
    uint64_t gpu_ns;
    double share; /* launches / the kernel's launches */
} gpufl__ana_hot_stack;

typedef struct gpufl__ana_hotspot {
    uint32_t name;                   /* demangled kernel name (string id) */
    uint32_t mangled;                /* mangled name of its first launch (0: same as name) */
    gpufl__ana_dist dur;             /* GPU time per launch: n launches, total, mean, min, max,
                                  p50, p95 */
    double share;                    /* dur.total / all kernels' GPU time */
    gpufl__ana_launch_config config; /* the most common configuration (ties: the one
                                        launched first) */
    uint64_t config_launches;        /* launches with it */
    uint32_t configs;                /* distinct configurations of this kernel */
    uint32_t devices;                /* distinct devices it ran on */
    uint32_t streams;                /* distinct (device, stream)s it ran on */
    /* Where it was launched from, per tree (GPUFL__ANA_TREE_*): the nodes that
     * got most of its GPU time (by gpu_ns descending, then node index), at
     * most options.top_scopes, and the GPU time given to no node. */
    uint32_t nscopes[GPUFL__ANA_TREE_COUNT];
    gpufl__ana_hot_scope *scopes[GPUFL__ANA_TREE_COUNT];
    uint64_t unscoped_ns[GPUFL__ANA_TREE_COUNT];
    /* The CPU stacks of its launches (by launches descending, then gpu_ns
     * descending, then id), at most options.top_stacks; ids only (see
     * gpufl__ana_hotspots.stack_frames). */
    uint32_t nstacks;
    gpufl__ana_hot_stack *stacks;
    uint32_t distinct_stacks;   /* stack ids seen */
    uint64_t no_stack_launches; /* launches with no stack recorded */
    /* Appended fields. The PyTorch ops that launched it (see "PyTorch ops"
     * below): the (op, module) pairs that got most of its GPU time, by
     * gpu_ns descending, then op name text, module text, backward_only; at
     * most options.top_scopes; and its GPU time launched in no op range
     * (all of it in a session without op ranges). */
    uint32_t nops;
    gpufl__ana_hot_op *ops;
    uint64_t unop_ns;
} gpufl__ana_hotspot;

typedef struct gpufl__ana_hotspots {
    uint32_t n;
    gpufl__ana_hotspot *kernels; /* by dur.total descending, then name text; at most
                                    options.top_kernels */
    uint32_t distinct;           /* distinct kernel names in the session */
    uint64_t launches;           /* all kernels */
    uint64_t total_ns;           /* their GPU time (sum of durations) */
    bool stack_frames;           /* false: the trace has no table of stack frames, so stacks
                                  are ids only; resolve them with `gpufl stacks` */
} gpufl__ana_hotspots;

int gpufl__analyze_hotspots(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_hotspots *out)
    __attribute__((warn_unused_result));
void gpufl__ana_hotspots_free(gpufl__ana_hotspots *h);

/* ---- copies --------------------------------------------------------------- */

/* Where a peak bandwidth comes from. */
enum {
    GPUFL__ANA_PEAK_UNKNOWN = 0, /* nothing to compare with (peak_gbps 0) */
    GPUFL__ANA_PEAK_PCIE = 1,    /* the device's PCIe link (device_info pcie_max_gen and
                                    pcie_max_width): per direction, after line coding */
    GPUFL__ANA_PEAK_HBM = 2,     /* the device's memory bandwidth from gpufl's table of known
                                    GPUs, matched by device name (peak_table names the row) */
};

typedef struct gpufl__ana_copy_row {
    uint32_t device; /* the device the copy ran on (source device of a peer copy) */
    uint8_t kind;    /* gfl_copy_kind: 1 HtoD, 2 DtoH, 3 DtoD, 4 HtoH, 5 PtoP */
    uint64_t count, bytes;
    uint64_t ns;                             /* sum of durations */
    gpufl__ana_dist size;                    /* bytes per copy */
    double gbps;                             /* bytes / ns: achieved bandwidth, GB/s (1e9 bytes/s), over
                                 the time the copies ran; 0 when ns is 0 */
    uint64_t pageable_count, pageable_bytes; /* host side in pageable (not pinned) memory:
                                 such copies are staged through a driver buffer */
    double peak_gbps;                        /* what gbps is compared with (0: unknown) */
    uint8_t peak_source;                     /* GPUFL__ANA_PEAK_* */
    uint32_t pcie_gen, pcie_width;           /* the link peak_gbps comes from (PEAK_PCIE) */
    const char *peak_table;                  /* the table row matched (PEAK_HBM; or PEAK_PCIE when the link
                                 came from the table because the trace has no device_info
                                 link), static text; NULL otherwise */
    double pct_of_peak;                      /* gbps / peak_gbps * 100; 0 when the peak is unknown. A DtoD
                                 copy reads and writes every byte, so it moves 2 x bytes
                                 through memory: 50 % of peak is the memory at full speed */
} gpufl__ana_copy_row;

typedef struct gpufl__ana_copies {
    uint32_t n;
    gpufl__ana_copy_row *rows; /* by device, then kind */
    uint64_t count, bytes, ns; /* all copies */
    uint64_t memsets, memset_bytes, memset_ns;
} gpufl__ana_copies;

int gpufl__analyze_copies(const gpufl_trace *t, gpufl__ana_copies *out) __attribute__((warn_unused_result));
void gpufl__ana_copies_free(gpufl__ana_copies *c);

/* The peak bandwidths gpufl knows, for renderers that explain them: the
 * PCIe per-lane figure for a generation (GB/s per direction; 0 unknown),
 * and the memory bandwidth of a device name (GB/s; 0 unknown, *row the
 * matched table row, static text). */
double gpufl__ana_pcie_lane_gbps(uint32_t gen);
double gpufl__ana_hbm_gbps(const char *device_name, const char **row);

/* ---- idle time and launches ------------------------------------------------ */

/*
 * Idle time of a device, and of each of its streams, between its first and
 * last piece of work (kernels, copies, memsets), after Holistic Trace
 * Analysis's idle time breakdown, split by cause. A gap is a stretch
 * [g0, g1) when none of the row's work ran: g0 the end of the busy stretch
 * before it, g1 the start of the next work N (on the stream; for a device
 * row, on any of its streams). With a = the start of N's launching API call
 * (api_start) and T its launching thread:
 *
 *  - host: the part of [g0, min(a, g1)) when T was not in a sync call: N
 *    had not been launched yet and the thread was busy elsewhere (the CPU
 *    launched too late);
 *  - sync: the part of [g0, min(a, g1)) when T was inside a sync call of
 *    any kind (its recorded interval), i.e. N was late because the host was
 *    waiting; and the whole of [max(a, g0), g1) when a stream-wait-event was
 *    issued on N's stream after the previous work on that stream was
 *    launched and before N was (the GPU waited on another stream's event);
 *  - other: the rest: N was launched before or during the gap but started
 *    only at g1 (launch overhead, the queue, work on other streams, a wait
 *    the trace does not show), and every gap whose N has no API call time.
 *
 * host_ns + sync_ns + other_ns == idle_ns. Time before the first work and
 * after the last is not idle time here: it is lead_ns and tail_ns.
 */
#define GPUFL__ANA_ALL_STREAMS UINT32_MAX

typedef struct gpufl__ana_idle_row {
    uint32_t device;
    uint32_t stream;                     /* CUPTI stream id; GPUFL__ANA_ALL_STREAMS for the device row */
    uint64_t ops;                        /* kernels, copies and memsets */
    uint64_t first_ns, last_ns;          /* first start, last end */
    uint64_t busy_ns;                    /* union of its work's intervals */
    uint64_t idle_ns;                    /* (last_ns - first_ns) - busy_ns */
    uint64_t gaps;                       /* stretches of idle time */
    uint64_t host_ns, sync_ns, other_ns; /* idle_ns by cause (above) */
    uint64_t lead_ns;                    /* session start to first_ns */
    uint64_t tail_ns;                    /* last_ns to the session end (0 if work ended later) */
} gpufl__ana_idle_row;

typedef struct gpufl__ana_idle {
    uint32_t n;
    gpufl__ana_idle_row *rows; /* per device by index: its device row, then its streams by id */
} gpufl__ana_idle;

int gpufl__analyze_idle(const gpufl_trace *t, gpufl__ana_idle *out) __attribute__((warn_unused_result));
void gpufl__ana_idle_free(gpufl__ana_idle *i);

/*
 * Kernel launches, over the kernels with API call times (api_start and
 * api_end of the launching call, FORMAT.md):
 *  - latency: start - api_start, from the call to the kernel starting;
 *  - queue: start - api_end, how long it waited after the call returned
 *    (negative: it started before the call returned);
 *  - call: api_end - api_start, the launch call itself.
 * A kernel shorter than its own launch call keeps the GPU waiting for the
 * CPU when such kernels run back to back: `short_kernels` counts them.
 */
typedef struct gpufl__ana_launches {
    uint64_t kernels;  /* all kernels */
    uint64_t with_api; /* kernels with API call times (the rest are left out below) */
    gpufl__ana_dist latency, queue, call;
    uint64_t short_kernels;   /* end - start < api_end - api_start */
    uint64_t short_kernel_ns; /* their GPU time */
} gpufl__ana_launches;

int gpufl__analyze_launches(const gpufl_trace *t, gpufl__ana_launches *out) __attribute__((warn_unused_result));
void gpufl__ana_launches_free(gpufl__ana_launches *l);

/* ---- memory --------------------------------------------------------------- */

/*
 * Allocations (mem_alloc, mem_free; enable_memory_tracking) replayed in time
 * order, per device and memory space: an allocation adds its bytes, a free
 * removes the bytes of the live allocation at its address (on the same
 * device). A free with no live allocation at its address is `unmatched`
 * (its allocation was made before recording started, or lost); an
 * allocation at an address already live replaces it (the old one is counted
 * as never freed).
 */
enum {
    GPUFL__ANA_SPACE_DEVICE = 0,    /* device memory: device, array, managed, static kinds */
    GPUFL__ANA_SPACE_HOST = 1,      /* host memory the driver allocated: pinned, pageable */
    GPUFL__ANA_SPACE_FRAMEWORK = 2, /* blocks of a framework's caching allocator (tensors), which
                                       lie inside device allocations: replayed apart */
    GPUFL__ANA_SPACE_COUNT
};

/* "device", "host", "framework" ("?" out of range): how the outputs name a
 * space. */
const char *gpufl__ana_space_name(uint8_t space);

typedef struct gpufl__ana_allocation {
    uint64_t ts_ns; /* when it was allocated */
    uint64_t address, bytes;
    uint8_t kind;   /* gfl_mem_kind */
    uint32_t tid;   /* allocating thread, 0 unknown */
    uint64_t scope; /* innermost gpufl scope id at the call, 0 none */
    uint32_t nvtx;  /* innermost NVTX range name (string id), 0 none */
    uint32_t stack; /* CPU stack id, 0 none */
} gpufl__ana_allocation;

typedef struct gpufl__ana_mem_row {
    uint32_t device;
    uint8_t space;                /* GPUFL__ANA_SPACE_* */
    uint64_t allocs, alloc_bytes; /* allocations: count, bytes */
    uint64_t frees, free_bytes;   /* matched frees */
    uint64_t peak_bytes;          /* most bytes live at once */
    uint64_t peak_ns;             /* when that was first reached; 0 when peak_bytes is 0 */
    uint64_t live_at_peak;        /* allocations live at that moment */
    uint32_t nlive;
    gpufl__ana_allocation *live; /* of those, the largest (bytes descending, then time,
                                    then address), at most options.max_allocations */
    uint64_t end_bytes;          /* live at the end of the session */
    uint64_t never_freed;        /* allocations live at the end, or replaced: never freed */
    uint64_t never_freed_bytes;
    uint32_t nleaks;
    gpufl__ana_allocation *leaks; /* of those, the largest (same order), at most
                                     options.max_allocations */
    uint64_t unmatched_frees, unmatched_free_bytes;
    /* Appended fields. */
    uint8_t never_freed_why; /* GPUFL__ANA_NEVER_FREED_*: how to read never_freed */
} gpufl__ana_mem_row;

/* gpufl__ana_mem_row.never_freed_why: allocations live at the end are
 * leaks only when the program frees what it no longer uses. */
enum {
    GPUFL__ANA_NEVER_FREED_LEAKS = 0,    /* frees were recorded and the session ended: what
                                            was never freed is a leak candidate */
    GPUFL__ANA_NEVER_FREED_NO_FREES = 1, /* this row recorded allocations and no free at all:
                                            a caching allocator (PyTorch's keeps every block
                                            it gets from the driver and reuses it, returning
                                            it only on empty_cache() or exit) or a program
                                            that frees after recording stopped; never_freed
                                            is memory held, not evidence of a leak */
    GPUFL__ANA_NEVER_FREED_UNENDED = 2,  /* the session did not end (crash, still running):
                                            the frees may simply not have happened yet */
};

/* "leaks", "no_frees", "unended": gpufl__ana_mem_row.never_freed_why as the
 * JSON report spells it ("?" out of range). */
const char *gpufl__ana_never_freed_key(uint8_t why);

typedef struct gpufl__ana_memory {
    bool recorded; /* the session has allocation rows */
    uint32_t n;
    gpufl__ana_mem_row *rows; /* by device, then space; only (device, space)s with rows */
} gpufl__ana_memory;

int gpufl__analyze_memory(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_memory *out)
    __attribute__((warn_unused_result));
void gpufl__ana_memory_free(gpufl__ana_memory *m);

/* ---- stall reasons, SASS, hardware counters -------------------------------- */

/* A section whose data a later profiling engine records. Until the trace
 * has such rows the section is empty and says which engine fills it. */
enum {
    GPUFL__ANA_SECTION_EMPTY = 0, /* the session has no rows of this kind */
    GPUFL__ANA_SECTION_ROWS = 1,  /* it has: the section's own struct sums them */
};

typedef struct gpufl__ana_section {
    uint8_t status;     /* GPUFL__ANA_SECTION_* */
    const char *engine; /* profiling_engine that records it, static text:
                                  "pc_sampling", "sass_metrics", "range_profiler" */
    uint64_t rows;      /* rows of this kind in the trace */
} gpufl__ana_section;

/* Warp samples of one stall reason ("selected": issuing, not a stall). */
typedef struct gpufl__ana_stall {
    uint32_t reason; /* string id */
    uint64_t samples;
} gpufl__ana_stall;

#define GPUFL__ANA_TOP_STALLS 4

/* A kernel, source line or scope with its warp samples. */
typedef struct gpufl__ana_stall_row {
    uint32_t name;                               /* kernel: its demangled name (the sampled function's when no launch
                          of it was recorded); line: the function; scope: the scope's name
                          (0: work launched outside every scope) */
    uint32_t file;                               /* lines: string id of the source file */
    uint32_t line;                               /* lines: the line */
    uint64_t samples;                            /* every warp sampled, issuing or not */
    uint64_t stalled;                            /* samples of a reason other than "selected" */
    uint64_t kernel_ns;                          /* kernels: GPU time of its launches in the session */
    gpufl__ana_stall top[GPUFL__ANA_TOP_STALLS]; /* its stall reasons by samples, most first */
} gpufl__ana_stall_row;

/* PC sampling (gpufl_trace_get_pc_samples), summed.
 *
 * Scopes: CUPTI's continuous mode gives samples no kernel, only the
 * function and when they were collected. The samples of one collection
 * (since_ns, ts_ns] on one device are shared among the launches of that
 * function on that device running from GPUFL__ANA_PCS_SLACK_NS before
 * since_ns to ts_ns, by the time each ran in that stretch (CUPTI decodes
 * the hardware buffer on its own schedule, so samples can be collected a
 * little after their kernel ended), and each launch's share goes to its
 * innermost gpufl scope. When no launch ran then, the stretch reaches
 * back GPUFL__ANA_PCS_WIDE_SLACK_NS instead (a PyTorch loop on an H100,
 * sampled about a million times a second, left 29 % of its samples with
 * no launch in the 250 ms stretch). Samples with no launch in either are
 * `unattributed`. */
#define GPUFL__ANA_PCS_SLACK_NS 250000000ull
#define GPUFL__ANA_PCS_WIDE_SLACK_NS 2000000000ull
#define GPUFL__ANA_TOP_LINES 20

typedef struct gpufl__ana_stalls {
    uint64_t samples, stalled;
    uint32_t nreasons;
    gpufl__ana_stall *reasons; /* the session's, most first */
    uint32_t nkernels;
    gpufl__ana_stall_row *kernels; /* by samples, most first */
    uint32_t nlines;
    gpufl__ana_stall_row *lines; /* source lines by samples, the top GPUFL__ANA_TOP_LINES */
    uint32_t nscopes;
    gpufl__ana_stall_row *scopes; /* innermost gpufl scope by samples (shares rounded) */
    uint64_t unattributed;        /* samples of no launch recorded then */
    uint64_t no_line;             /* samples at PCs without line info */
} gpufl__ana_stalls;

/* The range profiler's hardware counters (gpufl_trace_get_range_metrics)
 * by scope or NVTX range name. A metric whose name ends in ".sum" (bytes,
 * cycles, conflicts, GPU ns) is summed over the ranges; any other (a
 * percentage, a rate, a ratio) is their mean weighted by each range's GPU
 * time (gpu__time_duration.sum), or their plain mean when the session did
 * not count GPU time. */
#define GPUFL__ANA_HW_MAX_METRICS 32

typedef struct gpufl__ana_hw_row {
    uint32_t name;                            /* string id: the scope's or NVTX range's name; 0 for the session's row */
    uint64_t ranges;                          /* ranges measured */
    double gpu_ns;                            /* gpu__time_duration.sum over them, 0 unknown */
    double values[GPUFL__ANA_HW_MAX_METRICS]; /* per metric of gpufl__ana_hw.metrics */
    uint8_t has[GPUFL__ANA_HW_MAX_METRICS];   /* 1: some range had the metric */
} gpufl__ana_hw_row;

typedef struct gpufl__ana_hw {
    uint32_t nmetrics;
    uint32_t metrics[GPUFL__ANA_HW_MAX_METRICS]; /* string ids, in the order first recorded */
    uint8_t summed[GPUFL__ANA_HW_MAX_METRICS];   /* 1: ".sum" (summed), 0: weighted mean */
    gpufl__ana_hw_row session;                   /* every range */
    uint32_t nrows;
    gpufl__ana_hw_row *rows; /* by name, most GPU time (else most ranges) first */
} gpufl__ana_hw;

typedef struct gpufl__ana_counters {
    gpufl__ana_section stalls; /* warp stall reasons by kernel and source line */
    gpufl__ana_section sass;   /* per-instruction SASS metrics */
    gpufl__ana_section hw;     /* hardware counters per kernel or range */
    /* Appended. */
    gpufl__ana_stalls pcs; /* what `stalls` has, summed; empty when it has no rows */
    gpufl__ana_hw ranges;  /* what `hw` has, by scope; empty when it has no rows */
} gpufl__ana_counters;

int gpufl__analyze_stalls(const gpufl_trace *t, gpufl__ana_stalls *out) __attribute__((warn_unused_result));
void gpufl__ana_stalls_free(gpufl__ana_stalls *s);

int gpufl__analyze_counters(const gpufl_trace *t, gpufl__ana_counters *out) __attribute__((warn_unused_result));

/* The range profiler's counters by name. 0, or GPUFL_ENOMEM with *out
 * empty. */
int gpufl__analyze_hw(const gpufl_trace *t, gpufl__ana_hw *out) __attribute__((warn_unused_result));
void gpufl__ana_hw_free(gpufl__ana_hw *hw);
/* What a metric's values are, from its name, for the reports. */
enum {
    GPUFL__HW_COUNT = 0, /* a plain number (conflicts, cycles, instructions) */
    GPUFL__HW_BYTES,     /* bytes (".sum" of a *bytes* metric) */
    GPUFL__HW_NS,        /* GPU time */
    GPUFL__HW_PCT,       /* a percentage */
    GPUFL__HW_RATE,      /* per second (bytes per second for a *bytes* metric) */
};
/* A short column label for metric ("DRAM read", "L2 hit"; the name itself
 * when it has none) and its unit (GPUFL__HW_*) in *unit. */
const char *gpufl__ana_hw_label(const char *metric, int *unit);

/* The row of hw named name, or NULL. */
const gpufl__ana_hw_row *gpufl__ana_hw_find(const gpufl__ana_hw *hw, uint32_t name);

/* ---- PM sampling (ana_pm.c) ----------------------------------------------------- */

#define GPUFL__ANA_PM_MAX_ROWS 256

typedef struct gpufl__ana_pm_row {
    uint16_t device;
    uint32_t metric; /* string id: the CUPTI metric name */
    uint64_t samples;
    uint64_t ns; /* the samples' time together */
    double mean; /* weighted by each sample's length, in the metric's unit (plain when ns is 0) */
    double max;
} gpufl__ana_pm_row;

typedef struct gpufl__ana_pm {
    uint32_t n;
    gpufl__ana_pm_row *rows; /* in the order each (device, metric) first appears */
} gpufl__ana_pm;

/* The session's PM samples by device and metric. 0, or GPUFL_ENOMEM with
 * *out empty. */
int gpufl__analyze_pm(const gpufl_trace *t, gpufl__ana_pm *out) __attribute__((warn_unused_result));
void gpufl__ana_pm_free(gpufl__ana_pm *pm);

/* A PM metric's unit, read from its name's last part as CUPTI spells it:
 * `pct_of_peak_*` (or `pct`) a percentage, `per_second` a rate (of bytes
 * when the counter counts bytes), anything else the counter's own unit. */
enum {
    GPUFL__PM_UNIT_RAW = 0,
    GPUFL__PM_UNIT_PCT,           /* 0..100 */
    GPUFL__PM_UNIT_BYTES_PER_SEC, /* dram__bytes_read.sum.per_second */
    GPUFL__PM_UNIT_PER_SEC,       /* anything else per second */
};
int gpufl__ana_pm_unit(const char *metric);
/* The unit's word for outputs: "raw", "pct", "bytes_per_second", "per_second". */
const char *gpufl__ana_pm_unit_name(int unit);
void gpufl__ana_counters_free(gpufl__ana_counters *c);

/* ---- SASS metrics --------------------------------------------------------------- */

/*
 * The SASS metrics engine's counts (gpufl_trace_sass_metrics), summed per
 * kernel (function name) and per source line of a kernel, with findings.
 *
 *   coalescing  sectors_ideal / sectors of global memory instructions: 1
 *               when each warp's accesses touch no more 32-byte sectors
 *               than their bytes need; 0.125 when each thread of a warp
 *               reading 4 bytes touches a sector of its own
 *   active      thread_inst / (inst * 32): the average share of a warp's
 *               32 lanes active per executed instruction; below 1 where
 *               branches diverged (or warps were partial)
 *
 * A row whose instructions had no source line (compiled without
 * -lineinfo, source collection off) is kept per pc instead: line 0, pc
 * set. Findings (thresholds in docs/REPORT.md, GPUFL__ANA_SASS_*):
 *   uncoalesced  a line with coalescing below 50 % that moved at least
 *                GPUFL__ANA_SASS_MIN_SECTORS sectors and 1 % of its
 *                kernel's; ordered by excess sectors (sectors - ideal)
 *   divergent    a line with active below 75 % that executed at least
 *                GPUFL__ANA_SASS_MIN_INST warp instructions and 1 % of its
 *                kernel's; ordered by idle lanes (inst * 32 - thread_inst)
 */
#define GPUFL__ANA_SASS_COALESCING_BELOW 0.50
#define GPUFL__ANA_SASS_ACTIVE_BELOW 0.75
#define GPUFL__ANA_SASS_MIN_SECTORS 1024
#define GPUFL__ANA_SASS_MIN_INST 1024

enum { GPUFL__ANA_SASS_UNCOALESCED = 1, GPUFL__ANA_SASS_DIVERGENT = 2 };

typedef struct gpufl__ana_sass_row {
    uint32_t name;              /* the kernel's name */
    uint32_t file, line;        /* line rows: the source line (0: unknown, see pc) */
    uint32_t pc;                /* line rows without a line: the instruction's pc; else UINT32_MAX */
    uint32_t kernel;            /* line rows: index of their kernel row */
    uint64_t launches;          /* kernel rows: the session's launches of it (kernel events); the counts are of all */
    uint64_t inst, thread_inst; /* warp-level and thread-level executions */
    uint64_t sectors, sectors_ideal, branch_targets, divergent_targets;
    uint16_t valid;    /* GFL_SASS_V_* bits all its rows had (docs/FORMAT.md) */
    double coalescing; /* 0..1, -1 unknown (no sectors or not measured) */
    double active;     /* 0..1, -1 unknown */
} gpufl__ana_sass_row;

typedef struct gpufl__ana_sass_finding {
    uint8_t kind;  /* GPUFL__ANA_SASS_* */
    uint32_t line; /* index into lines */
    uint64_t cost; /* excess sectors, or idle lanes */
} gpufl__ana_sass_finding;

typedef struct gpufl__ana_sass {
    uint64_t rows;      /* sass_metric rows read */
    uint32_t n_kernels; /* by instructions executed, descending */
    gpufl__ana_sass_row *kernels;
    uint32_t n_lines; /* by instructions executed, descending */
    gpufl__ana_sass_row *lines;
    uint32_t n_findings; /* uncoalesced first, then divergent, each by cost */
    gpufl__ana_sass_finding *findings;
} gpufl__ana_sass;

int gpufl__analyze_sass(const gpufl_trace *t, gpufl__ana_sass *out) __attribute__((warn_unused_result));
void gpufl__ana_sass_free(gpufl__ana_sass *s);

/* ---- PyTorch ops ------------------------------------------------------------ */

/*
 * PyTorch's ops, from the NVTX ranges PyTorch pushes for them
 * (torch.autograd.profiler.emit_nvtx, which gpufl.torch switches on), by the
 * rules of the Python analyzer's `ops` frame (docs/PYTHON.md;
 * python/gpufl/_scopes.py, ops()), so that both give the same answers:
 *
 *  - a module range is an NVTX range named "nn.Module: <path>" (gpufl.torch
 *    pushes one around each module call); <path> ("Net.fc") is its module;
 *  - an op range is an NVTX range (not a mark) of the default domain, not a
 *    module range, whose text carried a sequence number (has_seq), or whose
 *    name is "namespace::op" (an identifier, "::", then no white space:
 *    "aten::addmm", "c10d::allreduce_") or ends in "Backward" and digits
 *    ("AddmmBackward0"; a final newline is allowed, as Python's `$` does;
 *    the digits are ASCII ones);
 *  - an op range is backward when its name ends in "Backward" and digits;
 *    when it has a seq and is on another thread than the first (by begin,
 *    then row) of the op ranges with that seq not backward by name (autograd
 *    runs backward ops on its own threads); or when it runs directly inside
 *    a backward op range (aten::mm inside AddmmBackward0: "inherited");
 *  - the forward op of a backward op range with a seq: of the op ranges
 *    with that seq that are not backward, the deepest (recorded depth), then
 *    the latest to begin (then the last row): the op whose autograd node it
 *    is. An inherited op range takes that of the range it runs in. PyTorch's
 *    "autograd::engine::evaluate_function: AddmmBackward0" ranges carry no
 *    seq: backward by name, with no forward op;
 *  - the module of an op range: the innermost module range around it; of a
 *    backward op range with a seq, its forward op's (none when that has
 *    none); an inherited op range without a module of its own takes the
 *    module of the range it runs in.
 * Ranges nest as in the NVTX tree (by time on their thread, see "scopes");
 * push/pop ranges nest as their recorded depths say, which is how the
 * Python analyzer nests them, so both agree on what PyTorch records.
 */
#define GPUFL__ANA_MODULE_PREFIX "nn.Module: "

/* What an NVTX row is (gpufl__ana_op_rows.flags). */
enum {
    GPUFL__ANA_OPROW_OP = 1,        /* an op range */
    GPUFL__ANA_OPROW_BACKWARD = 2,  /* an op range of the backward pass */
    GPUFL__ANA_OPROW_MODULE = 4,    /* a module range */
    GPUFL__ANA_OPROW_INHERITED = 8, /* backward because it runs inside a backward op range */
};

/* The rules above, per row of the trace's NVTX table: what other code
 * reuses (the ops analysis, the hotspots, the timeline's op slices). In a
 * session with neither op nor module ranges the arrays are NULL. */
typedef struct gpufl__ana_op_rows {
    size_t n;       /* rows of the NVTX table (0 when the arrays are NULL) */
    uint8_t *flags; /* per row: GPUFL__ANA_OPROW_* */
    /* per op row: the row of its forward op; GPUFL__ANA_NONE for a forward
     * op, and for a backward op whose forward op was not found */
    uint32_t *forward;
    /* per op row: the row of its module range; NONE for none, and for the
     * rows that are not op ranges */
    uint32_t *module;
    /* per row: the innermost op range at or around it (itself for an op
     * range); NONE when none (marks: always) */
    uint32_t *op;
    uint64_t ops, backward_ops, modules; /* op ranges, backward ones, module ranges */
} gpufl__ana_op_rows;

int gpufl__analyze_op_rows(const gpufl_trace *t, gpufl__ana_op_rows *out) __attribute__((warn_unused_result));
void gpufl__ana_op_rows_free(gpufl__ana_op_rows *r);

/* The op that the work launched in op range `row` counts for: its forward
 * op when it has one, else itself. */
static inline uint32_t gpufl__ana_op_effective(const gpufl__ana_op_rows *r, uint32_t row)
{
    return r->forward[row] != GPUFL__ANA_NONE ? r->forward[row] : row;
}

/* The module path of a module range's name: what follows "nn.Module: "
 * (the whole name when it has no such prefix). */
const char *gpufl__ana_module_path(const char *range_name);

/*
 * GPU work by op. Each kernel, copy and memset is given to the innermost op
 * range that its launching call was made in (the NVTX range the scopes
 * give it, "GPU time inside a node", or the nearest op range around that),
 * and counts for that range's op: the forward op of a backward op range
 * (so a forward op's row holds its backward time too); for a forward op
 * range, the nearest op range at or around it that some backward op names
 * as its forward op (aten::cudnn_convolution's work counts for the
 * aten::convolution around it, whose ConvolutionBackward0 is counted there
 * too), else its own name; the range's own name for a backward one with no
 * forward op found (backward_only); and for that op's module. Allocations (mem_alloc
 * rows, by their caller and time) are given the same way.
 *
 * An op is (name, backward_only); in module_ops, (module, name,
 * backward_only). Calls count op ranges that are not inside a range of
 * the same op: a forward op range is a call (aten::t inside aten::linear
 * is a call of aten::t), a backward one a backward call (AddmmBackward0 is
 * one of aten::addmm; aten::mm inside it is not another).
 */
typedef struct gpufl__ana_op {
    uint32_t name; /* string id of the op's name */
    /* module_ops: string id of the module range's name ("nn.Module:
     * Net.fc"), 0 for ops in no module; ops: 0 */
    uint32_t module;
    bool backward_only;           /* backward op ranges whose forward op was not found */
    uint64_t calls;               /* forward op ranges (above) */
    uint64_t backward_calls;      /* backward op ranges (above) */
    uint64_t kernels;             /* kernels given to it, forward and backward */
    uint64_t work;                /* kernels, copies and memsets given to it */
    uint64_t forward_ns;          /* their GPU time (sum of durations) from forward op ranges */
    uint64_t backward_ns;         /* from backward op ranges */
    uint64_t total_ns;            /* forward_ns + backward_ns */
    uint64_t allocs, alloc_bytes; /* allocations given to it */
    double share;                 /* total_ns / the session's GPU time (all work) */
} gpufl__ana_op;

/* A module: the GPU time of the ops given to it, and those ops. */
typedef struct gpufl__ana_op_module {
    uint32_t module; /* string id of the module range's name; 0: ops in no module */
    uint64_t kernels, work;
    uint64_t forward_ns, backward_ns, total_ns;
    uint64_t allocs, alloc_bytes;
    double share;         /* total_ns / the session's GPU time */
    uint32_t first, nops; /* its ops: module_ops[first .. first + nops) */
} gpufl__ana_op_module;

typedef struct gpufl__ana_ops {
    uint64_t op_ranges, backward_ranges, module_ranges; /* gpufl__ana_op_rows' counts */
    /* by total_ns descending, then name text, then forward before
     * backward_only */
    uint32_t n;
    gpufl__ana_op *ops;
    /* by total_ns descending, then module text (none: "") */
    uint32_t nmodules;
    gpufl__ana_op_module *modules;
    /* grouped by module, in modules' order; within one, in ops' order */
    uint32_t nmodule_ops;
    gpufl__ana_op *module_ops;
    uint64_t work, work_ns;           /* all GPU work: kernels, copies and memsets */
    uint64_t in_ops, in_ops_ns;       /* given to some op */
    uint64_t forward_ns, backward_ns; /* in_ops_ns from forward, from backward op ranges */
    /* launched in no op range (work with no launching call time or thread
     * included) */
    uint64_t outside, outside_ns;
    uint64_t allocs, alloc_bytes; /* allocations given to some op */
    uint64_t outside_allocs, outside_alloc_bytes;
} gpufl__ana_ops;

int gpufl__analyze_ops(const gpufl_trace *t, gpufl__ana_ops *out) __attribute__((warn_unused_result));
void gpufl__ana_ops_free(gpufl__ana_ops *o);

/* ---- memory layers, peaks and leaks (ana_mem_layers.c, ana_mem_peaks.c,
 * ana_leaks.c) -------------------------------------------------------------
 *
 * A process's GPU memory is seen by three recorders, each inside the one
 * before it:
 *  - the device (NVML): used memory of all processes, and of this one;
 *  - the driver: allocations through CUDA (mem_alloc rows not of a
 *    framework), replayed;
 *  - a framework's caching allocator (PyTorch): its reserved, active,
 *    allocated and inactive-split bytes (the `allocator` table), or else
 *    the replay of its blocks (mem_alloc rows of a framework).
 * Each is one series per device: values over time, a step function (a
 * value holds from its time to the next). A series the session did not
 * record is absent (its bit clear), never 0.
 */
enum {
    GPUFL__ANA_MEM_DEVICE = 0,         /* NVML mem_used_bytes: all processes */
    GPUFL__ANA_MEM_PROCESS = 1,        /* NVML proc_mem_bytes: this process */
    GPUFL__ANA_MEM_DRIVER = 2,         /* driver allocations live (device memory) */
    GPUFL__ANA_MEM_RESERVED = 3,       /* the framework's reserved bytes (its segments) */
    GPUFL__ANA_MEM_ACTIVE = 4,         /* its active blocks (allocated, and freed blocks whose stream
                                          use is pending) */
    GPUFL__ANA_MEM_ALLOCATED = 5,      /* its allocated bytes: the allocator table's, or the live
                                          bytes of its blocks replayed */
    GPUFL__ANA_MEM_INACTIVE_SPLIT = 6, /* cached bytes in split segments (fragmentation) */
    GPUFL__ANA_MEM_LARGEST_FREE = 7,   /* the largest free block in its segments */
    GPUFL__ANA_MEM_SERIES
};
#define GPUFL__ANA_MEM_BIT(s) (1u << (s))

/* A series as the JSON report spells it ("driver") and as people read it
 * ("driver allocations"); "?" out of range. Static text. */
const char *gpufl__ana_mem_key(uint8_t series);
const char *gpufl__ana_mem_label(uint8_t series);

/* Where the framework's allocated bytes come from. */
enum {
    GPUFL__ANA_FW_NONE = 0,      /* no framework layer recorded */
    GPUFL__ANA_FW_ALLOCATOR = 1, /* the allocator table (its states, as sampled) */
    GPUFL__ANA_FW_BLOCKS = 2,    /* the replay of its blocks (no allocator table) */
};

/* The difference between two layers at one moment, and what usually
 * explains it. upper and lower are GPUFL__ANA_MEM_* layers adjacent among
 * those known (device, process, driver, reserved, allocated, in that
 * order); when a layer between them is unknown the gap holds both
 * explanations. */
typedef struct gpufl__ana_mem_gap {
    uint8_t upper, lower;
    int64_t bytes; /* upper - lower; negative when the layers were read at different moments
                      (NVML samples lag behind the replays) */
} gpufl__ana_mem_gap;

/* What a gap between adjacent known layers upper and lower usually is,
 * into buf ("; "-joined when it spans several steps). Returns buf. */
const char *gpufl__ana_mem_gap_why(uint8_t upper, uint8_t lower, char *buf, size_t len);
/* Its key in the JSON report ("process-driver"), into buf. Returns buf. */
const char *gpufl__ana_mem_gap_key(uint8_t upper, uint8_t lower, char *buf, size_t len);

/* One moment of the timeline: each series' maximum over the stretch of
 * recorded changes the point stands for (the timeline is cut into at most
 * options.max_points stretches of equal numbers of changes). */
typedef struct gpufl__ana_mem_point {
    uint64_t ts_ns;                    /* the stretch's first change */
    uint32_t valid;                    /* GPUFL__ANA_MEM_BIT of the series known in it */
    uint64_t v[GPUFL__ANA_MEM_SERIES]; /* bytes; 0 where not valid */
} gpufl__ana_mem_point;

typedef struct gpufl__ana_mem_layers_dev {
    uint32_t device;
    uint64_t total_bytes;                    /* the device's memory; 0 unknown */
    uint32_t known;                          /* GPUFL__ANA_MEM_BIT of the series this device has */
    uint8_t framework_source;                /* GPUFL__ANA_FW_* */
    uint32_t framework;                      /* string id of the framework's name ("pytorch"); 0 unknown */
    bool driver_frees;                       /* the driver rows include frees (false: a caching allocator's
                                segments, held until the end) */
    uint64_t peak[GPUFL__ANA_MEM_SERIES];    /* each known series' maximum */
    uint64_t peak_ns[GPUFL__ANA_MEM_SERIES]; /* when it was first reached */
    /* The process's peak: the peak of the outermost layer known of this
     * process (process, else driver, else reserved, else allocated, else
     * device), and every series' value at that moment. */
    uint8_t at_layer;
    uint64_t at_ns;
    uint32_t at_valid; /* GPUFL__ANA_MEM_BIT of the series known then */
    uint64_t at[GPUFL__ANA_MEM_SERIES];
    uint32_t ngaps;
    gpufl__ana_mem_gap gaps[GPUFL__ANA_MEM_SERIES]; /* at that moment, outermost first */
    uint32_t npoints;
    gpufl__ana_mem_point *points; /* the timeline, in time order */
    uint64_t changes;             /* recorded changes the points stand for */
} gpufl__ana_mem_layers_dev;

typedef struct gpufl__ana_mem_layers {
    uint32_t n;
    gpufl__ana_mem_layers_dev *devices; /* by device index; those with any series */
} gpufl__ana_mem_layers;

#define GPUFL__ANA_MEM_MAX_POINTS 500

/* max_points: 0 for GPUFL__ANA_MEM_MAX_POINTS. */
int gpufl__analyze_mem_layers(const gpufl_trace *t, uint32_t max_points, gpufl__ana_mem_layers *out)
    __attribute__((warn_unused_result));
void gpufl__ana_mem_layers_free(gpufl__ana_mem_layers *l);

/*
 * Peaks of live memory, per device, per stream, per gpufl scope name and per
 * NVTX range name (PyTorch's ops when it annotates them). "Live" is the
 * framework's allocated bytes when recorded (its blocks replayed, exact at
 * every block, when it recorded them; else its allocator's states), else
 * the driver's allocations. For a name:
 * the highest live bytes while any of its instances was open, the growth
 * across its instances (live at the end minus live at the begin, summed),
 * and the allocations made while it was the caller's innermost scope or
 * range. A stream: its own blocks (framework blocks carry the framework's
 * stream; driver allocations the stream of a stream-ordered allocation, 0
 * for the others), replayed.
 */
enum {
    GPUFL__ANA_MPEAK_DEVICE = 0,
    GPUFL__ANA_MPEAK_STREAM = 1,
    GPUFL__ANA_MPEAK_SCOPE = 2, /* a gpufl scope name */
    GPUFL__ANA_MPEAK_NVTX = 3,  /* an NVTX range name */
};

typedef struct gpufl__ana_mem_peak {
    uint8_t kind;   /* GPUFL__ANA_MPEAK_* */
    uint8_t series; /* GPUFL__ANA_MEM_ALLOCATED or _DRIVER: what live means here */
    uint32_t device;
    uint32_t stream;    /* STREAM: the stream's id */
    uint32_t name;      /* SCOPE, NVTX: string id */
    uint64_t instances; /* SCOPE, NVTX: instances (on any thread) */
    uint64_t peak_bytes, peak_ns;
    int64_t growth_bytes;         /* SCOPE, NVTX: summed over instances */
    int64_t max_growth_bytes;     /* SCOPE, NVTX: of one instance */
    uint64_t allocs, alloc_bytes; /* allocations made in it (a stream's: on it) */
    bool blocks;                  /* series ALLOCATED read from the framework's blocks replayed,
                                     not from its allocator's states */
} gpufl__ana_mem_peak;

typedef struct gpufl__ana_mem_peaks {
    uint32_t n;
    gpufl__ana_mem_peak *rows; /* by device; per device its DEVICE row, its streams by id,
                                  then SCOPE and NVTX rows by peak_bytes descending, then
                                  growth descending, then name text; at most
                                  GPUFL__ANA_MEM_MAX_NAMES names of each kind */
    uint64_t names_left_out;   /* SCOPE and NVTX names past that */
} gpufl__ana_mem_peaks;

#define GPUFL__ANA_MEM_MAX_NAMES 20

int gpufl__analyze_mem_peaks(const gpufl_trace *t, gpufl__ana_mem_peaks *out) __attribute__((warn_unused_result));
void gpufl__ana_mem_peaks_free(gpufl__ana_mem_peaks *p);

/*
 * Leaks: every scope name (gpufl scopes, NVTX ranges) repeated at least
 * min_steps times is taken for a step. After each repetition, live bytes
 * (the framework's allocated bytes when recorded, else the driver's); the
 * first 20 % of repetitions (at least one) are a warm-up, left out, so a
 * caching allocator filling up is not a leak; a least-squares line through
 * the rest against the repetition index gives the growth per step, r² and
 * the two-sided p-value of the slope (Student t, n - 2 degrees of freedom).
 *
 * detected: p < 0.01, slope > 0, r² >= 0.5 and the line rises at least
 * 1 MiB over the fitted repetitions. severity, from that rise against the
 * device's memory (or, unknown, from the slope):
 *   critical >= 10 % (>= 64 MiB a step), high >= 2 % (>= 8 MiB),
 *   medium >= 0.5 % (>= 1 MiB), low below; "none" when not detected.
 */
enum {
    GPUFL__ANA_SEVERITY_NONE = 0,
    GPUFL__ANA_SEVERITY_LOW,
    GPUFL__ANA_SEVERITY_MEDIUM,
    GPUFL__ANA_SEVERITY_HIGH,
    GPUFL__ANA_SEVERITY_CRITICAL,
};

/* "none", "low", "medium", "high", "critical" ("?" out of range). */
const char *gpufl__ana_severity_name(uint8_t severity);

#define GPUFL__ANA_LEAK_MIN_STEPS 5
#define GPUFL__ANA_LEAK_MAX_GROUPS 10
#define GPUFL__ANA_LEAK_MAX_SUGGESTIONS 4

typedef struct gpufl__ana_leak_options {
    uint32_t min_steps; /* repetitions a name needs (0: GPUFL__ANA_LEAK_MIN_STEPS; at least 4,
                           so that 3 are fitted) */
    const char *scope;  /* only this name (NULL: every name) */
} gpufl__ana_leak_options;

/* Allocations made in the fitted repetitions and still live after the last
 * one, by allocating stack. */
typedef struct gpufl__ana_leak_group {
    uint32_t stack; /* stack id (a source stack for framework blocks); 0 none recorded */
    uint64_t count, bytes;
} gpufl__ana_leak_group;

typedef struct gpufl__ana_leak {
    uint8_t tree; /* GPUFL__ANA_TREE_SCOPES or _NVTX */
    uint32_t name;
    uint32_t device;
    uint8_t series; /* GPUFL__ANA_MEM_ALLOCATED or _DRIVER */
    uint32_t repetitions, warmup;
    uint64_t *live; /* per repetition (in begin order), live bytes after it */
    double slope;   /* bytes per repetition, over the fitted ones */
    double intercept, r_squared, p_value;
    int64_t increase_bytes; /* slope x (fitted repetitions - 1): the line's rise */
    uint64_t window_ns;     /* first fitted repetition's begin to the last one's end */
    bool detected;
    uint8_t severity; /* GPUFL__ANA_SEVERITY_* */
    uint32_t nsuggestions;
    const char *suggestions[GPUFL__ANA_LEAK_MAX_SUGGESTIONS]; /* static text */
    uint32_t ngroups;
    gpufl__ana_leak_group groups[GPUFL__ANA_LEAK_MAX_GROUPS]; /* bytes descending, then stack */
    uint64_t grew_count, grew_bytes;                          /* all such allocations */
    bool blocks;                                              /* groups come from framework blocks (source stacks) */
} gpufl__ana_leak;

typedef struct gpufl__ana_leaks {
    uint32_t min_steps; /* as used */
    uint32_t n;
    gpufl__ana_leak *rows; /* detected first, by severity, increase descending, then tree,
                              name text, device */
    uint32_t detected;     /* rows detected */
} gpufl__ana_leaks;

/* o may be NULL (defaults). GPUFL_EINVAL also for min_steps 1 to 3. */
int gpufl__analyze_leaks(const gpufl_trace *t, const gpufl__ana_leak_options *o, gpufl__ana_leaks *out)
    __attribute__((warn_unused_result));
void gpufl__ana_leaks_free(gpufl__ana_leaks *l);
/* For a detected NVTX row i: the earlier detected gpufl scope row on the
 * same device, repeated no more often, whose rise over the run or slope
 * it shares (within 10 %): the op ranges inside a
 * leaking step rise with it, and are told as riding on it, not as leaks of
 * their own. -1 when there is none (or row i is not such a row). */
int gpufl__ana_leak_rides_on(const gpufl__ana_leaks *l, uint32_t i);

/* ---- everything ----------------------------------------------------------- */

/* Every analysis of one trace, for the report and `gpufl diff`. Built in
 * sequence; the scopes' nodes and the hotspots' node indices agree. */
/* ---- flight recorder: trace windows, triggers, what came before a crash or
 * an out-of-memory (ana_flight.c) ------------------------------------------ */

enum {
    GPUFL__ANA_INCIDENT_NONE = 0,
    GPUFL__ANA_INCIDENT_CRASH, /* the session's crash (gpufl_trace_get_crash) */
    GPUFL__ANA_INCIDENT_OOM,   /* a failed allocation, or else a trigger of kind "oom" */
};

enum {
    GPUFL__ANA_LAST_KERNEL = 0,
    GPUFL__ANA_LAST_COPY,
    GPUFL__ANA_LAST_MEMSET,
    GPUFL__ANA_LAST_SCOPE_END,
    GPUFL__ANA_LAST_ALLOC,
    GPUFL__ANA_LAST_FREE,
    GPUFL__ANA_LAST_FAILED_ALLOC,
    GPUFL__ANA_LAST_KIND_COUNT
};

/* A GPUFL__ANA_LAST_* kind as the JSON report spells it ("scope_end") and
 * as people read it ("scope end"); "unknown" / "?" out of range. */
const char *gpufl__ana_last_key(uint8_t what);
const char *gpufl__ana_last_label(uint8_t what);

/* One event before the incident. */
typedef struct gpufl__ana_last_event {
    uint64_t ts_ns;  /* start (kernels, copies, memsets, allocations), end (a scope's) */
    uint64_t end_ns; /* of an interval; ts_ns for the others */
    uint8_t what;    /* GPUFL__ANA_LAST_* */
    uint32_t name;   /* string id: kernel or scope name; 0 none */
    uint64_t bytes;  /* copies, memsets, allocations, frees */
    uint32_t device; /* UINT32_MAX: a host event (scope) */
    uint32_t tid;    /* 0 unknown */
} gpufl__ana_last_event;

#define GPUFL__ANA_LAST_EVENTS 20
#define GPUFL__ANA_OOM_LARGEST 5

typedef struct gpufl__ana_flight {
    /* trace windows: how much of the session device tracing covered */
    size_t nwindows;
    uint64_t traced_ns;  /* the windows' union, clipped to the session */
    uint64_t session_ns; /* the session's length (its end, or its last recorded time) */
    /* the incident, when there is one */
    uint8_t incident;                                   /* GPUFL__ANA_INCIDENT_* */
    uint64_t incident_ns;                               /* when */
    uint32_t incident_tid;                              /* the thread concerned, 0 unknown */
    uint32_t incident_device;                           /* the device concerned, UINT32_MAX unknown */
    gpufl__ana_last_event last[GPUFL__ANA_LAST_EVENTS]; /* newest last */
    uint32_t nlast;
    /* out of memory: the failed allocation (if one was recorded) and the
     * allocations live at that moment on its device */
    bool has_failed;
    uint64_t failed_bytes, failed_ns;
    uint64_t live_count, live_bytes;
    gpufl__ana_allocation largest[GPUFL__ANA_OOM_LARGEST]; /* largest first */
    uint32_t nlargest;
} gpufl__ana_flight;

int gpufl__analyze_flight(const gpufl_trace *t, gpufl__ana_flight *out) __attribute__((warn_unused_result));

typedef struct gpufl__ana_report {
    gpufl__ana_options options; /* as used (defaults filled in) */
    gpufl__ana_summary summary;
    gpufl__ana_scopes scopes;
    gpufl__ana_hotspots hotspots;
    gpufl__ana_copies copies;
    gpufl__ana_idle idle;
    gpufl__ana_launches launches;
    gpufl__ana_memory memory;
    gpufl__ana_counters counters;
    /* Appended fields. */
    gpufl__ana_ops ops;
    gpufl__ana_flight flight;
    gpufl__ana_mem_layers mem_layers;
    gpufl__ana_mem_peaks mem_peaks;
    gpufl__ana_leaks leaks;
    gpufl__ana_sass sass;
    struct gpufl__nccl_report *nccl;      /* NCCL kernels (ana_nccl.h); NULL when the trace has none */
    struct gpufl__ana_critpath *critpath; /* the step's critical path (ana_critpath.h); NULL without a
                                             repeated outermost scope or NVTX range */
} gpufl__ana_report;

/* o may be NULL (defaults). */
/* The layers, peaks and leaks of memory (r->mem_layers, mem_peaks, leaks)
 * over one set of memory series built once; lo as for gpufl__analyze_leaks
 * (NULL: the defaults). What the report and `gpufl mem analyze` both run. */
int gpufl__analyze_memory_views(const gpufl_trace *t, const gpufl__ana_leak_options *lo, gpufl__ana_report *r)
    __attribute__((warn_unused_result));

int gpufl__analyze_report(const gpufl_trace *t, const gpufl__ana_options *o, gpufl__ana_report *out)
    __attribute__((warn_unused_result));
void gpufl__ana_report_free(gpufl__ana_report *r);

#ifdef __cplusplus
}
#endif

#endif /* GPUFL_ANALYZE_ANALYSIS_H */
