/*
 * The parts of `gpufl replay-check` (ana_replay.h) and how they meet:
 *   ana_replay_keys.c    op descriptions interned across both traces
 *   ana_replay_lanes.c   a trace's selected work cut into lanes (per stream,
 *                        per device's allocations), keyed
 *   ana_replay_match.c   lanes of A paired with lanes of B
 *   ana_replay_align.c   two lanes of keys aligned: divergences, re-sync
 *   ana_replay_counts.c  the keys whose counts differ in a lane
 *   ana_replay.c         the whole check, filling the result
 *
 * Threads: any; nothing shared.
 */
#ifndef GPUFL_ANALYZE_ANA_REPLAY_INTERNAL_H
#define GPUFL_ANALYZE_ANA_REPLAY_INTERNAL_H

#include "analyze/ana_replay.h"
#include "analyze/ana_util.h"

/* ---- keys (ana_replay_keys.c) ----------------------------------------------
 * Equal descriptions get one id, whichever trace they come from; names are
 * compared as text and copied. */
typedef struct gpufl__rp_keys {
    gpufl__rp_key *v;
    size_t n, cap;
    ana_map map; /* (hash, probe) -> id */
} gpufl__rp_keys;

/* The id of k (k->name: any string, copied when new) into *id. 0 or
 * GPUFL_ENOMEM (table unchanged). */
int gpufl__rp_key_intern(gpufl__rp_keys *ks, const gpufl__rp_key *k, uint32_t *id) __attribute__((warn_unused_result));
/* Hands the keys to the result (r->keys, r->nkeys) and empties ks. */
void gpufl__rp_keys_give(gpufl__rp_keys *ks, gpufl__replay *r);
void gpufl__rp_keys_free(gpufl__rp_keys *ks);
/* Frees keys as gpufl__rp_keys_give handed them out. */
void gpufl__rp_keys_free_array(gpufl__rp_key *v, size_t n);

/* ---- lanes of one trace (ana_replay_lanes.c) --------------------------------- */

/* One lane: per op its key, its index in the lane (counted before the
 * time, op-range and scope selection, so that an op keeps its number
 * whatever is selected) and its row in its table. */
typedef struct gpufl__rp_seq {
    uint32_t *key, *index, *row;
    size_t n, cap;
    uint32_t counted; /* ops seen so far, selected or not: the next index */
} gpufl__rp_seq;

typedef struct gpufl__rp_stream {
    uint32_t device, stream; /* CUPTI stream id */
    gpufl__rp_seq seq;
} gpufl__rp_stream;

typedef struct gpufl__rp_dev {
    bool present;
    gpufl__rp_seq allocs, blocks, allocator;
} gpufl__rp_dev;

typedef struct gpufl__rp_side {
    const gpufl_trace *t;
    const char *label;         /* "A" or "B" */
    gpufl__rp_stream *streams; /* in order of first use (start of their first op) */
    size_t nstreams;
    gpufl__rp_dev *devs; /* by device index */
    size_t ndevs;
} gpufl__rp_side;

/* Cuts t's work into lanes, keyed in ks, as o selects. 0; GPUFL_EINVAL
 * (the scope or its occurrence missing, said in err naming s->label);
 * GPUFL_ENOMEM. s->t and s->label are set by the caller; the rest is
 * filled (and freed by gpufl__rp_side_free whatever is returned). */
int gpufl__rp_side_build(gpufl__rp_side *s, gpufl__rp_keys *ks, const gpufl__replay_options *o, char *err,
                         size_t err_len) __attribute__((warn_unused_result));
void gpufl__rp_side_free(gpufl__rp_side *s);
/* When op `row` of table what (GPUFL__RP_*) happened, from the session's start. */
uint64_t gpufl__rp_op_at(const gpufl_trace *t, unsigned what, uint32_t row);

/* ---- pairing (ana_replay_match.c) -------------------------------------------- */

typedef struct gpufl__rp_match {
    uint8_t kind;                    /* GPUFL__RP_LANE_* */
    uint32_t device;                 /* of A's lane (or B's when A has none) */
    const gpufl__rp_seq *a, *b;      /* NULL: that side has no such lane */
    const gpufl__rp_stream *sa, *sb; /* stream lanes */
    bool mapped;
} gpufl__rp_match;

/* The lanes of a and b paired: streams per device by order of first use
 * after the explicit pairs of o->stream_map; allocation lanes by device
 * (none with o->ignore_allocs). *out: a new array. 0; GPUFL_EINVAL (a
 * stream of the map that a side lacks, or named twice, said in err);
 * GPUFL_ENOMEM. */
int gpufl__rp_match_lanes(const gpufl__rp_side *a, const gpufl__rp_side *b, const gpufl__replay_options *o,
                          gpufl__rp_match **out, size_t *n, char *err, size_t err_len)
    __attribute__((warn_unused_result));

/* ---- alignment (ana_replay_align.c) -------------------------------------------- */

#define GPUFL__RP_MAX_DIVERGENCES 10000 /* aligned per lane */

/* Where a divergence lies: positions in the two arrays aligned. */
typedef struct gpufl__rp_span {
    size_t at_a, at_b, span_a, span_b;
    bool resynced;
} gpufl__rp_span;

typedef struct gpufl__rp_align {
    bool same;
    size_t at_a, at_b;     /* the first divergence: positions in a and b */
    size_t span_a, span_b; /* its ops on each side */
    bool resynced;
    uint64_t divergences, only_a, only_b, changed, unaligned_a, unaligned_b;
    bool capped;
    size_t nspans; /* divergences recorded in spans (at most max_spans) */
} gpufl__rp_align;

/* Aligns a[0..na) with b[0..nb) (keys), re-synchronising within window
 * ops of each side; the first max_spans divergences go to spans (NULL
 * when 0). Cannot fail; O(na + nb) plus at most GPUFL__RP_MAX_DIVERGENCES
 * bounded searches. */
void gpufl__rp_align_keys(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t window,
                          gpufl__rp_span *spans, size_t max_spans, gpufl__rp_align *out);

/* ---- counts (ana_replay_counts.c) --------------------------------------------- */

/* The keys whose counts differ between a and b (nkeys: every key id is
 * below it) into lane->counts (the `keep` most different) and
 * lane->counts_total. 0 or GPUFL_ENOMEM. */
int gpufl__rp_count_keys(const gpufl__rp_seq *a, const gpufl__rp_seq *b, size_t nkeys, size_t keep,
                         gpufl__rp_lane *lane) __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_REPLAY_INTERNAL_H */
