/*
 * `gpufl diff`: two recorded sessions compared, as a pure function from
 * their analyses (analysis.h) to the plain result below. Renderers
 * (present/diff/diff_text.h, diff_json.h) and the command read only this result.
 *
 * What is compared:
 *  - the session: wall time, kernel time and launches;
 *  - each device (by index): GPU busy time and idle time (the device row of
 *    gpufl__ana_idle);
 *  - each kernel, matched by demangled name text (string ids differ between
 *    traces). Launch configurations of one name are kept together: a grid
 *    follows the problem size, so the same kernel given a new batch size is
 *    the same code doing different work, and splitting it by grid would show
 *    it as one kernel gone and one new, hiding the comparison. A kernel whose
 *    most common configuration changed is marked GPUFL__DIFF_F_CONFIG;
 *  - each scope and NVTX range, matched by tree, path ("step/forward") and
 *    NVTX domain;
 *  - shown, never judged: warp stall shares (PC samples) and PM sampling
 *    metrics (below).
 *
 * How a change is judged (the same for kernels and scopes; "value" is the
 * time per launch, or the wall time per scope instance):
 *  - change per item and its noise: for a kernel, each launch configuration
 *    that both sessions launched at least twice is compared like with like
 *    (ana_diff_configs.h): its launches are matched by their place in the
 *    program, whatever their counts, and the change is that of the same
 *    work, its noise twice the standard error from the MAD of the matched
 *    launches' ratios; the configurations' changes are averaged with the
 *    weights of their baseline GPU time. One name often covers several
 *    shapes, and one configuration several sizes, whose mix makes the
 *    spread of all launches useless as a measure of noise. Other kernels,
 *    and scopes, compare the medians: twice the standard error of their
 *    change, 2 * 1.2533 * sqrt(s_b^2 / n_b + s_c^2 / n_c), each run's
 *    spread s estimated as (p95 - p50) / 1.645 (for a normal distribution
 *    p95 is 1.645 sigma above the median; 1.2533 sigma / sqrt(n) is the
 *    standard error of a median). Unknown (noise_known false) when a side
 *    has a single value: that row is judged on the threshold alone;
 *  - per item: SLOWER when the change grew by more than the threshold and
 *    more than the noise; FASTER likewise downwards; else STEADY;
 *  - REGRESSED when the total grew by more than the threshold, by at least
 *    min_impact_pct of the baseline's kernel time (kernels) or wall time
 *    (scopes), and the growth is real: the count grew by more than the
 *    threshold (counts are exact), or the median grew by more than the
 *    noise. IMPROVED likewise downwards. A total that moved past the
 *    threshold without being real gets GPUFL__DIFF_F_NOISE; one real but
 *    under the impact floor, GPUFL__DIFF_F_SMALL;
 *  - a new kernel REGRESSED when its total is at least the impact floor, a
 *    vanished one IMPROVED likewise. New and vanished scopes are listed,
 *    never judged: a renamed annotation is not a slowdown, and the time it
 *    holds is judged through the kernels and the wall time;
 *  - the session's wall time: REGRESSED or IMPROVED past the threshold (one
 *    number per run: no spread to judge it by); a device's idle time:
 *    past the threshold and by at least min_impact_pct of the baseline's
 *    wall time. Busy time, kernel time and launches are shown, not judged
 *    (the kernels judge them in detail).
 *
 * Threads: any; it only reads its arguments, and buckets the two traces'
 * launches on a second thread of its own. Sizes: O(k log k) in the kernels
 * and scopes the reports list (hundreds to thousands), plus the like-for-
 * like comparison, linear in the launches (ana_diff_configs.h: 16 bytes
 * per launch of each trace while it runs).
 */
#ifndef GPUFL_ANALYZE_ANA_DIFF_H
#define GPUFL_ANALYZE_ANA_DIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analysis.h"

#define GPUFL__DIFF_DEFAULT_THRESHOLD_PCT 5.0
#define GPUFL__DIFF_DEFAULT_MIN_IMPACT_PCT 0.5

typedef struct gpufl__diff_options {
    double threshold_pct;  /* a change smaller than this is no change (5) */
    double min_impact_pct; /* of the baseline's kernel time (kernels) or wall time (scopes,
                               idle): a smaller change is too small to judge (0.5) */
} gpufl__diff_options;

