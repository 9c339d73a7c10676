/*
 * `gpufl replay-check`: did two runs of a program do the same GPU work?
 * A pure function from two traces to the plain result below, which the
 * renderers (present/diff/replay_text.h, replay_json.h) and the command
 * read.
 *
 * What is compared, as sequences ("lanes"), each between A and B:
 *  - per stream: its kernels, copies and memsets in the order they ran. A
 *    kernel is its demangled name and launch configuration (grid, block,
 *    registers, static and dynamic shared memory) and whether it ran as a
 *    node of a CUDA graph; a copy its direction, memory kinds and bytes; a
 *    memset its memory kind, bytes and value. Times are never compared.
 *    Stream ids differ between runs (CUPTI numbers streams as they are
 *    created), so streams are matched per device by order of first use:
 *    the k-th stream of device d to start work in A is compared with the
 *    k-th of B, unless an explicit pair (stream_map) says otherwise;
 *  - per device: driver allocations and frees (mem_alloc, mem_free: kind,
 *    bytes, failed; addresses are left out, they move between runs), the
 *    blocks of a framework's caching allocator (mem_alloc/mem_free flagged
 *    framework) and the allocator's own records (`allocator`: reason,
 *    allocated and reserved bytes), except those of reason "sample", which
 *    are taken at an interval of time and so come in a number that depends
 *    on how fast the run went;
 *  - the number of CUDA graph launches (whole sessions only: graph launch
 *    events carry no stream).
 *
 * Sizes: a lane is held as three 32-bit columns per op (the op's key, its
 * index, its row): 12 bytes per op and side, so 1 M kernels cost 24 MB for
 * the pair. Keys (distinct op descriptions) are interned across both
 * traces in one hash table. The comparison is linear: the first divergence
 * is found by scanning both lanes in step; from there a bounded window
 * (`window` ops on each side) is searched for the nearest place where both
 * lanes agree again for 8 ops, which says whether ops were inserted,
 * deleted or changed, and the scan goes on from there. A divergence that
 * does not re-synchronise within the window ends the alignment (the rest
 * is counted as unaligned); at most 10000 divergences are aligned per
 * lane. Counts per key (how many more launches of which kernel) come from
 * one histogram pass per differing lane.
 *
 * Threads: any; it only reads the traces. Failure leaves *out empty.
 */
#ifndef GPUFL_ANALYZE_ANA_REPLAY_H
#define GPUFL_ANALYZE_ANA_REPLAY_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufl/trace.h"

/* What an op is. */
enum {
    GPUFL__RP_KERNEL = 1,
    GPUFL__RP_COPY,
    GPUFL__RP_MEMSET,
    GPUFL__RP_ALLOC,     /* a driver allocation, or a framework block */
    GPUFL__RP_FREE,      /* their release */
    GPUFL__RP_ALLOCATOR, /* an allocator record */
};

/* What a lane is. */
enum {
    GPUFL__RP_LANE_STREAM = 1, /* a stream's kernels, copies and memsets */
    GPUFL__RP_LANE_ALLOCS,     /* a device's driver allocations and frees */
    GPUFL__RP_LANE_BLOCKS,     /* a device's framework blocks */
    GPUFL__RP_LANE_ALLOCATOR,  /* a device's allocator records */
};

/* An op's description: equal keys are the same op. */
typedef struct gpufl__rp_key {
    uint8_t what;                       /* GPUFL__RP_* */
    uint8_t kind;                       /* copy: gfl_copy_kind; memset, alloc, free: gfl_mem_kind */
    uint8_t src_kind, dst_kind;         /* copy: gfl_mem_kind of each side */
    uint8_t graph;                      /* kernel, copy, memset: 1 ran as a CUDA graph node */
    uint8_t failed;                     /* alloc: it failed */
    uint32_t grid[3], block[3];         /* kernel */
    uint32_t registers;                 /* kernel, per thread */
    uint32_t smem_static, smem_dynamic; /* kernel, bytes per block */
    uint32_t value;                     /* memset: the byte value */
    uint64_t bytes;                     /* copy, memset, alloc, free; allocator: allocated */
    uint64_t reserved;                  /* allocator */
    const char *name;                   /* kernel: demangled name; allocator: reason; else "" (owned by the result) */
} gpufl__rp_key;

/* Fields of two kernel keys that differ (gpufl__rp_lane.fields). */
enum {
    GPUFL__RP_F_GRID = 1,
    GPUFL__RP_F_BLOCK = 2,
    GPUFL__RP_F_REGISTERS = 4,
    GPUFL__RP_F_SMEM_STATIC = 8,
    GPUFL__RP_F_SMEM_DYNAMIC = 16,
    GPUFL__RP_F_GRAPH = 32,
};

/* How a lane first diverged (gpufl__rp_lane.change). */
enum {
    GPUFL__RP_SAME = 0,
    GPUFL__RP_CH_NAME,     /* one op for one: another kernel name */
    GPUFL__RP_CH_CONFIG,   /* one for one: the same kernel, another launch configuration (fields) */
    GPUFL__RP_CH_SIZE,     /* one for one: the same kind of op, other bytes or value */
    GPUFL__RP_CH_OTHER,    /* one for one: another kind of op */
    GPUFL__RP_CH_EXTRA,    /* B has ops A has not (inserted) */
    GPUFL__RP_CH_MISSING,  /* B lacks ops A has (deleted) */
    GPUFL__RP_CH_REPLACED, /* a run of A's ops replaced by a run of B's of another length */
    GPUFL__RP_CH_DIVERGED, /* no agreement again within the window */
    GPUFL__RP_CH_ONLY_A,   /* the lane exists in A only (a stream or device B lacks) */
    GPUFL__RP_CH_ONLY_B,
};

