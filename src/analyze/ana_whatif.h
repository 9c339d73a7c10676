/*
 * What-if: the dependency graph (ana_graph.h) re-scheduled with a change,
 * and what a step then takes (issue 18).
 *
 * The schedule is a discrete-event replay in dependency order:
 *
 *   host    each thread issues its calls, syncs and marks in recorded
 *           order; the gap before each (the host's own work) is the
 *           recorded one, scaled by host_gap_scale when positive; a
 *           thread's first node keeps its recorded time
 *   calls   take their recorded time; a synchronous copy's call returns
 *           as long after the copy ends as it did
 *   work    starts when every constraint allows, plus its recorded
 *           residual: its call began + the device's shortest recorded
 *           launch latency, the previous work on its stream ended, the
 *           work it waits on (events, graphs, copy engine) ended. The
 *           residual (recorded start - latest recorded constraint) is what
 *           the graph cannot explain (the GPU's own scheduling, concurrent
 *           kernels sharing SMs): it is kept, so an unchanged replay gives
 *           the recorded times
 *   syncs   end when their target work has ended, plus the recorded
 *           wake-up delay; a sync that did not wait keeps its duration
 *
 * Concurrency: work on different streams may overlap without limit (no
 * model of SMs); copies of one direction on a device keep the recorded
 * copy-engine order when the recording shows them never overlapping.
 *
 * Changes: a kernel's duration divided by `speedup` (name or ~regex); a
 * sync removed (no duration, no wait); copies moved to a stream of their
 * own per device and direction (overlap_copies: a host-to-device copy
 * still precedes the first work after it on its old stream, the work that
 * reads it; a device-to-host copy still follows the last work before it,
 * the work that wrote it; syncs still wait for the same copies); host gaps
 * scaled.
 *
 * Threads: any; no shared state.
 */
#ifndef GPUFL_ANALYZE_ANA_WHATIF_H
#define GPUFL_ANALYZE_ANA_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/ana_graph.h"

typedef struct gpufl__whatif_change {
    const char *kernel;     /* NULL: none; "~REGEX" (POSIX extended) or an exact demangled name */
    double speedup;         /* with kernel: > 0 */
    const uint64_t *remove; /* sync ids (rows of the syncs table, as gpufl graph lists them) */
    size_t nremove;
    bool overlap_copies;
    double host_gap_scale; /* >= 0; 1: unchanged */
} gpufl__whatif_change;

/* The no-change change. */
static inline gpufl__whatif_change gpufl__whatif_none(void)
{
    return (gpufl__whatif_change){.speedup = 1, .host_gap_scale = 1};
}

typedef struct gpufl__sched {
    size_t n;
    uint64_t *start, *end; /* per node */
    uint64_t *ready;       /* work: when its constraints allowed it to start (start - residual) */
    uint32_t *bind;        /* the predecessor whose constraint set the start (a sync: its end), or GPUFL__GNONE */
    uint8_t *bind_kind;    /* GPUFL__GE_* of that */
    uint32_t *end_bind;    /* a synchronous copy's call: the copy, when its end set the call's; else GPUFL__GNONE */
    uint32_t *host_pred;   /* host nodes: the previous host node of the thread, or GPUFL__GNONE */
    size_t changed;        /* kernels sped up */
} gpufl__sched;

/* Checks a change against the graph: speedup > 0 with a kernel that
 * matches some kernel, a valid regex, known sync ids that block the host,
 * host_gap_scale >= 0. Returns 0, or GPUFL_EINVAL with the problem in err. */
int gpufl__whatif_check(const gpufl__graph *g, const gpufl__whatif_change *c, char *err, size_t len)
    __attribute__((warn_unused_result));

/* The schedule of g under change c (checked first). Returns 0,
 * GPUFL_EINVAL (a bad change: err says which), GPUFL_ECORRUPT (the
 * dependencies form a cycle: err says so) or GPUFL_ENOMEM; *s is zeroed
 * on failure (safe to free). */
int gpufl__whatif_schedule(const gpufl__graph *g, const gpufl__whatif_change *c, gpufl__sched *s, char *err, size_t len)
    __attribute__((warn_unused_result));
void gpufl__sched_free(gpufl__sched *s);

/* ---- steps ------------------------------------------------------------------ */

typedef struct gpufl__step {
    uint32_t begin, end; /* mark nodes */
} gpufl__step;

/* The occurrences of the scope or NVTX range called name (NULL: the most
 * repeated name of a scope or range that begins no other's inside of it,
 * preferring one that says "step"), in begin order. *name_id: the name's
 * string id. Returns 0, GPUFL_ENOTFOUND (no such name; none repeated) or
 * GPUFL_ENOMEM. */
int gpufl__graph_steps(const gpufl__graph *g, const char *name, gpufl__step **steps, size_t *n, uint32_t *name_id)
    __attribute__((warn_unused_result));

/* What the steps took in a schedule: step times, and over the steps'
 * windows the GPU's busy time (the union of all work) and its idle time
 * split: `host` the GPU waited for work not yet launched (the work that
 * ended the gap was held back by its launch, or none came before the
 * step ended), `other` the rest; sync_ns: time the steps' threads spent
 * in syncs. */
typedef struct gpufl__step_stats {
    size_t steps;
    uint64_t median_ns, total_ns, min_ns, max_ns;
    uint64_t busy_ns, idle_host_ns, idle_other_ns, sync_ns;
} gpufl__step_stats;

int gpufl__step_stats_of(const gpufl__graph *g, const gpufl__sched *s, const gpufl__step *steps, size_t n,
                         gpufl__step_stats *out) __attribute__((warn_unused_result));

#endif /* GPUFL_ANALYZE_ANA_WHATIF_H */