void gpufl__diff_options_default(gpufl__diff_options *o);

/* Which sessions have the row. */
enum { GPUFL__DIFF_BOTH = 0, GPUFL__DIFF_NEW = 1, GPUFL__DIFF_GONE = 2 };

/* The judgment of a row (and of the whole diff). */
enum { GPUFL__DIFF_SAME = 0, GPUFL__DIFF_REGRESSED = 1, GPUFL__DIFF_IMPROVED = 2 };

/* The median per item (launch, instance). */
enum { GPUFL__DIFF_STEADY = 0, GPUFL__DIFF_SLOWER = 1, GPUFL__DIFF_FASTER = 2 };

/* Flags of a row. */
#define GPUFL__DIFF_F_COUNT 1u  /* the counts differ (launches, instances) */
#define GPUFL__DIFF_F_CONFIG 2u /* kernels: the most common launch configuration differs */
#define GPUFL__DIFF_F_NOISE 4u  /* the total moved past the threshold, within the noise */
#define GPUFL__DIFF_F_SMALL 8u  /* a real change past the threshold, under the impact floor */

/* A compared distribution: the baseline's and the candidate's values (a
 * side without the row has a zeroed dist) and the judgment above. */
typedef struct gpufl__diff_change {
    gpufl__ana_dist base, cand;
    uint8_t presence;  /* GPUFL__DIFF_BOTH, _NEW, _GONE */
    uint8_t verdict;   /* GPUFL__DIFF_SAME, _REGRESSED, _IMPROVED */
    uint8_t per_item;  /* GPUFL__DIFF_STEADY, _SLOWER, _FASTER */
    uint8_t flags;     /* GPUFL__DIFF_F_* */
    int64_t total_ns;  /* cand.total - base.total */
    int64_t p50_ns;    /* cand.p50 - base.p50 (0 unless both have it) */
    bool noise_known;  /* both sides have at least two values */
    uint64_t noise_ns; /* the noise judged, in ns: of p50_ns, or for a kernel compared
                               like for like item_noise_pct of the baseline's median (0
                               when unknown) */
    /* What per_item and the verdict were judged on: the change per item in %
     * of the baseline and its noise (in % too). For scopes and most kernels
     * p50_ns and noise_ns as percentages; for a kernel with launch
     * configurations that both sessions ran, like for like (see
     * gpufl__diff_kernel.matched_configs). */
    double item_pct, item_noise_pct;
} gpufl__diff_change;

typedef struct gpufl__diff_kernel {
    const char *name;                                  /* demangled name: text of a trace, valid while it is open */
    gpufl__diff_change time;                           /* GPU time per launch; n = launches */
    gpufl__ana_launch_config base_config, cand_config; /* the most common one of each side */
    uint32_t base_configs, cand_configs;               /* distinct configurations */
    /* Configurations (name, grid, block, registers, shared and local memory)
     * that both sessions launched at least twice. When there are any, the
     * change per launch is judged like for like: the change of each one
     * and its noise (ana_diff_configs.h), averaged with the weights of
     * their baseline GPU time; otherwise on the medians of all launches. */
    uint32_t matched_configs;
    /* Of those, the ones compared launch by launch: at least two of their
     * launches were matched by place in the program (ana_diff_pairs.h);
     * the others by their medians. */
    uint32_t paired_configs;
    uint64_t paired_launches; /* launches matched, over those configurations */
} gpufl__diff_kernel;

typedef struct gpufl__diff_scope {
    uint8_t tree;                      /* GPUFL__ANA_TREE_SCOPES or _NVTX */
    char *path;                        /* "step/forward" (owned) */
    const char *domain;                /* NVTX domain: text of a trace ("" the default domain) */
    gpufl__diff_change wall;           /* wall time per instance; n = instances */
    uint64_t base_gpu_ns, cand_gpu_ns; /* GPU time inside (gpu_ns) */
} gpufl__diff_scope;

/* A plain number of each session. */
typedef struct gpufl__diff_value {
    uint64_t base, cand;
    uint8_t verdict; /* GPUFL__DIFF_* (SAME for numbers that are not judged) */
} gpufl__diff_value;