#define GPUFL__RP_RUN 8           /* equal ops on both sides that re-synchronise two lanes */
#define GPUFL__RP_NONE UINT64_MAX /* an index that is not there */

/* One line of a divergence shown like a diff: ' ' both, '-' A only, '+' B only. */
typedef struct gpufl__rp_line {
    char tag;
    uint32_t key;              /* into gpufl__replay.keys */
    uint64_t index_a, index_b; /* GPUFL__RP_NONE for the side without it */
    uint64_t at_ns;            /* when it started (allocations: happened), from its session's start */
} gpufl__rp_line;

/* One divergence of a lane (gpufl__rp_lane.divs). */
#define GPUFL__RP_NOKEY UINT32_MAX
typedef struct gpufl__rp_div {
    uint8_t change;          /* GPUFL__RP_CH_* */
    uint32_t fields;         /* GPUFL__RP_CH_CONFIG: GPUFL__RP_F_* that differ */
    uint64_t at_a, at_b;     /* indices in the lanes; GPUFL__RP_NONE past the end */
    uint64_t span_a, span_b; /* ops of each side in it */
    bool resynced;
    uint32_t key_a, key_b; /* the first op of each side in it; GPUFL__RP_NOKEY none */
} gpufl__rp_div;

/* A count that differs: how many ops of one key each side has in a lane. */
typedef struct gpufl__rp_count {
    uint32_t key;
    uint64_t n_a, n_b;
} gpufl__rp_count;

typedef struct gpufl__rp_lane {
    uint8_t kind;    /* GPUFL__RP_LANE_* */
    uint32_t device; /* A's device (streams: B's is device_b) */
    uint32_t device_b;
    bool has_a, has_b;
    uint32_t stream_a, stream_b; /* CUPTI stream ids (stream lanes) */
    bool mapped;                 /* paired by stream_map, not by order */
    uint64_t n_a, n_b;           /* ops compared */
    bool same;
    /* The first divergence (same false). */
    uint8_t change;          /* GPUFL__RP_CH_* */
    uint32_t fields;         /* GPUFL__RP_CH_CONFIG: GPUFL__RP_F_* that differ */
    uint64_t at_a, at_b;     /* its index in each lane; GPUFL__RP_NONE past the end */
    uint64_t span_a, span_b; /* ops of each side in it (0 and 0: not re-synchronised) */
    bool resynced;
    gpufl__rp_line *lines; /* the divergence with context */
    size_t nlines;
    /* The whole lane, along the alignment. */
    uint64_t divergences;              /* places where the lanes differ */
    uint64_t only_a, only_b;           /* ops of one side that the other lacks */
    uint64_t changed;                  /* ops changed one for one */
    uint64_t unaligned_a, unaligned_b; /* ops after a divergence that never re-synchronised */
    bool capped;                       /* more divergences than were aligned */
    gpufl__rp_div *divs;               /* the first `list` divergences (options), the first one first */
    size_t ndivs;
    /* Counts per key that differ, most different first (at most 10), and
     * how many keys differ in all. */
    gpufl__rp_count *counts;
    size_t ncounts, counts_total;
    /* A stream lane that diverged at its first op: a stream of B whose
     * first ops are this lane's A ops (the streams started in another
     * order); 0 none. */
    bool looks_like;
    uint32_t looks_like_b;
} gpufl__rp_lane;

typedef struct gpufl__rp_pair {
    uint32_t a, b; /* CUPTI stream ids */
} gpufl__rp_pair;

typedef struct gpufl__replay_options {
    uint64_t from_ns, to_ns; /* ops starting in [from, to) after each session's start */
    bool has_to;
    uint64_t from_op, to_op; /* ops of index [from_op, to_op) in each lane */
    bool has_to_op;
    const char *scope;           /* only ops launched inside this gpufl scope (NULL: all) */
    uint32_t occurrence;         /* its occurrence, from 1 in begin order; 0 every one */
    const regex_t *ignore_names; /* kernels whose name matches are left out of the lanes */
    bool ignore_config;          /* kernels compared by name only */
    bool ignore_allocs;          /* no allocation lanes */
    const gpufl__rp_pair *stream_map;
    size_t nstream_map;
    uint32_t context; /* common ops shown before and after a divergence (3) */
    uint32_t window;  /* ops searched on each side to re-synchronise (64) */
    uint32_t list;    /* divergences kept per lane (divs), the first included (10) */
} gpufl__replay_options;

void gpufl__replay_options_default(gpufl__replay_options *o);

typedef struct gpufl__replay {
    gpufl__rp_lane *lanes;
    size_t nlanes, ndiffer;
    gpufl__rp_key *keys;
    size_t nkeys;
    uint64_t ops_a, ops_b;       /* ops compared in all lanes */
    bool graphs_compared;        /* whole sessions: graph launch counts compared */
    uint64_t graphs_a, graphs_b; /* graph launch events */
    bool same;
} gpufl__replay;

/* Compares a with b. 0; GPUFL_EINVAL when the options name what a session
 * does not have (a stream of stream_map, the scope or its occurrence),
 * said in err with the side ("A" or "B"); GPUFL_ENOMEM. *out is left
 * empty on failure. */
int gpufl__replay_check(const gpufl_trace *a, const gpufl_trace *b, const gpufl__replay_options *o, gpufl__replay *out,
                        char *err, size_t err_len) __attribute__((warn_unused_result));
void gpufl__replay_free(gpufl__replay *r);

#endif /* GPUFL_ANALYZE_ANA_REPLAY_H */