typedef struct gpufl__diff_device {
    uint32_t device;
    uint8_t presence;          /* GPUFL__DIFF_BOTH, _NEW, _GONE */
    const char *name;          /* "NVIDIA H200", "" unknown: text of a trace */
    gpufl__diff_value busy_ns; /* not judged */
    gpufl__diff_value idle_ns; /* judged */
    gpufl__diff_value kernels; /* launches, not judged */
} gpufl__diff_device;

/* Warp stalls (PC samples) of the two sessions, informational (never a
 * verdict): a stall reason whose share of the session's samples, or of a
 * kernel's, moved by GPUFL__DIFF_STALL_MOVE_PCT points or more, and a
 * kernel whose top stall changed. Shares of kernels are known for their
 * top reasons only (ana_stalls.c keeps four): a reason outside a side's
 * top four has a share of -1 there (under that side's fourth). */
#define GPUFL__DIFF_STALL_MOVE_PCT 10.0
#define GPUFL__DIFF_STALL_MIN_SAMPLES 1000 /* a kernel with fewer on a side is not compared */

typedef struct gpufl__diff_stall {
    const char *kernel;              /* demangled name: text of a trace; NULL for the session's own shares */
    const char *reason;              /* text of a trace */
    double base_pct, cand_pct;       /* share of the samples (of the kernel or the session), -1 unknown */
    const char *base_top, *cand_top; /* kernels: each side's top stall */
} gpufl__diff_stall;

/* Hardware counters (range profiler) of the two sessions, informational
 * (never a verdict): for the ranges of all scopes together, then each
 * scope or NVTX range name both sessions measured, each metric both
 * counted whose value moved by GPUFL__DIFF_COUNTER_MOVE_PCT or more: a
 * percentage by that many points, anything else by that much of the
 * baseline's value. Summed metrics are compared per range (a session of
 * more steps has more bytes), the others as their weighted means. */
#define GPUFL__DIFF_COUNTER_MOVE_PCT 10.0

typedef struct gpufl__diff_counter {
    const char *scope;  /* text of a trace; NULL for all ranges together */
    const char *metric; /* CUPTI's name: text of a trace */
    double base, cand;  /* per range (summed metrics) or the mean, in the metric's unit */
    int unit;           /* GPUFL__HW_* (analysis.h) */
} gpufl__diff_counter;

/* PM sampling of the two sessions (ana_diff_pm.c), informational (never a
 * verdict): each (device, metric) of either session, its mean weighted by
 * sample length on each side, and whether it moved: by
 * GPUFL__DIFF_PM_MOVE_POINTS points or more for a percentage metric
 * (gpufl__ana_pm_unit), by GPUFL__DIFF_PM_MOVE_PCT % of the baseline's
 * mean or more for the others (any change from a mean of 0), and always
 * when only one session has it. */
#define GPUFL__DIFF_PM_MOVE_PCT 10.0
#define GPUFL__DIFF_PM_MOVE_POINTS 5.0

typedef struct gpufl__diff_pm_metric {
    uint32_t device;
    const char *metric;          /* the CUPTI metric name: text of a trace */
    uint8_t presence;            /* GPUFL__DIFF_BOTH, _NEW, _GONE */
    uint8_t unit;                /* GPUFL__PM_UNIT_* */
    bool moved;                  /* past the rule above */
    double base_mean, cand_mean; /* in the metric's unit; 0 on a side without it */
    double base_max, cand_max;
    uint64_t base_samples, cand_samples;
} gpufl__diff_pm_metric;
/* SASS metrics of the two sessions, informational (never a verdict): a
 * kernel both measured whose coalescing or active lanes (analysis.h, the
 * SASS metrics) moved by GPUFL__DIFF_SASS_MOVE_PCT points or more. */
#define GPUFL__DIFF_SASS_MOVE_PCT 10.0

typedef struct gpufl__diff_sass {
    const char *kernel;        /* demangled name: text of a trace */
    const char *metric;        /* "coalescing" or "active_lanes" */
    double base_pct, cand_pct; /* 0..100 */
} gpufl__diff_sass_row;

typedef struct gpufl__diff {
    gpufl__diff_options options; /* as used (defaults filled in) */
    gpufl__diff_value wall_ns;   /* judged */
    gpufl__diff_value kernel_ns; /* all kernels' GPU time, not judged */
    gpufl__diff_value launches;  /* all kernels, not judged */
    uint32_t ndevices;
    gpufl__diff_device *devices; /* by device index */
    uint32_t nkernels;
    gpufl__diff_kernel *kernels; /* by |time.total_ns| descending, then by the larger of
                                        the two totals descending, then name */
    bool kernels_partial;        /* a report listed fewer kernels than its session ran
                                        (options.top_kernels): only those were compared */
    uint32_t nscopes;
    gpufl__diff_scope *scopes; /* by tree, then path (a parent before its children),
                                        then domain */
    /* Counts of the rows above. */
    uint32_t regressions, improvements;                /* verdicts of kernels, scopes, devices and wall */
    uint32_t new_kernels, gone_kernels, count_changes; /* kernels */
    /* Warp stalls, when both sessions have PC samples (stalls_compared). */
    bool stalls_compared;
    uint32_t nstalls;
    gpufl__diff_stall *stalls; /* the session's reasons first, then kernels by name */
    /* Hardware counters, when both sessions have range metrics (counters_compared). */
    bool counters_compared;
    uint32_t ncounters;
    gpufl__diff_counter *counters; /* all ranges first, then scopes by name */

    /* PM sampling, when either session has PM samples (pm_compared). */
    bool pm_compared;
    uint32_t npm, pm_moved;
    gpufl__diff_pm_metric *pm; /* by device, then metric name */
    /* SASS metrics, when both sessions have them (sass_compared). */
    bool sass_compared;
    uint32_t nsass;
    gpufl__diff_sass_row *sass; /* by kernel, then metric */
} gpufl__diff;

/*
 * Compares baseline b (of trace bt) with candidate c (of trace ct). o may be
 * NULL (the defaults); its fields are taken as given (0 is allowed: any
 * change past the noise counts). The result refers to names of both traces:
 * keep them open while it is used. Returns 0, or GPUFL_ENOMEM
 * (GPUFL_EINVAL for a NULL argument, or an option negative or not a
 * number) with *out zeroed.
 */
int gpufl__diff_reports(const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                        const gpufl__ana_report *c, const gpufl__diff_options *o, gpufl__diff *out)
    __attribute__((warn_unused_result));
void gpufl__diff_free(gpufl__diff *d);

/* The stall rows of out from the two reports' PC samples (ana_diff_stalls.c).
 * 0 or GPUFL_ENOMEM. */
int gpufl__diff_stalls(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                       const gpufl__ana_report *c) __attribute__((warn_unused_result));

/* The counter rows of out from the two reports' range metrics
 * (ana_diff_counters.c). 0 or GPUFL_ENOMEM. */
int gpufl__diff_counters(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                         const gpufl__ana_report *c) __attribute__((warn_unused_result));

/* The PM rows of out from the two traces' PM samples (ana_diff_pm.c).
 * 0 or GPUFL_ENOMEM. */
int gpufl__diff_pm(gpufl__diff *out, const gpufl_trace *bt, const gpufl_trace *ct) __attribute__((warn_unused_result));
/* The SASS rows of out from the two reports' SASS metrics (ana_diff_sass.c).
 * 0 or GPUFL_ENOMEM. */
int gpufl__diff_sass(gpufl__diff *out, const gpufl_trace *bt, const gpufl__ana_report *b, const gpufl_trace *ct,
                     const gpufl__ana_report *c) __attribute__((warn_unused_result));

/* Judges ch as a row of a diff is judged (above), for values that are not
 * one session's launches: `gpufl fleet regress` compares the sessions of
 * two periods (n = sessions, the values each session's time, total the
 * mean per session). The change per item and its noise come from the
 * medians; the counts never make a change real (more sessions in a period
 * is not a slowdown). base, cand and presence set; impact_ns the min
 * impact; judge_one_sided as for kernels (true) or scopes (false). */
void gpufl__diff_judge_medians(gpufl__diff_change *ch, double threshold_pct, uint64_t impact_ns, bool judge_one_sided);

/* The words of the enums above, for renderers: "both", "new", "gone";
 * "same", "regressed", "improved"; "steady", "slower", "faster". */
const char *gpufl__diff_presence_name(uint8_t presence);
const char *gpufl__diff_verdict_name(uint8_t verdict);
const char *gpufl__diff_per_item_name(uint8_t per_item);

#endif /* GPUFL_ANALYZE_ANA_DIFF_H */
